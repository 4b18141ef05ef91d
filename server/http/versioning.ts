/**
 * `Service-Version`: absent or `1` is accepted; anything else, an empty value included, is 400
 * `unsupported_version` (an empty header names no version, so it is not read as absent).
 */
import { ServiceError } from '../lib/errors.ts';
import type { Middleware } from './state.ts';

export const SUPPORTED_VERSIONS = ['1'];

// A plain function that hands on `next()`'s promise: an async wrapper per hop costs every
// request a promise and its microtasks (issue 23). Koa's compose turns a throw into a rejection.
export function versioning(): Middleware {
  return (ctx, next) => {
    const header = ctx.headers['service-version'];
    if (header === undefined) return next();
    const requested = (Array.isArray(header) ? header.join(', ') : header).trim();
    if (!SUPPORTED_VERSIONS.includes(requested)) {
      throw new ServiceError('unsupported_version',
        `Service-Version ${JSON.stringify(requested).slice(0, 40)} is not supported; the supported version is 1.`,
      );
    }
    return next();
  };
}
