/**
 * "Sign in with …": OpenID Connect's authorization-code flow with PKCE at OAUTH_ISSUER, through
 * `openid-client`, as the dashboard's own client (OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET).
 *
 * `start` keeps the PKCE verifier and nonce in the store under the hash of a random `state`, and
 * that state in a short-lived cookie, so only the browser that started a sign-in can finish it,
 * once. `finish` checks the state against the cookie, redeems the code, verifies the ID token
 * (signature, issuer, audience, nonce) and finds the subject's workspace exactly as an access
 * token's subject is found (a member, or a sign-up), so one person is one workspace whichever
 * way in. The issuer's metadata is read on the first sign-in, not at start-up, and read again
 * after a failure.
 */
import * as client from 'openid-client';
import type { Logger } from 'pino';
import { displayNameOf, subjectId } from '../auth/access-tokens.ts';
import type { Subjects } from '../auth/subjects.ts';
import type { AppContext } from '../http/state.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import { tokenId } from './secret-token.ts';
import { clearCookie, cookiePolicy, readCookie, SIGN_IN_COOKIE, writeCookie, type CookiePolicy } from './session-cookie.ts';

/** How long a started sign-in may take at the issuer. */
const SIGN_IN_TTL_MS = 10 * 60_000;

interface PendingSignIn {
  _id: string;
  codeVerifier: string;
  nonce: string;
  expiresAt: Date;
}

export const oidcSignInIndexes: IndexDeclaration[] = [
  { collection: 'dashboardSignIns', keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
];

export type SignInOutcome = { ok: true; workspaceId: string; memberId: string; who: string | null } | { ok: false; status: number; message: string };

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  publicUrl: string;
  timeoutMs: number;
}

export class OidcSignIn {
  readonly issuer: string;
  private readonly pending: Collection<PendingSignIn>;
  private config: Promise<client.Configuration> | null = null;
  private readonly redirectUri: string;
  private readonly cookies: CookiePolicy;

  constructor(
    private readonly settings: OidcSettings,
    store: Store,
    private readonly subjects: Subjects,
    private readonly log: Logger,
  ) {
    this.issuer = settings.issuer;
    this.pending = store.collection<PendingSignIn>('dashboardSignIns');
    this.redirectUri = `${settings.publicUrl}/dashboard/auth/callback`;
    this.cookies = cookiePolicy(settings.publicUrl);
  }

  /** Sends the browser to the issuer (and answers null), or says why it cannot. */
  async start(ctx: AppContext): Promise<Extract<SignInOutcome, { ok: false }> | null> {
    let config: client.Configuration;
    try {
      config = await this.configuration();
    } catch (err) {
      return this.unavailable(err);
    }
    const state = client.randomState();
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    await this.pending.insertOne({ _id: tokenId(state), codeVerifier, nonce, expiresAt: new Date(Date.now() + SIGN_IN_TTL_MS) });
    writeCookie(ctx, this.cookies, SIGN_IN_COOKIE, state, SIGN_IN_TTL_MS);
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    ctx.redirect(url.href);
    ctx.status = 303;
    return null;
  }

  /** The issuer's answer at the callback: the workspace to sign in to, or why not. */
  async finish(ctx: AppContext): Promise<SignInOutcome> {
    const state = readCookie(ctx, SIGN_IN_COOKIE);
    clearCookie(ctx, this.cookies, SIGN_IN_COOKIE);
    const error = ctx.query.error;
    if (error !== undefined) {
      // Anyone can send a browser here with any `error`: its text goes to the log, never onto
      // the page, where it would read as the issuer's own words.
      this.log.warn({ issuer: this.issuer, error: String(error).slice(0, 100) }, 'dashboard sign-in: the issuer answered an error');
      const why = error === 'access_denied' ? 'the sign-in was cancelled or refused' : 'the issuer did not complete the sign-in';
      return { ok: false, status: 400, message: `You are not signed in: ${why}. Try again.` };
    }
    if (!state || ctx.query.state !== state) {
      return { ok: false, status: 400, message: 'This sign-in was not started in this browser, or it was already finished. Start again.' };
    }
    // Deleted before it is used: of two callbacks racing with one state, one finishes.
    const pending = await this.pending.findOne({ _id: tokenId(state) });
    const claimed = pending ? (await this.pending.deleteOne({ _id: pending._id })).deletedCount === 1 : false;
    if (!pending || !claimed || pending.expiresAt.getTime() <= Date.now()) {
      return { ok: false, status: 400, message: 'This sign-in took longer than 10 minutes. Start again.' };
    }
    let claims: client.IDToken | undefined;
    try {
      const config = await this.configuration();
      const current = new URL(`${this.redirectUri}?${ctx.querystring}`);
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (err) {
      if (isUnreachable(err)) return this.unavailable(err);
      this.log.warn({ issuer: this.issuer, reason: reasonOf(err) }, 'dashboard sign-in refused');
      return { ok: false, status: 400, message: `The issuer’s answer could not be accepted (${reasonOf(err)}). Start again.` };
    }
    if (!claims) return { ok: false, status: 400, message: 'The issuer sent no ID token. Start again.' };
    const token = {
      issuer: claims.iss,
      subject: claims.sub,
      subjectId: subjectId(claims.iss, claims.sub),
      scopes: [],
      displayName: displayNameOf(claims),
    };
    const membership = await this.subjects.membershipOf(token);
    if ('code' in membership) return { ok: false, status: 403, message: membership.message };
    return { ok: true, workspaceId: membership.workspaceId, memberId: membership.memberId, who: token.displayName };
  }

  private configuration(): Promise<client.Configuration> {
    // One discovery shared by concurrent sign-ins; forgotten on failure, so the next one retries.
    this.config ??= client
      .discovery(new URL(this.issuer), this.settings.clientId, this.settings.clientSecret, undefined, {
        timeout: Math.ceil(this.settings.timeoutMs / 1000),
        // A loopback or private issuer without TLS is the operator's choice (OAUTH_ISSUER).
        execute: this.issuer.startsWith('http:') ? [client.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        this.config = null;
        throw err;
      });
    return this.config;
  }

  private unavailable(err: unknown): Extract<SignInOutcome, { ok: false }> {
    this.log.warn({ issuer: this.issuer, reason: reasonOf(err) }, 'dashboard sign-in: issuer unavailable');
    return {
      ok: false,
      status: 502,
      message: `The sign-in service at ${new URL(this.issuer).host} did not answer (${reasonOf(err)}). Try again in a moment, or use a one-time link.`,
    };
  }
}

function reasonOf(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = cause && typeof cause === 'object' && 'code' in cause ? String((cause as { code: unknown }).code) : null;
    return (code ?? err.message).slice(0, 200);
  }
  return String(err).slice(0, 200);
}

/** A network failure or timeout talking to the issuer, as opposed to an answer we refuse. */
function isUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return true;
  return err instanceof TypeError && /fetch failed/i.test(err.message);
}
