/**
 * Verifies JWT access tokens (RFC 9068) from the one issuer the operator trusts (OAUTH_ISSUER):
 * signature with the issuer's published keys (RS256, PS256, ES256 or EdDSA; never `none`, never
 * HMAC, whose "secret" could be the public key), `iss`, `aud` (OAUTH_AUDIENCE), `exp` and `nbf`
 * with 60 s of leeway, a `sub`. The `typ` header may be `at+jwt` (RFC 9068) or plain `JWT`, as
 * Auth0 and Entra ID send; any other type (a logout token, a DPoP proof) is not an access token.
 *
 * Cheap checks come first (shape, algorithm, issuer, read without trusting them), so garbage and
 * foreign tokens never make us fetch keys. A verified token is remembered by its SHA-256 until it
 * expires (a bounded LRU): a client sends the same token for its whole lifetime, and a hit costs a
 * hash instead of a signature check. Only the token's own claims are cached; whether its subject
 * still acts for a workspace is asked anew (subjects.ts), so a removed member is refused at once.
 */
import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { SCOPES, type Scope } from '../../shared/operations/types.ts';
import { IssuerDiscovery, IssuerUnavailable } from './issuer-discovery.ts';
import { issuerKeys } from './issuer-keys.ts';
import { Lru } from '../lib/lru.ts';
import { reasonOf, TokenRefused } from './token-refusal.ts';

export const ACCEPTED_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'];
/** RFC 9068 §4 asks for `at+jwt`; Auth0 and Entra ID send `JWT`; some issuers send none. */
const ACCEPTED_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt', 'application/jwt']);
const CLOCK_TOLERANCE_SECONDS = 60;
/** Far more than any header a client sends; a longer "token" is refused before parsing. */
const MAX_TOKEN_LENGTH = 8192;
const MAX_NAME_LENGTH = 200;
const KNOWN_SCOPES = new Set<string>(SCOPES);

export interface VerifiedToken {
  issuer: string;
  subject: string;
  /**
   * A hash of (issuer, subject): the principal's `credentialId`, stable across the subject's
   * tokens (the rate limit counts per subject) and free of e-mail addresses or directory ids
   * (it reaches logs). Computed once per token, not per request.
   */
  subjectId: string;
  /** The token's scopes that this service knows; others are ignored. */
  scopes: Scope[];
  /** `email`, else `name`: what a workspace created for the subject is called. */
  displayName: string | null;
}

export interface AccessTokenOptions {
  issuer: string;
  audience: string;
  jwksUrl: string | undefined;
  fetchTimeoutMs: number;
  log: Logger;
  /** Verified tokens remembered; 0 turns the cache off. @default 10_000 */
  cacheSize?: number;
  /** @default 30_000 (see issuer-keys.ts) */
  jwksCooldownMs?: number;
}

interface Cached {
  token: VerifiedToken;
  /** Until when, in ms: the token's `exp`. */
  until: number;
}

export class AccessTokens {
  private readonly discovery: IssuerDiscovery;
  private keys: JWTVerifyGetKey | undefined;
  private readonly verified: Lru<string, Cached>;

  constructor(private readonly options: AccessTokenOptions) {
    this.discovery = new IssuerDiscovery(options.issuer, options.jwksUrl, options.fetchTimeoutMs, options.log);
    this.verified = new Lru(options.cacheSize ?? 10_000);
  }

  /** Whether a bearer credential is worth trying as a token: a JWS is three base64url parts. */
  static looksLikeJwt(credential: string): boolean {
    return credential.length <= MAX_TOKEN_LENGTH && /^[\w-]+\.[\w-]+\.[\w-]*$/.test(credential);
  }

  /** The token's verified subject and scopes; throws TokenRefused. */
  async verify(token: string): Promise<VerifiedToken> {
    const digest = createHash('sha256').update(token).digest('base64url');
    const hit = this.verified.get(digest);
    if (hit && hit.until > Date.now()) return hit.token;

    this.precheck(token);
    const { payload } = await this.check(token);
    const verified = toVerified(payload);
    this.verified.set(digest, { token: verified, until: (payload.exp as number) * 1000 });
    return verified;
  }

  /** Refuses what needs no key to refuse, before any fetch. */
  private precheck(token: string): void {
    if (!AccessTokens.looksLikeJwt(token)) throw new TokenRefused('malformed');
    let alg: unknown;
    let typ: unknown;
    let iss: unknown;
    try {
      ({ alg, typ } = decodeProtectedHeader(token));
      ({ iss } = decodeJwt(token));
    } catch {
      throw new TokenRefused('malformed');
    }
    if (typeof alg !== 'string' || !ACCEPTED_ALGORITHMS.includes(alg)) throw new TokenRefused('alg_not_allowed');
    if (typ !== undefined && (typeof typ !== 'string' || !ACCEPTED_TYPES.has(typ.toLowerCase()))) throw new TokenRefused('wrong_type');
    if (iss !== this.options.issuer) throw new TokenRefused('wrong_issuer');
  }

  private async check(token: string) {
    try {
      return await jwtVerify(token, await this.keySet(), {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
      });
    } catch (err) {
      if (err instanceof TokenRefused) throw err;
      if (err instanceof IssuerUnavailable) throw new TokenRefused('issuer_unavailable');
      const reason = reasonOf(err);
      if (reason) throw new TokenRefused(reason);
      // Not a verdict on the token (a bug, an odd key in the set): refused, and said in the log.
      this.options.log.error({ reason: 'verification_failed', problem: (err as Error).message }, 'oauth token check failed');
      throw new TokenRefused('verification_failed');
    }
  }

  private async keySet(): Promise<JWTVerifyGetKey> {
    if (!this.keys) {
      const url = await this.discovery.jwksUri();
      this.keys ??= issuerKeys(
        url,
        { timeoutMs: this.options.fetchTimeoutMs, ...(this.options.jwksCooldownMs !== undefined ? { cooldownMs: this.options.jwksCooldownMs } : {}) },
        this.options.log,
      );
    }
    return this.keys;
  }
}

function toVerified(payload: JWTPayload): VerifiedToken {
  const subject = payload.sub;
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 1024) throw new TokenRefused('claims_invalid');
  const issuer = payload.iss!;
  return { issuer, subject, subjectId: subjectId(issuer, subject), scopes: scopesOf(payload), displayName: displayNameOf(payload) };
}

export function subjectId(iss: string, sub: string): string {
  return `sub_${createHash('sha256').update(JSON.stringify([iss, sub])).digest('base64url').slice(0, 32)}`;
}

/** `scope` is space-separated (RFC 9068); `scp` is an array (Okta) or, from Entra ID, a string. */
function scopesOf(payload: JWTPayload): Scope[] {
  const granted = new Set<string>();
  for (const claim of [payload.scope, payload.scp]) {
    const values = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
    for (const value of values) if (typeof value === 'string' && KNOWN_SCOPES.has(value)) granted.add(value);
  }
  return SCOPES.filter((scope) => granted.has(scope));
}

export function displayNameOf(payload: JWTPayload): string | null {
  for (const claim of [payload.email, payload.name]) {
    if (typeof claim !== 'string') continue;
    // Printable text only: it becomes a workspace name shown in lists and the dashboard.
    const clean = claim.replace(/[\p{Cc}\p{Cf}]/gu, '').trim().slice(0, MAX_NAME_LENGTH);
    if (clean) return clean;
  }
  return null;
}
