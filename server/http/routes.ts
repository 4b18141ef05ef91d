/**
 * The HTTP binding: one Koa route per registry entry, each a thin adapter over the operation
 * pipeline. It reads the parts of the request, hands them to `invoke`, and writes the outcome as
 * the entry's success status and JSON, or as server-sent events. Routes are registered once,
 * without the version prefix (versioning.ts strips `/v1`, so the bare root is the alias).
 */
import Router from '@koa/router';
import { operations, type OperationId } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';
import { successStatus, type Pipeline } from '../pipeline/pipeline.ts';
import { readJsonBody } from './body.ts';
import { authorize } from '../auth/principal.ts';
import type { HeldStreams } from './held-streams.ts';
import { resumeEventStream, sendEventStream } from './sse.ts';
import type { AppContext, AppState } from './state.ts';

export function koaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function buildRouter(pipeline: Pipeline, held: HeldStreams, extraRoutes: (router: Router<AppState>) => void): Router<AppState> {
  const router = new Router<AppState>();
  extraRoutes(router);
  for (const id of Object.keys(operations) as OperationId[]) {
    const operation: Operation = operations[id];
    const status = successStatus(operation);
    router.register(koaPath(operation.path), [operation.method], async (ctx) => {
      ctx.state.operation = id;
      const caller = { principal: ctx.state.principal, refused: ctx.state.authProblem };
      // A stream that also declares a JSON answer gives it to a client that prefers JSON.
      const answer = operation.stream?.json && ctx.accepts('text/event-stream', 'application/json') === 'application/json' ? 'value' : 'events';
      const streaming = Boolean(operation.stream) && answer === 'events';
      const lastEventId = ctx.get('Last-Event-ID');
      if (streaming && lastEventId) {
        // A reconnection is never run again: it resumes the stream it names, or is told there is nothing more.
        const principal = authorize(caller, operation);
        return resumeEventStream(ctx, principal ? held.find(principal.workspaceId, id, lastEventId) : null);
      }
      // A stream's work is stopped by its held stream (a client may come back), anything else's when its client leaves.
      const gone = new ClientGone(ctx);
      const streamAbort = new AbortController();
      const outcome = await pipeline.invoke(
        id,
        caller,
        { params: ctx.params, query: ctx.query, readBody: () => readJsonBody(ctx) },
        {
          log: ctx.state.log,
          signal: streaming ? streamAbort.signal : () => gone.controller.signal,
          answer,
          ...idempotencyKeyOf(ctx),
          trace: ctx.state.trace,
        },
      );
      if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
      if (outcome.kind === 'stream') {
        const workspaceId = ctx.state.principal?.workspaceId ?? null;
        return sendEventStream(ctx, held, { workspaceId, operationId: id, streamId: outcome.streamId, events: outcome.events, abort: streamAbort, pausable: operation.stream?.pausable !== false });
      }
      ctx.status = status;
      ctx.body = outcome.value;
    });
  }
  return router;
}

/** The `Idempotency-Key` header as sent (even empty, which the pipeline refuses), when there is one. */
function idempotencyKeyOf(ctx: AppContext): { idempotencyKey?: string } {
  return ctx.headers['idempotency-key'] === undefined ? {} : { idempotencyKey: ctx.get('Idempotency-Key') };
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
