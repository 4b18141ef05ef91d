import type { Next, ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { Principal, Refusal } from '../auth/principal.ts';

/** What the middleware chain learns about a request, in the order it learns it. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** The authenticated caller, or null. */
  principal: Principal | null;
  /** Why a presented credential was refused; answered (401, or 403 no_workspace) only by routes that need one. */
  authProblem: Refusal | null;
}

export type AppContext = ParameterizedContext<AppState>;

/** The path as the client sent it (routing strips `/v1` from `ctx.path`). */
export function requestPath(ctx: AppContext): string {
  return ctx.originalUrl.split('?')[0] ?? ctx.path;
}
export type Middleware = (ctx: AppContext, next: Next) => Promise<void>;
