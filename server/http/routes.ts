/**
 * The HTTP binding: one Koa route per registry entry, each a thin adapter over the operation
 * pipeline. It reads the parts of the request, hands them to `invoke`, and writes the outcome as
 * the entry's success status and JSON, or as server-sent events. Routes are registered once,
 * without the version prefix (versioning.ts strips `/v1`, so the bare root is the alias).
 */
import Router from '@koa/router';
import { operations, type OperationId } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { readJsonBody } from './body.ts';
import { sendEventStream } from './sse.ts';
import type { AppContext, AppState } from './state.ts';

export function koaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function buildRouter(pipeline: Pipeline, extraRoutes: (router: Router<AppState>) => void): Router<AppState> {
  const router = new Router<AppState>();
  extraRoutes(router);
  for (const id of Object.keys(operations) as OperationId[]) {
    const operation: Operation = operations[id];
    const status = successStatus(operation);
    router.register(koaPath(operation.path), [operation.method], async (ctx) => {
      ctx.state.operation = id;
      const gone = new ClientGone(ctx);
      // A stream that also declares a JSON answer gives it to a client that prefers JSON.
      const answer = operation.stream?.json && ctx.accepts('text/event-stream', 'application/json') === 'application/json' ? 'value' : 'events';
      const outcome = await pipeline.invoke(
        id,
        { principal: ctx.state.principal, refused: ctx.state.authProblem },
        { params: ctx.params, query: ctx.query, readBody: () => readJsonBody(ctx) },
        { log: ctx.state.log, signal: () => gone.controller.signal, answer, trace: ctx.state.trace },
      );
      if (outcome.kind === 'stream') return sendEventStream(ctx, outcome.events, gone.controller);
      ctx.status = status;
      ctx.body = outcome.value;
    });
  }
  return router;
}

/** The status of a success: the first response the registry declares. */
function successStatus(op: Operation): number {
  return Number(Object.keys(op.responses)[0] ?? 200);
}

/**
 * Aborts when the client goes away: `close` on the response before it finished. Made on first
 * use, since most operations never pass a signal on.
 */
class ClientGone {
  private made?: AbortController;

  constructor(private readonly ctx: AppContext) {}

  get controller(): AbortController {
    if (!this.made) {
      const controller = (this.made = new AbortController());
      const res = this.ctx.res;
      res.once('close', () => {
        if (!res.writableFinished) controller.abort();
      });
    }
    return this.made;
  }
}
