/**
 * The HTTP binding: one Koa route per registry entry, each a thin adapter over the operation
 * pipeline. It reads the parts of the request, hands them to `invoke`, and writes the outcome as
 * the entry's success status and JSON, or as server-sent events. Routes are registered once,
 * without the version prefix (versioning.ts strips `/v1`, so the bare root is the alias).
 */
import Router from '@koa/router';
import { operations, type OperationId } from '../../shared/operations/index.ts';
import { bodyLimitOf, type Operation } from '../../shared/operations/types.ts';
import type { Logger } from 'pino';
import { successStatus, type InvokeOptions, type Pipeline } from '../pipeline/pipeline.ts';
import type { AnswerForm } from '../invocation/outcome.ts';
import { FileAnswer } from '../lib/file-answer.ts';
import { isHoldingRaw, jsonBytes } from '../lib/raw-json.ts';
import type { TraceContext } from '../lib/trace-context.ts';
import { readJsonBody } from './body.ts';
import type { HeldStreams } from './held-streams.ts';
import { resumeEventStream, sendEventStream } from './sse.ts';
import type { AppContext, AppState, Middleware } from './state.ts';

export function koaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function buildRouter(pipeline: Pipeline, held: HeldStreams, extraRoutes: (router: Router<AppState>) => void): Router<AppState> {
  const router = new Router<AppState>();
  extraRoutes(router);
  for (const id of Object.keys(operations) as OperationId[]) {
    const operation: Operation = operations[id];
    const status = successStatus(operation);
    router.register(koaPath(operation.path), [operation.method], operationRoute(id, operation, status, pipeline, held));
  }
  return router;
}

type Route = (ctx: AppContext) => Promise<void>;

/**
 * The router's middleware with a precomputed table in front: a request whose method and path are
 * exactly a registry route without parameters goes straight to its handler, the router's regular
 * expressions walk only for the rest (parameters, a trailing slash, HEAD, 404 and 405 with
 * `Allow`, which it still answers). A table entry is made only where the router's own first match
 * for that method and path is that very route, so the table never answers differently.
 */
export function routeTable(router: Router<AppState>): Middleware {
  const table = new Map<string, { path: string; route: Route }>();
  for (const layer of router.stack) {
    if (layer.paramNames.length > 0 || typeof layer.path !== 'string' || layer.path.includes('(') || layer.stack.length !== 1) continue;
    for (const method of layer.methods) {
      if (method === 'HEAD') continue;
      const first = router.match(layer.path, method).pathAndMethod[0];
      if (first === layer && !table.has(`${method} ${layer.path}`)) table.set(`${method} ${layer.path}`, { path: layer.path, route: layer.stack[0] as unknown as Route });
    }
  }
  const routes = router.routes() as unknown as Middleware;
  return (ctx, next) => {
    const hit = table.get(`${ctx.method} ${ctx.path}`);
    if (!hit) return routes(ctx, next);
    // What the router sets on a match, with no parameters to capture.
    const c = ctx as AppContext & { routerPath?: string; _matchedRoute?: string; captures?: string[] };
    c.captures = [];
    ctx.params = (ctx.request as typeof ctx.request & { params: Record<string, string> }).params = {};
    c.routerPath = c._matchedRoute = hit.path;
    return hit.route(ctx);
  };
}

function operationRoute(id: OperationId, operation: Operation, status: number, pipeline: Pipeline, held: HeldStreams): Route {
    return async (ctx) => {
      ctx.state.operation = id;
      const caller = { principal: ctx.state.principal, refused: ctx.state.authProblem };
      // A stream that also declares a JSON answer gives it to a client that prefers JSON.
      const answer = operation.stream?.json && ctx.accepts('text/event-stream', 'application/json') === 'application/json' ? 'value' : 'events';
      const streaming = Boolean(operation.stream) && answer === 'events';
      const lastEventId = ctx.get('Last-Event-ID');
      const raw = { params: ctx.params, query: ctx.query, readBody: () => readJsonBody(ctx, bodyLimitOf(operation)) };
      if (streaming && lastEventId) {
        // A reconnection is never run again: it resumes the stream it names, or is told there is nothing more.
        const key = ctx.headers['idempotency-key'] !== undefined ? ctx.get('Idempotency-Key') : undefined;
        const workspaceId = await pipeline.resumer(id, caller, raw, key);
        return resumeEventStream(ctx, workspaceId ? held.find(workspaceId, id, lastEventId) : null);
      }
      // A stream's work is stopped by its held stream (a client may come back), anything else's when its client leaves.
      const gone = new ClientGone(ctx);
      // Only a stream needs its own controller; making one per request cost ~5 µs (issue 23).
      const streamAbort = streaming ? new AbortController() : null;
      const outcome = await pipeline.invoke(
        id,
        caller,
        raw,
        new RequestInvocation(ctx, streamAbort ? streamAbort.signal : () => gone.controller.signal, answer),
      );
      if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
      if (outcome.kind === 'stream') {
        const workspaceId = ctx.state.principal?.workspaceId ?? null;
        return sendEventStream(ctx, held, { workspaceId, operationId: id, streamId: outcome.streamId, events: outcome.events, abort: streamAbort ?? new AbortController(), pausable: operation.stream?.pausable !== false });
      }
      ctx.status = status;
      if (outcome.value instanceof FileAnswer) {
        const file = outcome.value;
        ctx.attachment(file.fileName);
        ctx.type = file.mediaType;
        ctx.length = file.length;
        ctx.body = file.open();
      } else if (isHoldingRaw(outcome.value)) {
        ctx.type = 'application/json; charset=utf-8';
        ctx.body = jsonBytes(outcome.value);
      } else {
        ctx.body = outcome.value;
      }
    };
}

/**
 * The pipeline's options for one request. A class rather than a literal with a getter: see
 * `pipeline/handler-context.ts` for what a literal's getter cost the young-generation collector.
 */
class RequestInvocation implements InvokeOptions {
  readonly trace: TraceContext;
  /** The `Idempotency-Key` header as sent (even empty, which the pipeline refuses), when there is one. */
  readonly idempotencyKey?: string;
  /** This binding writes answers holding RawJson itself, but an answer stored under a key must be objects. */
  readonly rawJson: boolean;

  constructor(
    private readonly ctx: AppContext,
    readonly signal: InvokeOptions['signal'],
    readonly answer: AnswerForm,
  ) {
    this.trace = ctx.state.trace;
    if (ctx.headers['idempotency-key'] !== undefined) this.idempotencyKey = ctx.get('Idempotency-Key');
    this.rawJson = this.idempotencyKey === undefined;
  }

  /** The request's logger is made on first use; most operations never log. */
  get log(): Logger {
    return this.ctx.state.log;
  }
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
