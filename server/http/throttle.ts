/** Applies the request quota to every request and advertises it on every response. */
import { ServiceError } from '../lib/errors.ts';
import { rateLimitHeaders, type RateLimiter } from './rate-limit.ts';
import { setHeader, type Middleware } from './state.ts';

export function throttle(limiter: RateLimiter): Middleware {
  const sample = rateLimitHeaders(limiter, { allowed: true, limit: limiter.limit, remaining: 0, resetSeconds: 1 });
  const policy = sample['RateLimit-Policy']!;
  const name = `"${limiter.policyName}"`;
  return async (ctx, next) => {
    const principal = ctx.state.principal;
    const subject = principal ? `cred:${principal.credentialId}` : `ip:${ctx.ip}`;
    const decision = await limiter.consume(subject);
    if (decision.allowed) {
      // The common case without the header object: the policy is fixed, the counter changes.
      setHeader(ctx, 'RateLimit-Policy', policy);
      setHeader(ctx, 'RateLimit', `${name};r=${decision.remaining};t=${decision.resetSeconds}`);
    } else ctx.set(rateLimitHeaders(limiter, decision));
    if (!decision.allowed) {
      throw new ServiceError('rate_limited',
        `Too many requests: the limit is ${limiter.limit} per ${limiter.windowSeconds} s. Retry in ${decision.resetSeconds} s.`,
        { retryAfterSeconds: decision.resetSeconds },
      );
    }
    await next();
  };
}
