import type { RouterInstance } from '@koa/router';
import type { Next, ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { Principal, Refusal } from '../invocation/caller.ts';
import type { RouteLabel } from '../lib/metrics.ts';
import type { TraceContext } from '../lib/trace-context.ts';

/** What the middleware chain learns about a request, in the order it learns it. */
export interface AppState {
  requestId: string;
  /** The caller's W3C trace when it sent a valid `traceparent`, else a new one; this request's span in it. */
  trace: TraceContext;
  /** Logs with the request id and the trace id. */
  log: Logger;
  /** What the request is counted under in the metrics, set by the route that answers it (null: none did). */
  operation: RouteLabel | null;
  /** The authenticated caller, or null. */
  principal: Principal | null;
  /** Why a presented credential was refused; answered (401, or 403 no_workspace) only by routes that need one. */
  authProblem: Refusal | null;
}

/** What the registry's routers add to a request's context (set by them, or by the exact-route table). */
export interface RoutedContext {
  params: Record<string, string>;
  request: { params: Record<string, string> };
  router: RouterInstance<AppState>;
}

export type AppContext = ParameterizedContext<AppState, RoutedContext>;

export type Middleware = (ctx: AppContext, next: Next) => Promise<void>;

/**
 * Sets one header whose value is already a string: Koa's `ctx.set` builds two arrays per call to
 * normalize values, a measurable cost at a handful of headers per request (issue 23).
 */
export function setHeader(ctx: AppContext, name: string, value: string): void {
  if (!ctx.res.headersSent) ctx.res.setHeader(name, value);
}
