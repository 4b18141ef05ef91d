/**
 * Identifies the caller from `Authorization: Bearer <credential>` once per request, without
 * failing: rate limiting needs to know who is calling even on routes that need no credential.
 * The credential is an API key or an OAuth access token (`auth/credentials.ts`); whether the
 * caller may run an operation is the pipeline's decision (`auth/principal.ts`). MCP mounts this
 * same middleware, so a credential that works on /v1 works on /mcp.
 */
import type { Credentials } from '../auth/credentials.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Middleware } from './state.ts';

export function identify(credentials: Credentials): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    // Node keeps the first of several; a proxy that keeps the last would act for someone else.
    if (header && countHeader(ctx.req.rawHeaders, 'authorization') > 1) {
      throw new ServiceError('invalid_request', 'Send one Authorization header; this request has several.');
    }
    if (header) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) {
        ctx.state.authProblem = {
          code: 'unauthorized',
          message: 'The Authorization header must be "Bearer <API key or access token>".',
        };
      } else {
        const found = await credentials.identify(match[1]!);
        if ('principal' in found) {
          ctx.state.principal = found.principal;
        } else {
          ctx.state.authProblem = found.refused;
          // The reason code only: the token, its claims and its subject stay out of the logs.
          if (found.reason) ctx.state.log.info({ reason: found.reason }, 'access token refused');
        }
      }
    }
    await next();
  };
}

function countHeader(raw: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) count++;
  return count;
}
