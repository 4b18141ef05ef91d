/**
 * The one way an operation runs, whatever the binding: credential → scope → validation → plan
 * gate → handler → charges settled → the result or a ServiceError. It knows nothing of Koa or
 * MCP: HTTP (`http/routes.ts`) turns an outcome into a status and a body or server-sent events,
 * MCP into a `tools/call` result, the agent into a tool message. A binding that needs an `if`
 * about plans, credits or scopes is a sign the rule belongs here.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { operations, type OperationId } from '../../shared/operations/index.ts';
import { takesIdempotencyKey, type Operation } from '../../shared/operations/types.ts';
import { authorize, requireCredential } from '../auth/principal.ts';
import type { Caller } from '../invocation/caller.ts';
import { invalidRequest, invalidRequestMessage, ServiceError, storeUnavailable } from '../lib/errors.ts';
import { isStoreUnavailable } from '../store/port.ts';
import type { Payment } from '../credits/payment.ts';
import type { HandlerContext, Handlers } from '../invocation/handler.ts';
import { InvocationContext } from './handler-context.ts';
import { checkIdempotencyKey, recordEvents, type Claim, type IdempotencyKeys, replayEvents, requestHash, settleFailure, type Stored } from './idempotency.ts';
import type { AnswerForm, CreditCap, Outcome, RawInput, Receipt, StreamEvent } from '../invocation/outcome.ts';
import { compileValidators, type RequestPart, type Validate } from './validate.ts';
import { operationCall, type Binding } from '../lib/metrics.ts';
import type { TraceContext } from '../lib/trace-context.ts';


export interface InvokeOptions {
  log: Logger;
  /**
   * Aborted when the caller goes away. As a function it is made on first use: most operations
   * never pass a signal on, and HTTP then spares a listener per request.
   */
  signal: AbortSignal | (() => AbortSignal);
  /** @default 'events' */
  answer?: AnswerForm;
  /**
   * The client's `Idempotency-Key` (HTTP's header, MCP's `_meta`, the agent's call): for an
   * operation that takes one, the first answer under it is stored and replayed (idempotency.ts).
   */
  idempotencyKey?: string;
  /** The request's trace, which calls to outside services continue. @default a new trace */
  trace?: TraceContext;
  /** Who called, for the metrics. @default 'http' */
  binding?: Binding;
  /**
   * The most this invocation may charge in all, whatever its own input allows: the agent's
   * message-wide `maxCredits`, passed into each tool call (payment.ts refuses a charge past it).
   */
  maxCredits?: number;
  /** A cap beyond this call's own (a job's `maxCredits`, stored): charges reserve from it first. */
  creditCap?: CreditCap;
  /**
   * The binding writes the answer itself with `jsonBytes` (raw-json.ts), so a handler may put
   * stored JSON into it unparsed. Never with an `idempotencyKey`, whose stored answer is written
   * as objects are. @default false
   */
  rawJson?: boolean;
  /** Added to each ledger movement's detail: what paid (a job's item). */
  ledgerNote?: string;
}

