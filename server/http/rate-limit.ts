/**
 * Request quotas per credential (per client IP when there is none), advertised with the IETF
 * RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-10):
 *   RateLimit-Policy: "standard";q=600;w=60
 *   RateLimit: "standard";r=599;t=42
 * In-process by default; with REDIS_URL the counters live in Redis so every instance enforces
 * one shared quota. Counting is rate-limiter-flexible's fixed window, atomic in both stores.
 */
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  readonly policyName: string;
  readonly limit: number;
  readonly windowSeconds: number;
  consume(key: string): Promise<RateDecision>;
}

const WINDOW_SECONDS = 60;

export function createRateLimiter(perMinute: number, redis?: Redis): RateLimiter {
  const options = { points: perMinute, duration: WINDOW_SECONDS, keyPrefix: 'prospecta:rl' };
  // If Redis becomes unreachable the in-process limiter keeps quotas enforced per instance
  // instead of failing every request.
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: new RateLimiterMemory(options) })
    : new RateLimiterMemory(options);

  return {
    policyName: 'standard',
    limit: perMinute,
    windowSeconds: WINDOW_SECONDS,
    async consume(key) {
      try {
        const res = await limiter.consume(key);
        return decision(true, perMinute, res);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decision(false, perMinute, rejection);
        throw rejection;
      }
    },
  };
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

export function rateLimitHeaders(limiter: RateLimiter, d: RateDecision): Record<string, string> {
  const name = `"${limiter.policyName}"`;
  const headers: Record<string, string> = {
    'RateLimit-Policy': `${name};q=${limiter.limit};w=${limiter.windowSeconds}`,
    RateLimit: `${name};r=${d.remaining};t=${d.resetSeconds}`,
  };
  if (!d.allowed) headers['Retry-After'] = String(d.resetSeconds);
  return headers;
}
