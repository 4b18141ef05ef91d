/**
 * Signing in to a test server's dashboard the way a browser does: a one-time link opens a page,
 * whose "Sign in" form posts the link back; the answer sets the session cookie.
 */
import { expect } from 'vitest';
import { freePort, startTestApp, type TestApp } from './app.ts';
import { startAuthorizationServer, type AuthorizationServer } from './authorization-server.ts';

/** The `name=value` of a Set-Cookie header for `name`, or undefined. */
export function cookieFrom(res: Response, name: string): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))?.split(';')[0];
}

/** A fresh one-time link, on the test server's own address. */
export async function signInLink(app: TestApp, workspaceId: string): Promise<string> {
  const { url } = await app.services.signInLinks.issue(workspaceId);
  return app.url + new URL(url).pathname + new URL(url).search;
}

/** Posts a link's "Sign in" form as its page would (same origin); answers the response. */
export async function redeemLink(app: TestApp, link: string, headers: Record<string, string> = { Origin: app.url }): Promise<Response> {
  const token = new URL(link).searchParams.get('token') ?? '';
  return fetch(`${app.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ token }).toString(),
  });
}

/** Opens a new sign-in link and presses its "Sign in"; answers the session cookie (`prospecta_session=…`) it set. */
export async function signIn(app: TestApp, workspaceId: string, cookie?: string): Promise<string> {
  const link = await signInLink(app, workspaceId);
  const opened = await fetch(link, { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} });
  expect(opened.status).toBe(200);
  expect(await opened.text()).toContain('<form method="post" action="/dashboard/login">');
  const res = await redeemLink(app, link, { Origin: app.url, ...(cookie ? { Cookie: cookie } : {}) });
  expect(res.status).toBe(303);
  const session = cookieFrom(res, 'prospecta_session');
  expect(session).toBeDefined();
  return session!;
}

/**
 * A test app whose dashboard signs in at a real authorization server (oidc-provider on loopback),
 * as its client `dashboard`: PUBLIC_URL is the app's own address, known before it starts.
 */
export async function startAppWithIssuer(): Promise<{ app: TestApp; issuer: AuthorizationServer; publicUrl: string }> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const issuer = await startAuthorizationServer({
    resource: `${publicUrl}/mcp`,
    clients: {},
    webClients: { dashboard: { redirectUris: [`${publicUrl}/dashboard/auth/callback`] } },
  });
  const app = await startTestApp(
    { PUBLIC_URL: publicUrl, OAUTH_ISSUER: issuer.issuer, OAUTH_CLIENT_ID: 'dashboard', OAUTH_CLIENT_SECRET: 'dashboard-secret' },
    { port },
  );
  return { app, issuer, publicUrl };
}
