/** Signing in to a test server's dashboard the way a browser does: a one-time link, then its cookie. */
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

/** Follows a new sign-in link; answers the session cookie (`prospecta_session=…`) it set. */
export async function signIn(app: TestApp, workspaceId: string, cookie?: string): Promise<string> {
  const res = await fetch(await signInLink(app, workspaceId), { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} });
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
