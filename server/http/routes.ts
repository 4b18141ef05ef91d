/**
 * The HTTP binding: one Koa route per registry entry, each a thin adapter over the operation
 * pipeline. It reads the parts of the request, hands them to `invoke`, and writes the outcome as
 * the entry's success status and JSON, or as server-sent events. The routes are made once and
 * mounted under each prefix that serves them (`/v1`, the bare root, the dashboard's `/dashboard`).
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

type Route = (ctx: AppContext) => Promise<void>;

/** Builds a mount of the registry's routes under a prefix; each route is made once and shared by every mount. */
export type MountRegistry = (prefix: string, extraRoutes?: (router: Router<AppState>) => void) => Middleware;

/**
 * The registry's routes, mounted under a prefix: `/v1` (the preferred root), '' (the bare root,
 * its alias) and `/dashboard` (the dashboard's API, `/dashboard/api/…`, as its session). Each mount
 * is a router of its own, so no surface rewrites the path for another.
 *
 * In front of each router, a table of the routes without parameters: a request whose method and
 * path are exactly one of them goes straight to it, and the router's regular expressions walk
 * only for the rest (parameters, a trailing slash, HEAD, and the 404 or 405 with `Allow` it
 * answers). A route enters the table only when no route registered before it, which the router
 * would try first, matches its path, so the table never answers differently.
 */
export function registryRoutes(pipeline: Pipeline, held: HeldStreams): MountRegistry {
  const routes = (Object.keys(operations) as OperationId[]).map((id) => {
    const operation: Operation = operations[id];
    return { operation, route: operationRoute(id, operation, successStatus(operation), pipeline, held) };
  });
  return (prefix, extraRoutes) => {
    const router = new Router<AppState>(prefix ? { prefix } : {});
    extraRoutes?.(router);
    const exact = new Map<string, Route>();
    const withParameters: Array<{ method: string; pattern: RegExp }> = [];
    for (const { operation, route } of routes) {
      router.register(koaPath(operation.path), [operation.method], route);
      const { method, path } = operation;
      if (path.includes('{')) {
        withParameters.push({ method, pattern: pathPattern(path) });
      } else if (!withParameters.some((p) => p.method === method && p.pattern.test(path))) {
        exact.set(`${method} ${prefix}${path}`, route);
      }
    }
    const routed = router.routes();
    const allowed = router.allowedMethods();
    return (ctx, next) => {
      const hit = exact.get(`${ctx.method} ${ctx.path}`);
      if (hit) {
        // What the router gives a route it matched, here with no parameters to capture.
        ctx.params = ctx.request.params = {};
        return hit(ctx);
      }
      return routed(ctx, () => allowed(ctx, next));
    };
  };
}

/** A registry path as the router matches it: a parameter is one segment. */
function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\{\w+\}/g, '[^/]+')}$`);
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
