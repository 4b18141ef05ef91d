/**
 * Everything under /dashboard: sign-in (one-time link, or the issuer's authorization-code flow),
 * sign-out, the app's shell and files, and its JSON API.
 *
 * The JSON API is the registry itself: `/dashboard` + an operation's path runs that operation
 * through the same routes and pipeline as /v1, as the signed-in session. It takes the session
 * cookie and never an API key, and refuses state changes from other origins. Nothing the
 * dashboard shows or changes bypasses the registry.
 */
import { sessionPrincipal } from '../auth/principal.ts';
import { ServiceError } from '../lib/errors.ts';
import type { AppContext, Middleware } from '../http/state.ts';
import type { Workspaces } from '../credits/workspaces.ts';
import type { OidcSignIn } from './oidc-sign-in.ts';
import { ASSETS_PATH, type Assets } from './assets.ts';
import { formField } from './form-body.ts';
import { OPERATION_NAMES } from './operation-names.ts';
import { documentHtml, html } from './html.ts';
import { changesState, isSameOrigin } from './same-origin.ts';
import { clearCookie, cookiePolicy, readCookie, SESSION_COOKIE, writeCookie } from './session-cookie.ts';
import type { SessionDoc, Sessions } from './sessions.ts';
import { notFoundPage, signInPage, type SignInPageOptions } from './sign-in-page.ts';
import type { Redemption, SignInLinks } from './sign-in-links.ts';
import { setPageHeaders } from './security-headers.ts';

/** Where the dashboard is mounted; its API, the registry's `/api/…` routes, under `/dashboard/api/`. */
export const DASHBOARD_PREFIX = '/dashboard';
const PREFIX = DASHBOARD_PREFIX;
/** The app's own pages, each served the same shell; the script routes between them. */
const APP_PAGES = /^\/dashboard(?:\/(?:keys|credits|campaigns(?:\/[0-9a-fA-F-]{36})?|jobs|watches|agent))?\/?$/;
/** The cookie outlives idle sessions; the store decides whether the session it names still runs. */
const COOKIE_MAX_AGE_MS = 30 * 24 * 3600_000;

const REFUSED_LINK: Record<Exclude<Redemption, { ok: true }>['reason'], string> = {
  used: 'This sign-in link was already used: each link signs in once. Ask for a new one.',
  expired: 'This sign-in link has expired: links last 10 minutes. Ask for a new one.',
  unknown: 'This sign-in link is not valid. Check that it was copied whole, or ask for a new one.',
};

export interface Dashboard {
  /** `/dashboard/api/…`, before `identify`: the session as the caller of the registry's route. */
  api: Middleware;
  /** The rest of `/dashboard`, after the rate limit: sign-in, sign-out, the app's pages and files. */
  pages: Middleware;
}

/** What the dashboard's sign-in and sessions use. */
export interface DashboardDeps {
  sessions: Sessions;
  signInLinks: SignInLinks;
  /** null without OAUTH_ISSUER and OAUTH_CLIENT_ID. */
  oidcSignIn: OidcSignIn | null;
  workspaces: Workspaces;
  /** PUBLIC_URL: the dashboard's origin, and whether its cookies are `Secure`. */
  publicUrl: string;
}

