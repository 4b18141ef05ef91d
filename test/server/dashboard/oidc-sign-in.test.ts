/**
 * "Sign in with …" against a real authorization server (oidc-provider on loopback): the
 * authorization-code flow with PKCE, driven as a browser would, redirect by redirect, with a
 * cookie jar per origin and the issuer's development login and consent forms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestApp, type TestApp } from '../../helpers/app.ts';
import { commands } from '../../../server/cli/commands.ts';
import { Members } from '../../../server/auth/members.ts';
import type { AuthorizationServer } from '../../helpers/authorization-server.ts';
import { startAppWithIssuer } from '../../helpers/dashboard.ts';

/** A browser's cookies and redirects, by origin (paths ignored: each origin here is one app). */
class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  cookies(origin: string): string {
    return [...(this.jars.get(origin) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** One request, its cookies stored; no redirect followed. */
  async send(url: string, init: RequestInit = {}): Promise<Response> {
    const { origin } = new URL(url);
    const headers = new Headers(init.headers);
    const cookie = this.cookies(origin);
    if (cookie) headers.set('Cookie', cookie);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      const removed = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (removed) jar.delete(name.trim());
      else jar.set(name.trim(), value);
    }
    return res;
  }

  /** Follows redirects from `url` until a page answers; returns it and its address. */
  async go(url: string, init: RequestInit = {}): Promise<{ res: Response; url: string }> {
    let res = await this.send(url, init);
    for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 20; hops++) {
      url = new URL(res.headers.get('location')!, url).href;
      res = await this.send(url);
    }
    return { res, url };
  }

  /** Answers the issuer's development login form as `login`, and its consent form. */
  async signInAtIssuer(issuerPage: string, login: string): Promise<{ res: Response; url: string }> {
    const form = (body: Record<string, string>) => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    });
    let at = await this.go(issuerPage, form({ prompt: 'login', login, password: 'x' }));
    if (at.url.includes('/interaction/')) at = await this.go(at.url, form({ prompt: 'consent' }));
    return at;
  }
}

let issuer: AuthorizationServer;
let app: TestApp;
let publicUrl: string;

beforeAll(async () => {
  ({ app, issuer, publicUrl } = await startAppWithIssuer());
});
afterAll(() => app.close());

/** From the sign-in page's button to the issuer's login form. */
async function startSignIn(browser: Browser): Promise<string> {
  const page = await (await browser.send(`${publicUrl}/dashboard/login`)).text();
  const host = new URL(issuer.issuer).host;
  expect(page).toContain(`Sign in with ${host}`);
  const { res, url } = await browser.go(`${publicUrl}/dashboard/auth/start`);
  expect(res.status).toBe(200);
  expect(url).toMatch(new RegExp(`^${issuer.issuer}/interaction/`));
  return url;
}

