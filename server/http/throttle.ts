/** Applies the request quota to every request and advertises it on every response. */
import { ServiceError } from '../errors.ts';
import { rateLimitHeaders, type RateLimiter } from './rate-limit.ts';
import type { Middleware } from './state.ts';

export function throttle(limiter: RateLimiter): Middleware {
  return async (ctx, next) => {
    const principal = ctx.state.principal;
    const subject = principal ? `cred:${principal.credentialId}` : `ip:${ctx.ip}`;
    const decision = await limiter.consume(subject);
    ctx.set(rateLimitHeaders(limiter, decision));
    if (!decision.allowed) {
      throw new ServiceError('rate_limited',
        `Too many requests: the limit is ${limiter.limit} per ${limiter.windowSeconds} s. Retry in ${decision.resetSeconds} s.`,
        { retryAfterSeconds: decision.resetSeconds },
      );
    }
    await next();
  };
}
