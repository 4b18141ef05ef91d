/**
 * The issuer's signing keys, for `jwtVerify`. jose's remote key set does the caching: keys are
 * kept for `cacheMaxAge` (10 min), and a token whose `kid` is not in the set refetches it only
 * when the last fetch is older than `cooldown` (30 s), so a stream of tokens with unknown kids
 * costs one fetch, not one per request, while a key the issuer has just rotated in is picked up.
 *
 * What jose leaves to us is the issuer being down. Its remote set retries on every call, so each
 * request would wait out the timeout; here a failed fetch starts a backoff during which calls do
 * not fetch. Meanwhile, and whenever a refetch fails, the last keys fetched successfully (up to a
 * day old) still verify: an outage of the issuer's key endpoint does not lock out tokens signed
 * with keys it published a moment ago. Only with no usable keys at all is a token refused, as
 * `keys_unavailable`.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  jwksCache,
  type ExportedJWKSCache,
  type FlattenedJWSInput,
  type CompactJWSHeaderParameters,
  type JWTVerifyGetKey,
} from 'jose';
import type { Logger } from 'pino';
import { Backoff } from '../lib/backoff.ts';
import { boundedFetch, problemOf } from './issuer-http.ts';
import { TokenRefused } from './token-refusal.ts';

export interface IssuerKeysOptions {
  timeoutMs: number;
  /** @default 30_000 */
  cooldownMs?: number;
  /** @default 600_000 */
  cacheMaxAgeMs?: number;
}

/** How old the last good key set may be and still verify while the issuer cannot be reached. */
const STALE_MAX_MS = 24 * 3600_000;

/** jose's own verdicts about a token, as opposed to failures to get the key set. */
const TOKEN_VERDICTS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'ERR_JOSE_NOT_SUPPORTED']);

export function issuerKeys(url: URL, options: IssuerKeysOptions, log: Logger): JWTVerifyGetKey {
  const cache: ExportedJWKSCache | Record<string, never> = {};
  const remote = createRemoteJWKSet(url, {
    timeoutDuration: options.timeoutMs,
    cooldownDuration: options.cooldownMs ?? 30_000,
    cacheMaxAge: options.cacheMaxAgeMs ?? 600_000,
    [customFetch]: boundedFetch(),
    [jwksCache]: cache,
  });
  const backoff = new Backoff();
  let stale: { uat: number; keys: JWTVerifyGetKey } | undefined;

  const lastGood = (header: CompactJWSHeaderParameters, token: FlattenedJWSInput) => {
    const { jwks, uat } = cache as Partial<ExportedJWKSCache>;
    if (!jwks || uat === undefined || Date.now() - uat > STALE_MAX_MS) throw new TokenRefused('keys_unavailable');
    if (stale?.uat !== uat) stale = { uat, keys: createLocalJWKSet(jwks) };
    return stale.keys(header, token);
  };

  return async (header, token) => {
    // jose would fetch (no keys yet, or older than cacheMaxAge): not while backing off.
    if (!remote.fresh && backoff.waiting) return lastGood(header, token);
    try {
      const key = await remote(header, token);
      backoff.succeeded();
      return key;
    } catch (err) {
      if (TOKEN_VERDICTS.has((err as { code?: string }).code ?? '')) throw err;
      backoff.failed();
      log.warn({ jwksUri: url.href, reason: 'keys_unavailable', problem: problemOf(err) }, 'oauth key set unavailable');
      return lastGood(header, token);
    }
  };
}
