/**
 * The one way an operation runs, whatever the binding: credential → scope → validation → plan
 * gate → handler → charges settled → the result or a ServiceError. It knows nothing of Koa or
 * MCP: HTTP (`http/routes.ts`) turns an outcome into a status and a body or server-sent events,
 * MCP into a `tools/call` result, the agent into a tool message. A binding that needs an `if`
 * about plans, credits or scopes is a sign the rule belongs here.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { operations, type OperationId } from '../../shared/operations/index.ts';
import { priceOf, type Operation } from '../../shared/operations/types.ts';
import { authorize, type Caller, type Principal } from '../auth/principal.ts';
import { invalidRequest, ServiceError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { HandlerContext, Handlers } from './handler.ts';
import type { AnswerForm, Outcome, RawInput, Receipt, StreamEvent } from './outcome.ts';
import { compileValidators, type RequestPart, type Validate } from './validate.ts';
import { creditsDebited, operationCall, type Binding } from '../metrics.ts';
import { startTrace, type TraceContext } from '../trace-context.ts';


export interface InvokeOptions {
  log: Logger;
  /**
   * Aborted when the caller goes away. As a function it is made on first use: most operations
   * never pass a signal on, and HTTP then spares a listener per request.
   */
  signal: AbortSignal | (() => AbortSignal);
  /** @default 'events' */
  answer?: AnswerForm;
  /** The request's trace, which calls to outside services continue. @default a new trace */
  trace?: TraceContext;
  /** Who called, for the metrics. @default 'http' */
  binding?: Binding;
}

export interface Pipeline {
  invoke(id: OperationId, caller: Caller, raw: RawInput, options: InvokeOptions): Promise<Outcome>;
}

/**
 * A handler as the pipeline calls it. A method's parameters are compared both ways, so every
 * `Handler<Id>` fits: the input it gets has been validated against the very schemas its
 * `InputOf<Id>` is derived from.
 */
interface Runner {
  run(input: Record<string, unknown>, ctx: HandlerContext): Promise<unknown> | AsyncIterable<StreamEvent>;
}

const PARTS: RequestPart[] = ['params', 'query', 'body'];

export function createPipeline(services: Services, handlers: Handlers): Pipeline {
  const validate = compileValidators(operations);
  const runners = new Map<OperationId, Runner>();
  for (const id of Object.keys(operations) as OperationId[]) runners.set(id, { run: handlers[id] });

  const pipeline: Pipeline = {
    async invoke(id, caller, raw, options) {
      const operation: Operation = operations[id];
      const principal = authorize(caller, operation);
      const input = await parse(validate, id, operation, raw);
      if (operation.requiresPlan && principal) await services.payment.requirePlan(principal.workspaceId);

      const receipt: Receipt = { credits: 0 };
      const invokeAgain: HandlerContext['invoke'] = (other, otherRaw, { signal }) =>
        pipeline.invoke(other, caller, otherRaw, { log: options.log, signal, binding: 'agent', trace: ctx.trace });
      const ctx = handlerContext(id, operation, input, principal, services, options, receipt, invokeAgain);
      try {
        const result = runners.get(id)!.run(input, ctx);
        if (isStream(result)) return { kind: 'stream', operation, events: result, receipt };
        return { kind: 'value', operation, value: await result, receipt };
      } catch (err) {
        throw storageRefusal(err) ?? err;
      }
    },
  };
  // Every call counted by operation, binding and outcome (metrics.ts), the agent's tool calls too.
  const run = pipeline.invoke;
  pipeline.invoke = (id, caller, raw, options) => operationCall(id, options.binding ?? 'http', run(id, caller, raw, options));
  return pipeline;
}

/**
 * The parts the operation declares, validated and merged into one input; a violation is a 400
 * naming it. A body not read yet is read last, after the path and query are accepted.
 */
async function parse(validate: Validate, id: OperationId, operation: Operation, raw: RawInput): Promise<Record<string, unknown>> {
  const input: Record<string, unknown> = {};
  for (const part of PARTS) {
    if (!operation.request[part]) continue;
    const value = part === 'body' && raw.readBody ? await raw.readBody() : raw[part];
    const result = validate(id, part, value ?? {});
    if (!result.ok) throw invalidRequest(result.message);
    Object.assign(input, result.value);
  }
  return input;
}

function handlerContext(
  id: OperationId,
  operation: Operation,
  input: Record<string, unknown>,
  principal: Principal | null,
  services: Services,
  { log, signal, answer = 'events', trace = startTrace() }: InvokeOptions,
  receipt: Receipt,
  invoke: HandlerContext['invoke'],
): HandlerContext {
  let abortSignal: AbortSignal | undefined;
  const workspaceId = () => {
    if (!principal) throw new ServiceError('unauthorized', 'This operation needs a credential.');
    return principal.workspaceId;
  };
  const price = (units: number) => priceOf(operation.credits, units, input);
  return {
    operationId: id,
    get workspaceId() {
      return workspaceId();
    },
    principal,
    services,
    log,
    trace,
    get signal() {
      if (!abortSignal) {
        abortSignal = typeof signal === 'function' ? signal() : signal;
        // One request may fan out to many calls (25 rows, 25 model calls), each listening for the abort.
        setMaxListeners(100, abortSignal);
      }
      return abortSignal;
    },
    price,
    async charge(units, detail) {
      const charged = await services.payment.charge(workspaceId(), price(units), id, detail);
      creditsDebited(id, charged);
      receipt.credits += charged;
      return charged;
    },
    budget: (maxCredits) => services.payment.budget(workspaceId(), maxCredits),
    answer,
    invoke,
  };
}

/** The embedded store on a full disk refuses writes before changing anything: 507, retry later. */
function storageRefusal(err: unknown): ServiceError | null {
  if ((err as { code?: unknown } | null)?.code !== 'STORE_FULL') return null;
  return new ServiceError('insufficient_storage', `${(err as Error).message} Retry once space has been freed.`, { retryAfterSeconds: 5 });
}

function isStream(result: Promise<unknown> | AsyncIterable<StreamEvent>): result is AsyncIterable<StreamEvent> {
  return Symbol.asyncIterator in result;
}