export interface Pipeline {
  invoke(id: OperationId, caller: Caller, raw: RawInput, options: InvokeOptions): Promise<Outcome>;
  /**
   * The workspace whose held streams of `id` this caller may resume (a reconnection naming its
   * last event), authorized and validated as a new call of `id` would be (401/403, 400: the
   * reconnection resends the request, which must still be one the operation takes); null for a
   * caller without a workspace, who has none to resume.
   */
  resumer(id: OperationId, caller: Caller, raw: RawInput, idempotencyKey?: string): Promise<string | null>;
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

/** What the pipeline itself decides with: the plan gate and charges, and the idempotency keys. */
export interface PipelineDeps {
  payment: Payment;
  idempotency: IdempotencyKeys;
}

export function createPipeline({ payment, idempotency }: PipelineDeps, handlers: Handlers): Pipeline {
  const validate = compileValidators(operations);
  const runners = new Map<OperationId, Runner>();
  for (const id of Object.keys(operations) as OperationId[]) runners.set(id, { run: handlers[id] });

  const pipeline: Pipeline = {
    async invoke(id, caller, raw, options) {
      const operation: Operation = operations[id];
      // An operation acting for others (jobs) has no scope of its own, yet needs a credential before anything is read.
      const principal = operation.actsFor ? requireCredential(caller) : authorize(caller, operation);
      // A paid call the invocation's cap (the agent's message) can no longer pay for is not started.
      if (options.maxCredits !== undefined) payment.requireRoom(operation, options.maxCredits);
      // Checked before the body is read; ignored by an operation that takes none (a GET is idempotent anyway).
      const key =
        options.idempotencyKey !== undefined && principal && takesIdempotencyKey(operation) ? checkIdempotencyKey(options.idempotencyKey) : undefined;
      const { input, parts } = await parse(validate, id, operation, raw);
      // The scope and plan that count are those of the operation it acts for.
      const actedFor = operation.actsFor?.field ? operations[input[operation.actsFor.field] as OperationId] : undefined;
      if (actedFor) authorize(caller, actedFor);
      // A job of paid items is a paid call: not started once the invocation's cap is spent.
      if (actedFor && options.maxCredits !== undefined) payment.requireRoom(actedFor, options.maxCredits);
      const requiresPlan = (actedFor ?? operation).requiresPlan;
      const receipt: Receipt = { credits: 0 };
      // Each charge under a client's key names it in the ledger (a job's item and the agent's calls name what they are already).
      const named = key !== undefined && options.ledgerNote === undefined && options.binding !== 'agent' ? { ...options, ledgerNote: `Idempotency-Key ${key}` } : options;
      const run = async (): Promise<Outcome> => {
        if (requiresPlan && principal) await payment.requirePlan(principal.workspaceId);
        const invokeAgain: HandlerContext['invoke'] = (other, otherRaw, { signal, idempotencyKey, maxCredits }) =>
          pipeline.invoke(other, caller, otherRaw, {
            log: options.log,
            signal,
            binding: 'agent',
            trace: ctx.trace,
            ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
            ...(maxCredits !== undefined ? { maxCredits } : {}),
          });
        const ctx = new InvocationContext(id, operation, input, principal, payment, named, receipt, invokeAgain);
        try {
          const result = runners.get(id)!.run(input, ctx);
          if (isStream(result)) return { kind: 'stream', operation, events: result, receipt, streamId: randomUUID() };
          return { kind: 'value', operation, value: await result, receipt };
        } catch (err) {
          throw storageRefusal(err) ?? (isStoreUnavailable(err) ? storeUnavailable() : err);
        }
      };
      if (key === undefined || !principal) return run();

      // The answer form is part of the request where the client chooses it (events or JSON).
      const hash = requestHash(id, operation.stream?.json ? { ...parts, answer: options.answer ?? 'events' } : parts);
      const held = await idempotency.claim(principal.workspaceId, key, id, hash);
      if ('stored' in held) return replay(operation, held.stored);
      const { claim, since } = held;
      let { prepaid } = held;
      // The dead run's count may hold a charge whose debit never landed: where its movements name
      // the key, the ledger says what it really paid.
      if (prepaid > 0 && named.ledgerNote !== undefined) {
        const paid = await payment.paidUnder(principal.workspaceId, named.ledgerNote, since);
        if (paid !== prepaid) await claim.charging(paid - prepaid);
        prepaid = paid;
      }
      receipt.charging = claim.charging;
      if (prepaid > 0) receipt.prepaid = prepaid;
      const refundUnused = () => returnUnused(payment, claim, receipt, principal.workspaceId, id, named.ledgerNote ?? `Idempotency-Key ${key}`);
      let outcome: Outcome;
      try {
        outcome = await run();
      } catch (err) {
        await refundUnused()
          .then(() => settleFailure(claim, err, receipt))
          .catch((storeErr) => options.log.warn({ err: storeErr }, 'idempotency: the failure was not recorded'));
        throw err;
      }
      if (outcome.kind === 'stream') return { ...outcome, events: recordEvents(outcome.events, claim, receipt, outcome.streamId, refundUnused) };
      // The answer is given even if it could not be stored: it was paid for.
      await refundUnused()
        .then(() => claim.complete({ kind: 'value', status: successStatus(operation), body: JSON.stringify(outcome.value), credits: receipt.credits }))
        .catch((err) => options.log.warn({ err }, 'idempotency: the answer was not stored'));
      return outcome;
    },
    async resumer(id, caller, raw, idempotencyKey) {
      const principal = authorize(caller, operations[id]);
      if (idempotencyKey !== undefined && principal && takesIdempotencyKey(operations[id])) checkIdempotencyKey(idempotencyKey);
      await parse(validate, id, operations[id], raw);
      return principal?.workspaceId ?? null;
    },
  };
  // Every call counted by operation, binding and outcome (metrics.ts), the agent's tool calls too.
  const unmetered = pipeline.invoke;
  pipeline.invoke = (id, caller, raw, options) => operationCall(id, options.binding ?? 'http', unmetered(id, caller, raw, options));
  return pipeline;
}

/**
 * A retry of a run a crash cut (idempotency.ts) that cost less than that run had already charged:
 * the difference is refunded by a movement naming the key (or the job's item). The claim's count is lowered first, so
 * a crash between the two leaves the customer short of the refund, never credits made from nothing.
 */
async function returnUnused(payment: Payment, claim: Claim, receipt: Receipt, workspaceId: string, id: OperationId, note: string): Promise<void> {
  const unused = receipt.prepaid ?? 0;
  if (unused <= 0) return;
  receipt.prepaid = 0;
  await claim.charging(-unused);
  await payment.refund(workspaceId, unused, id, `${note}: charged by its first run, which a restart cut, beyond what its retry cost`, note);
}

/**
 * An answer stored under an `Idempotency-Key`, given again: nothing runs, nothing is charged now;
 * what the first request charged goes with it (`firstCharged`, a failure's `details.charged`).
 */
function replay(operation: Operation, { answer, charged }: Stored): Outcome {
  const receipt: Receipt = { credits: 0 };
  switch (answer.kind) {
    case 'value':
      return { kind: 'value', operation, value: JSON.parse(answer.body), receipt, replayed: true, firstCharged: charged };
    case 'stream':
      return { kind: 'stream', operation, events: replayEvents(answer), receipt, streamId: answer.streamId, replayed: true };
    case 'error':
      throw new ServiceError(answer.code, answer.message, charged > 0 ? { charged } : {});
  }
}

/** The status of a success: the first response the registry declares. */
export function successStatus(op: Operation): number {
  return Number(Object.keys(op.responses)[0] ?? 200);
}

/**
 * The parts the operation declares, validated and merged into one input; a violation is a 400
 * naming it. A body not read yet is read last, after the path and query are accepted.
 */
async function parse(
  validate: Validate,
  id: OperationId,
  operation: Operation,
  raw: RawInput,
): Promise<{ input: Record<string, unknown>; parts: Partial<Record<RequestPart, unknown>> }> {
  const input: Record<string, unknown> = {};
  const parts: Partial<Record<RequestPart, unknown>> = {};
  // Every part is checked before refusing, so the 400 names every violation of the request.
  const problems: string[] = [];
  for (const part of PARTS) {
    if (!operation.request[part]) continue;
    const value = part === 'body' && raw.readBody ? await raw.readBody() : raw[part];
    // Only a part not sent reads as `{}`: a body of `null` is a value, and no object.
    const result = validate(id, part, value === undefined ? {} : value);
    if (!result.ok) {
      problems.push(...result.problems);
      continue;
    }
    parts[part] = result.value;
    Object.assign(input, result.value);
  }
  if (problems.length > 0) throw invalidRequest(invalidRequestMessage(problems));
  return { input, parts };
}

/** The embedded store on a full disk refuses writes before changing anything: 507, retry later. */
function storageRefusal(err: unknown): ServiceError | null {
  if ((err as { code?: unknown } | null)?.code !== 'STORE_FULL') return null;
  return new ServiceError('insufficient_storage', `${(err as Error).message} Retry once space has been freed.`, { retryAfterSeconds: 5 });
}

function isStream(result: Promise<unknown> | AsyncIterable<StreamEvent>): result is AsyncIterable<StreamEvent> {
  return Symbol.asyncIterator in result;
}