export function dashboard({ sessions, signInLinks, workspaces, publicUrl, oidcSignIn: oidc }: DashboardDeps, assets: Assets): Dashboard {
  const publicOrigin = new URL(publicUrl).origin;
  const cookies = cookiePolicy(publicUrl);

  const page = (ctx: AppContext, status: number, body: string) => {
    setPageHeaders(ctx);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = body;
  };
  const signIn = (ctx: AppContext, status: number, options: Omit<SignInPageOptions, 'issuer'> = {}) =>
    page(ctx, status, signInPage(assets, { ...options, issuer: oidc ? oidc.issuer : null }));
  const seeOther = (ctx: AppContext, location: string) => {
    ctx.redirect(location);
    ctx.status = 303;
  };

  /** The session the request's cookie names; a cookie that names none is cleared. */
  async function currentSession(ctx: AppContext): Promise<{ session: SessionDoc | null; hadCookie: boolean }> {
    const token = readCookie(ctx, SESSION_COOKIE);
    if (token === undefined) return { session: null, hadCookie: false };
    const session = await sessions.find(token);
    if (!session) clearCookie(ctx, cookies, SESSION_COOKIE);
    return { session, hadCookie: true };
  }

  /** Starts a session for the workspace, ending the one the browser had (a new id at every sign-in). */
  async function startSession(ctx: AppContext, workspaceId: string, via: SessionDoc['via'], who: string | null, memberId: string | null = null): Promise<void> {
    await sessions.end(readCookie(ctx, SESSION_COOKIE));
    const { token } = await sessions.start(workspaceId, via, who, memberId);
    writeCookie(ctx, cookies, SESSION_COOKIE, token, COOKIE_MAX_AGE_MS);
    ctx.state.log.info({ workspaceId, via }, 'dashboard sign-in');
    seeOther(ctx, PREFIX);
  }

  async function api(ctx: AppContext, next: () => Promise<unknown>): Promise<void> {
    // Answers hold a workspace's data, and a new key's secret: no cache may keep any of them.
    ctx.set('Cache-Control', 'no-store');
    if (ctx.get('Authorization')) {
      throw new ServiceError('unauthorized', 'The dashboard’s API takes its session cookie, never an API key or token; call /v1 with those.', {
        credentialRefused: true,
      });
    }
    if (changesState(ctx) && !isSameOrigin(ctx, publicOrigin)) {
      throw new ServiceError('cross_origin', 'Changes through the dashboard’s API must come from the dashboard’s own pages.');
    }
    const { session } = await currentSession(ctx);
    if (session) ctx.state.principal = sessionPrincipal({ id: session._id, workspaceId: session.workspaceId, memberId: session.memberId });
    else ctx.state.authProblem = { code: 'unauthorized', message: 'Your dashboard session has ended: sign in again.' };
    // From here on it is the registry's route, mounted under /dashboard as under /v1.
    await next();
  }

  /** Opening a link shows the page that posts it back: a GET never signs in nor spends it. */
  async function login(ctx: AppContext): Promise<void> {
    const token = ctx.query.token;
    if (token === undefined) {
      const { session, hadCookie } = await currentSession(ctx);
      if (session) return seeOther(ctx, PREFIX);
      if ('signed-out' in ctx.query) return signIn(ctx, 200, { notice: { kind: 'info', text: 'You are signed out.' } });
      if (hadCookie) return signIn(ctx, 200, { notice: { kind: 'info', text: 'Your session has ended. Sign in again.' } });
      return signIn(ctx, 200);
    }
    const link = await signInLinks.peek(token);
    if (!link.ok) return signIn(ctx, 400, { notice: { kind: 'error', text: REFUSED_LINK[link.reason] } });
    signIn(ctx, 200, { linkToken: token as string });
  }

  /**
   * The link page's "Sign in": a same-origin form post, so another site can neither post its own
   * link into this browser (login CSRF) nor make it spend one.
   */
  async function redeemLink(ctx: AppContext): Promise<void> {
    if (!isSameOrigin(ctx, publicOrigin)) {
      return signIn(ctx, 403, { notice: { kind: 'error', text: 'Sign in from the link’s own page.' } });
    }
    const token = await formField(ctx, 'token');
    const redemption = await signInLinks.redeem(token);
    if (!redemption.ok) return signIn(ctx, 400, { notice: { kind: 'error', text: REFUSED_LINK[redemption.reason] } });
    await startSession(ctx, redemption.workspaceId, 'link', null);
  }

  async function logout(ctx: AppContext): Promise<void> {
    if (!isSameOrigin(ctx, publicOrigin)) {
      return signIn(ctx, 403, { notice: { kind: 'error', text: 'Sign out from the dashboard’s own page.' } });
    }
    await sessions.end(readCookie(ctx, SESSION_COOKIE));
    clearCookie(ctx, cookies, SESSION_COOKIE);
    seeOther(ctx, `${PREFIX}/login?signed-out`);
  }

  async function sessionInfo(ctx: AppContext): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const { session } = await currentSession(ctx);
    if (!session) throw new ServiceError('unauthorized', 'Not signed in to the dashboard.');
    const workspace = await workspaces.get(session.workspaceId);
    ctx.body = {
      workspaceId: session.workspaceId,
      workspaceName: workspace?.name ?? null,
      via: session.via,
      who: session.who,
      expiresAt: session.expiresAt.toISOString(),
    };
  }

  async function app(ctx: AppContext): Promise<void> {
    const { session, hadCookie } = await currentSession(ctx);
    if (!session) return seeOther(ctx, hadCookie ? `${PREFIX}/login?ended` : `${PREFIX}/login`);
    if (!assets.manifest) {
      return page(ctx, 503, documentHtml(assets, { title: 'prospecta', body: html`<main class="sign-in"><p role="alert">The dashboard’s files were not built: run <code>npm run build</code>.</p></main>` }));
    }
    const body = html`<div id="app" data-operations="${JSON.stringify(OPERATION_NAMES)}"><noscript>The dashboard needs JavaScript.</noscript></div>`;
    page(ctx, 200, documentHtml(assets, { title: 'prospecta', body, app: true }));
  }

  const routes: Array<{ method: string; match: (path: string) => boolean; run: (ctx: AppContext) => Promise<void> | void }> = [
    { method: 'GET', match: (p) => p === `${PREFIX}/login`, run: login },
    { method: 'POST', match: (p) => p === `${PREFIX}/login`, run: redeemLink },
    { method: 'POST', match: (p) => p === `${PREFIX}/logout`, run: logout },
    { method: 'GET', match: (p) => p === `${PREFIX}/session`, run: sessionInfo },
    {
      method: 'GET',
      match: (p) => p === `${PREFIX}/auth/start`,
      run: async (ctx) => {
        if (!oidc) return notFound(ctx);
        const refused = await oidc.start(ctx);
        if (refused) signIn(ctx, refused.status, { notice: { kind: 'error', text: refused.message } });
      },
    },
    {
      method: 'GET',
      match: (p) => p === `${PREFIX}/auth/callback`,
      run: async (ctx) => {
        if (!oidc) return notFound(ctx);
        const outcome = await oidc.finish(ctx);
        if (outcome.ok) return startSession(ctx, outcome.workspaceId, 'oidc', outcome.who, outcome.memberId);
        signIn(ctx, outcome.status, { notice: { kind: 'error', text: outcome.message } });
      },
    },
    { method: 'GET', match: (p) => p.startsWith(ASSETS_PATH), run: (ctx) => void (assets.serve(ctx, ctx.path.slice(ASSETS_PATH.length)) || notFound(ctx)) },
    { method: 'GET', match: (p) => APP_PAGES.test(p), run: app },
  ];

  function notFound(ctx: AppContext): void {
    page(ctx, 404, notFoundPage(assets));
  }

  const pages: Middleware = async (ctx, next) => {
    const path = ctx.path;
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    const matching = routes.filter((r) => r.match(path));
    const route = matching.find((r) => r.method === method);
    if (route) return route.run(ctx);
    if (matching.length > 0) {
      ctx.set('Allow', [...new Set(matching.map((r) => (r.method === 'GET' ? 'GET, HEAD' : r.method)))].join(', '));
      throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed here.`);
    }
    notFound(ctx);
  };
  return { api, pages };
}
