/**
 * Middleware run one after another, as one middleware: how each surface (the API, MCP, the
 * dashboard, the API reference, metrics) is given only the steps it needs. A step may throw
 * rather than reject (the plain functions that hand on `next()`'s promise): that is turned into a
 * rejection, as Koa's own composition does.
 */
import type { Next } from 'koa';
import type { AppContext, Middleware } from './state.ts';

export function chain(...steps: Middleware[]): Middleware {
  return (ctx, next) => run(steps, 0, ctx, next);
}

function run(steps: Middleware[], index: number, ctx: AppContext, next: Next): Promise<void> {
  if (index === steps.length) return next();
  try {
    return steps[index]!(ctx, () => run(steps, index + 1, ctx, next));
  } catch (err) {
    return Promise.reject(err);
  }
}
