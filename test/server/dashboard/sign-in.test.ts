/**
 * Signing in to the dashboard over real HTTP: one-time links, the session cookie and its flags,
 * rotation, sign-out, forged and ended sessions, the pages' security headers and files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDLE_MS, Sessions } from '../../../server/dashboard/sessions.ts';
import { LINK_TTL_MS, SignInLinks } from '../../../server/dashboard/sign-in-links.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { cookieFrom, redeemLink, signIn, signInLink } from '../../helpers/dashboard.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const get = (path: string, cookie?: string) => fetch(app.url + path, { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} });

describe('one-time sign-in links', () => {
  it('opening a link shows a "Sign in" form and neither signs in nor spends the link', async () => {
    const { workspaceId } = await app.workspace();
    const link = await signInLink(app, workspaceId);
    // A mail scanner's prefetch, then a cross-site navigation: neither signs in.
    for (let i = 0; i < 2; i++) {
      const opened = await fetch(link, { redirect: 'manual', headers: { 'Sec-Fetch-Site': 'cross-site' } });
      expect(opened.status).toBe(200);
      expect(cookieFrom(opened, 'prospecta_session')).toBeUndefined();
      const page = await opened.text();
      expect(page).toMatch(/<form method="post" action="\/dashboard\/login">\s*<input type="hidden" name="token" value="[\w-]{43}">\s*<button type="submit"[^>]*>Sign in<\/button>/);
      expect(page).not.toMatch(/<script/);
      expect(opened.headers.get('content-security-policy')).toContain("form-action 'self'");
      expect(opened.headers.get('cache-control')).toBe('no-store');
    }
    // Still unspent: the page's own post signs in.
    expect((await redeemLink(app, link)).status).toBe(303);
  });

  it('the link page’s post is refused from another site (login CSRF), and does not spend the link', async () => {
    const { workspaceId } = await app.workspace();
    const link = await signInLink(app, workspaceId);
    const refused: Array<Record<string, string>> = [{ Origin: 'https://evil.example' }, {}, { Origin: 'null', 'Sec-Fetch-Site': 'cross-site' }];
    for (const headers of refused) {
      const res = await redeemLink(app, link, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(cookieFrom(res, 'prospecta_session')).toBeUndefined();
    }
    // A form posted from the no-referrer page itself: `Origin: null`, vouched for by Sec-Fetch-Site.
    expect((await redeemLink(app, link, { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' })).status).toBe(303);
  });

  it('sign in once, with an HttpOnly, SameSite=Lax cookie scoped to /dashboard, then serve the app', async () => {
    const { workspaceId } = await app.workspace();
    const res = await redeemLink(app, await signInLink(app, workspaceId));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/dashboard');
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('prospecta_session='))!;
    expect(setCookie).toMatch(/; path=\/dashboard/);
    expect(setCookie).toMatch(/; samesite=lax/);
    expect(setCookie).toMatch(/; httponly/);
    // PUBLIC_URL is http here: a Secure cookie would never come back.
    expect(setCookie).not.toMatch(/; secure/);

    const page = await get('/dashboard', cookieFrom(res, 'prospecta_session'));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/<script type="module" src="\/dashboard\/assets\/main-\w+\.js"><\/script>/);
    expect(html).not.toMatch(/<script>|<script type="module">/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');

    const script = html.match(/src="(\/dashboard\/assets\/[^"]+)"/)![1]!;
    const asset = await fetch(app.url + script, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(asset.headers.get('content-encoding')).toBe('gzip');
    expect((await get('/dashboard/assets/nothing-here.js')).status).toBe(404);
  });

  it('a used, expired or forged link shows the sign-in page saying so, and starts no session', async () => {
    const { workspaceId } = await app.workspace();
    const link = await signInLink(app, workspaceId);
    expect((await redeemLink(app, link)).status).toBe(303);
    const expired = await new SignInLinks(app.services.store, app.url, () => Date.now() - LINK_TTL_MS - 1000).issue(workspaceId);
    const cases: Array<[string, RegExp]> = [
      [link, /already used/],
      [app.url + new URL(expired.url).pathname + new URL(expired.url).search, /has expired/],
      [`${app.url}/dashboard/login?token=${'A'.repeat(43)}`, /not valid/],
      [`${app.url}/dashboard/login?token=<script>`, /not valid/],
    ];
    for (const [url, message] of cases) {
      // Said when the link is opened, and again if its form is posted anyway.
      for (const res of [await fetch(url, { redirect: 'manual' }), await redeemLink(app, url)]) {
        expect(res.status, url).toBe(400);
        expect(cookieFrom(res, 'prospecta_session'), url).toBeUndefined();
        const html = await res.text();
        expect(html).toMatch(message);
        expect(html).toContain('npx prospecta dashboard link');
      }
    }
  });

  it('two clicks on one link racing sign in one browser', async () => {
    const { workspaceId } = await app.workspace();
    const link = await signInLink(app, workspaceId);
    const statuses = (await Promise.all([1, 2, 3].map(() => redeemLink(app, link)))).map((r) => r.status).sort();
    expect(statuses).toEqual([303, 400, 400]);
  });

  it('a new sign-in ends the session the browser had (a new id each time)', async () => {
    const { workspaceId } = await app.workspace();
    const first = await signIn(app, workspaceId);
    const second = await signIn(app, workspaceId, first);
    expect(second).not.toBe(first);
    expect((await app.request('GET', '/dashboard/api/credits', { headers: { Cookie: first } })).status).toBe(401);
    expect((await app.request('GET', '/dashboard/api/credits', { headers: { Cookie: second } })).status).toBe(200);
  });
});

describe('sessions', () => {
  it('a forged or ended cookie is signed out: pages go to the sign-in page, the API answers 401', async () => {
    for (const cookie of [`prospecta_session=${'x'.repeat(43)}`, 'prospecta_session=%00%ff', 'prospecta_session=']) {
      const page = await get('/dashboard/keys', cookie);
      expect(page.status, cookie).toBe(303);
      expect(page.headers.get('location')).toMatch(/^\/dashboard\/login/);
      const api = await app.request('GET', '/dashboard/api/credits', { headers: { Cookie: cookie } });
      expect(api.status).toBe(401);
      expect(api.body.message).toMatch(/session has ended/);
    }
    const none = await get('/dashboard');
    expect(none.status).toBe(303);
    expect(none.headers.get('location')).toBe('/dashboard/login');
    const login = await get('/dashboard/login');
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('one-time sign-in link');
  });

  it('ends after 12 idle hours, and moves its end forward with use', async () => {
    let now = Date.now();
    const sessions = new Sessions(app.services.store, app.services.members, () => now);
    const { workspaceId } = await app.workspace();
    const { token } = await sessions.start(workspaceId, 'link', null);
    now += SESSION_IDLE_MS - 60_000;
    expect(await sessions.find(token)).not.toBeNull();
    now += SESSION_IDLE_MS - 60_000;
    expect(await sessions.find(token), 'used 11:59 ago, so still running').not.toBeNull();
    now += SESSION_IDLE_MS + 1;
    expect(await sessions.find(token)).toBeNull();
  });

  it('/dashboard/session says who is signed in to which workspace', async () => {
    const { workspaceId } = await app.workspace();
    const cookie = await signIn(app, workspaceId);
    const res = await get('/dashboard/session', cookie);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ workspaceId, workspaceName: 'Test workspace', via: 'link', who: null });
    expect((await get('/dashboard/session')).status).toBe(401);
  });

  it('sign-out ends the session, from the dashboard’s own origin only', async () => {
    const { workspaceId } = await app.workspace();
    const cookie = await signIn(app, workspaceId);
    const post = (headers: Record<string, string>) => fetch(`${app.url}/dashboard/logout`, { method: 'POST', redirect: 'manual', headers: { Cookie: cookie, ...headers } });
    expect((await post({ Origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({})).status).toBe(403);
    expect((await app.request('GET', '/dashboard/api/credits', { headers: { Cookie: cookie } })).status).toBe(200);
    const out = await post({ Origin: app.url });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/dashboard/login?signed-out');
    expect(out.headers.getSetCookie().join()).toMatch(/prospecta_session=;/);
    expect((await app.request('GET', '/dashboard/api/credits', { headers: { Cookie: cookie } })).status).toBe(401);
  });

  it('unknown dashboard pages are a 404 page; a wrong method is a 405 with Allow', async () => {
    const { workspaceId } = await app.workspace();
    const cookie = await signIn(app, workspaceId);
    const missing = await get('/dashboard/nowhere', cookie);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBeTruthy();
    const wrong = await fetch(`${app.url}/dashboard/login`, { method: 'DELETE', headers: { Origin: app.url } });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});

describe('without an issuer client', () => {
  it('offers no "Sign in with" and answers 404 at the flow’s addresses', async () => {
    expect(await (await get('/dashboard/login')).text()).not.toContain('Sign in with');
    expect((await get('/dashboard/auth/start')).status).toBe(404);
  });
});
