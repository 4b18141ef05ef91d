/**
 * `GET /metrics`: the Prometheus text exposition of `metrics.ts`'s registry, for a scraper that
 * presents `Authorization: Bearer {METRICS_TOKEN}` (compared in constant time); 401 without it
 * or with another. Without METRICS_TOKEN there is no endpoint: 404, whose message says how to
 * turn it on (an operator pointing a scraper at it would otherwise guess at a wrong path). It sits before identification and the rate limit: its token is
 * not an API key, and a scraper's steady calls are no client's quota.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { registry, startProcessMetrics } from '../lib/metrics.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Middleware } from './state.ts';

export const METRICS_PATH = '/metrics';

const digest = (value: string) => createHash('sha256').update(value).digest();

export function metricsRoute(token: string | undefined): Middleware {
  if (token === undefined) {
    return async (ctx, next) => {
      if (ctx.path !== METRICS_PATH) return next();
      throw new ServiceError('not_found', `${METRICS_PATH} is off: set METRICS_TOKEN on the server, and scrape with Authorization: Bearer <that token>.`);
    };
  }
  // Digests of equal length, so the comparison's time says nothing about the token's length either.
  const expected = digest(token);
  startProcessMetrics();
  return async (ctx, next) => {
    if (ctx.path !== METRICS_PATH) return next();
    ctx.state.operation = 'metrics';
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new ServiceError('method_not_allowed', `${METRICS_PATH} accepts GET.`);
    }
    const presented = /^Bearer +(\S+) *$/i.exec(ctx.get('Authorization'))?.[1];
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'unauthorized', message: `${METRICS_PATH} needs Authorization: Bearer with the METRICS_TOKEN.` };
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };
}