describe('OIDC sign-in', () => {
  it('a new subject signs up on the trial plan and lands on the dashboard, signed in', async () => {
    const browser = new Browser();
    const { res, url } = await browser.signInAtIssuer(await startSignIn(browser), 'alice');
    expect(url).toBe(`${publicUrl}/dashboard`);
    expect(res.status).toBe(200);
    const session = await browser.send(`${publicUrl}/dashboard/session`);
    const info = (await session.json()) as { workspaceId: string };
    expect(info).toMatchObject({ via: 'oidc', who: 'alice@example.com', workspaceName: 'alice@example.com' });
    const credits = await browser.send(`${publicUrl}/dashboard/api/credits`);
    expect(((await credits.json()) as { plan: { name: string } }).plan.name).toBe('trial');

    // The same person again: the same workspace, a new session.
    const again = new Browser();
    await again.signInAtIssuer(await startSignIn(again), 'alice');
    expect(((await (await again.send(`${publicUrl}/dashboard/session`)).json()) as { workspaceId: string }).workspaceId).toBe(info.workspaceId);
  });

  it('a linked member signs in to the workspace it was added to', async () => {
    const { workspaceId } = await app.workspace();
    await app.services.members.add(issuer.issuer, 'bruno', workspaceId);
    const browser = new Browser();
    await browser.signInAtIssuer(await startSignIn(browser), 'bruno');
    expect(((await (await browser.send(`${publicUrl}/dashboard/session`)).json()) as { workspaceId: string }).workspaceId).toBe(workspaceId);
  });

  it('a callback from another browser (no sign-in cookie, or another state) is refused', async () => {
    const browser = new Browser();
    await startSignIn(browser);
    const stranger = new Browser();
    const res = await stranger.send(`${publicUrl}/dashboard/auth/callback?code=abc&state=xyz`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('not started in this browser');
    expect(stranger.cookies(publicUrl)).not.toContain('prospecta_session');
  });

  it('an error text the callback is sent is not shown on the page', async () => {
    const browser = new Browser();
    await startSignIn(browser);
    const res = await browser.send(`${publicUrl}/dashboard/auth/callback?error=${encodeURIComponent('Your account is locked: call +1 555 0100')}&state=x`);
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('the issuer did not complete the sign-in');
    expect(page).not.toContain('555');
  });

  it('a refusal at the issuer says the sign-in was cancelled', async () => {
    const browser = new Browser();
    await startSignIn(browser);
    const res = await browser.send(`${publicUrl}/dashboard/auth/callback?error=access_denied&state=whatever`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('cancelled or refused');
  });
});

describe('removing a member', () => {
  const noop = () => {};
  const post = (browser: Browser, path: string, body: unknown) =>
    browser.send(`${publicUrl}${path}`, { method: 'POST', headers: { Origin: publicUrl, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  it('ends its dashboard session at once and revokes the keys that session created, still listed for the owner', async () => {
    const { workspaceId } = await app.workspace();
    await app.services.members.add(issuer.issuer, 'carla', workspaceId);
    const browser = new Browser();
    await browser.signInAtIssuer(await startSignIn(browser), 'carla');
    const minted = await post(browser, '/dashboard/api/keys', { name: 'on my way out' });
    expect(minted.status).toBe(201);
    const { keyId, apiKey } = (await minted.json()) as { keyId: string; apiKey: string };
    expect((await app.request('GET', '/v1/api/credits', { headers: { Authorization: `Bearer ${apiKey}` } })).status).toBe(200);

    const removed = await commands['member remove']!.run(app.services, { workspace: workspaceId, subject: 'carla', issuer: issuer.issuer }, noop);
    expect(removed).toMatchObject({ removed: true, revokedKeys: [keyId] });

    expect((await browser.send(`${publicUrl}/dashboard/api/credits`)).status).toBe(401);
    expect((await browser.send(`${publicUrl}/dashboard/session`)).status).toBe(401);
    expect((await app.request('GET', '/v1/api/credits', { headers: { Authorization: `Bearer ${apiKey}` } })).status).toBe(401);
    const keys = await app.services.keys.list(workspaceId);
    expect(keys.find((k) => k.keyId === keyId)?.revokedAt).not.toBeNull();
  });

  it('ends it even when another instance removed the member (no cache of this one is told)', async () => {
    const { workspaceId } = await app.workspace();
    await app.services.members.add(issuer.issuer, 'davi', workspaceId);
    const browser = new Browser();
    await browser.signInAtIssuer(await startSignIn(browser), 'davi');
    expect((await browser.send(`${publicUrl}/dashboard/api/credits`)).status).toBe(200);
    // Another instance over the same store: its own member cache, no announcement reaches this one.
    const elsewhere = new Members(app.services.store, 60_000);
    expect(await elsewhere.remove(issuer.issuer, 'davi', workspaceId)).toBe(true);
    expect((await browser.send(`${publicUrl}/dashboard/api/credits`)).status).toBe(401);
    expect((await post(browser, '/dashboard/api/keys', { name: 'too late' })).status).toBe(401);
    expect((await app.services.keys.list(workspaceId)).some((k) => k.name === 'too late')).toBe(false);
  });
});

describe('OIDC sign-in with the issuer down', () => {
  it('shows a page that says the sign-in service did not answer', async () => {
    const closed = await freePort();
    const down = await startTestApp({ OAUTH_ISSUER: `http://127.0.0.1:${closed}`, OAUTH_CLIENT_ID: 'dashboard', OAUTH_FETCH_TIMEOUT_MS: '2000' });
    try {
      const res = await fetch(`${down.url}/dashboard/auth/start`, { redirect: 'manual' });
      expect(res.status).toBe(502);
      const page = await res.text();
      expect(page).toContain(`The sign-in service at 127.0.0.1:${closed} did not answer`);
      expect(page).toContain('one-time link');
    } finally {
      await down.close();
    }
  });
});
