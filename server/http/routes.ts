/**
 * Koa routes generated from the operation registry. They are registered once, without the
 * version prefix (versioning.ts strips `/v1`, so the bare root is the alias). Each route runs the
 * same steps in the same order: scope, validation, plan, handler, response.
 */
import Router from '@koa/router';
import { setMaxListeners } from 'node:events';
import { operations, type OperationId } from '../../shared/operations/index.ts';
import { priceOf, type Operation } from '../../shared/operations/types.ts';
import { planBlocker } from '../credits/plans.ts';
import type { Handler, HandlerContext, Handlers, StreamEvent } from '../pipeline/handler.ts';
import type { Services } from '../services.ts';
import { authorize } from './authenticate.ts';
import { ServiceError, invalidRequest } from '../errors.ts';
import { sendEventStream } from './sse.ts';
import type { AppContext } from './state.ts';
import { compileValidators, type Validate } from './validate.ts';

export function koaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function buildRouter(services: Services, handlers: Handlers, extraRoutes: (router: Router) => void): Router {
  const router = new Router();
  const validate = compileValidators(operations);
  extraRoutes(router);
  for (const id of Object.keys(operations) as OperationId[]) {
    const op: Operation = operations[id];
    const route: Route = { id, op, run: handlers[id] as Handler<OperationId>, status: successStatus(op) };
    router.register(koaPath(op.path), [op.method], async (ctx) => {
      await handle(ctx as unknown as AppContext & { params: Record<string, string> }, route, services, validate);
    });
  }
  return router;
}

interface Route {
  id: OperationId;
  op: Operation;
  run: Handler<OperationId>;
  /** The status of a success: the first response the registry declares. */
  status: number;
}

async function handle(
  ctx: AppContext & { params: Record<string, string> },
  { id, op, run, status }: Route,
  services: Services,
  validate: Validate,
): Promise<void> {
  authorize(ctx, op.scope);

  const input: Record<string, unknown> = {};
  const parts = [
    ['params', op.request.params, ctx.params],
    ['query', op.request.query, ctx.query],
    ['body', op.request.body, ctx.request.body ?? {}],
  ] as const;
  for (const [part, schema, value] of parts) {
    if (!schema) continue;
    const result = validate(id, part, value);
    if (!result.ok) throw invalidRequest(result.message);
    Object.assign(input, result.value);
  }

  const principal = ctx.state.principal;
  if (op.requiresPlan && principal) {
    const account = await services.workspaces.get(principal.workspaceId);
    if (!account) throw new ServiceError('unauthorized', 'The workspace of this API key no longer exists.');
    const current = await services.credits.expireTrialIfDue(account);
    const blocker = planBlocker(current.plan, new Date());
    if (blocker) throw new ServiceError('plan_required', blocker);
  }

  // Created on first use: most handlers never pass a signal on. `close` on the response before
  // it finished means the client went away.
  let abort: AbortController | undefined;
  const abortController = () => {
    if (!abort) {
      const controller = (abort = new AbortController());
      // One request may fan out to many calls (25 rows, 25 model calls), each listening for the abort.
      setMaxListeners(100, controller.signal);
      ctx.res.once('close', () => {
        if (!ctx.res.writableFinished) controller.abort();
      });
    }
    return abort;
  };
  const context: HandlerContext = {
    operationId: id,
    get workspaceId() {
      if (!principal) throw new ServiceError('unauthorized', 'This operation needs an API key.');
      return principal.workspaceId;
    },
    principal,
    services,
    log: ctx.state.log,
    get signal() {
      return abortController().signal;
    },
    price: (units) => priceOf(op.credits, units, input),
    charge: async (units, detail) => {
      const amount = context.price(units);
      await services.credits.debit(context.workspaceId, amount, id, detail);
      return amount;
    },
  };

  const result = await run(input as never, context);
  if (op.stream) {
    await sendEventStream(ctx, result as AsyncIterable<StreamEvent>, abortController());
    return;
  }
  ctx.status = status;
  ctx.body = result;
}

function successStatus(op: Operation): number {
  return Number(Object.keys(op.responses)[0] ?? 200);
}
