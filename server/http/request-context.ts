/**
 * First in the chain: a request id on every response and log line, `Service-Version: 1` on every
 * response (errors included), `Server-Timing` with the time spent in the server, and one
 * structured access-log line per request. Credentials and
 * bodies are never logged.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { requestPath, type Middleware } from './state.ts';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    Object.assign(ctx.state, { requestId, log: log.child({ requestId }), principal: null, authProblem: null });
    ctx.set('X-Request-Id', requestId);
    ctx.set('Service-Version', '1');
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // The server's own share of the latency (before the body is serialized), for clients and benchmarks.
      if (!ctx.headerSent) ctx.set('Server-Timing', `app;dur=${ms.toFixed(1)}`);
      ctx.state.log.info(
        {
          method: ctx.method,
          path: requestPath(ctx),
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
          workspaceId: ctx.state.principal?.workspaceId,
        },
        'request',
      );
    }
  };
}
