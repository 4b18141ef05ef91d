/**
 * First in the chain: a request id on every response and log line, `Service-Version: 1` on every
 * response (errors included), `Server-Timing` with the time spent in the server, and one
 * structured access-log line per request. Credentials and
 * bodies are never logged.
 *
 * Also the request's W3C trace (trace-context.ts): continued from a valid `traceparent`, else
 * started; its trace id is on every log line beside the request id, and the answer's `traceparent`
 * names the request's span. And its metrics: the request counted and timed under the operation
 * its route set (`unmatched` when none did), and an event stream counted while it is open.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import * as metrics from '../lib/metrics.ts';
import { traceFrom, traceparentOf, type TraceContext } from '../lib/trace-context.ts';
import type { RouteLabel } from '../lib/metrics.ts';
import { setHeader, type AppContext, type AppState, type Middleware } from './state.ts';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's state. Its logger, a pino child carrying the request and trace ids, is made on
 * first use: most requests log only their access line, which names both ids itself, and a child
 * per request was a measurable share of the HTTP core's time (issue 23).
 */
class RequestState implements AppState {
  operation: RouteLabel | null = null;
  principal: AppState['principal'] = null;
  authProblem: AppState['authProblem'] = null;
  private child: Logger | undefined = undefined;

  constructor(
    private readonly root: Logger,
    readonly requestId: string,
    readonly trace: TraceContext,
  ) {}

  get log(): Logger {
    return (this.child ??= this.root.child({ requestId: this.requestId, traceId: this.trace.traceId }));
  }

  set log(log: Logger) {
    this.child = log;
  }

  /** The access line: through the child when one was made, else with both ids inline (the same fields). */
  access(fields: Record<string, unknown>): void {
    if (this.child) this.child.info(fields, 'request');
    else this.root.info({ requestId: this.requestId, traceId: this.trace.traceId, ...fields }, 'request');
  }
}

export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const trace = traceFrom(ctx.get('traceparent'));
    const state = new RequestState(log, requestId, trace);
    ctx.state = state;
    setHeader(ctx, 'X-Request-Id', requestId);
    setHeader(ctx, 'traceparent', traceparentOf(trace));
    setHeader(ctx, 'Service-Version', '1');
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // The server's own share of the latency (before the body is serialized), for clients and benchmarks.
      setHeader(ctx, 'Server-Timing', `app;dur=${ms.toFixed(1)}`);
      const operation = state.operation ?? fallbackLabel(ctx);
      metrics.httpRequest(operation, ctx.status, ms / 1000);
      if (isEventStream(ctx)) ctx.res.once('close', metrics.streamOpened(operation));
      state.access({
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
        workspaceId: state.principal?.workspaceId,
      });
    }
  };
}

/**
 * No route named the request: the dashboard's pages, the API reference (both served outside the
 * registry's routes, by their own middleware), or nothing at all (404, 405, refused before routing).
 */
function fallbackLabel(ctx: AppContext): metrics.RouteLabel {
  const path = ctx.path;
  if (path.startsWith('/dashboard')) return 'dashboard';
  return path === '/docs' || path.startsWith('/docs/') ? 'docs' : 'unmatched';
}

/**
 * A body still to be streamed as server-sent events, to a client still there (whose `close` is
 * then still to come). Rare: the type is read only when the body is a stream.
 */
function isEventStream(ctx: AppContext): boolean {
  const body = ctx.body as { pipe?: unknown } | null;
  return typeof body?.pipe === 'function' && !ctx.res.closed && !ctx.res.writableFinished && ctx.response.is('text/event-stream') !== false;
}
