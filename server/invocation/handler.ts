/**
 * A handler never sees a binding: it gets validated input and this context, and returns the
 * response body, or, for a stream operation, an async iterable of its events. The context holds
 * only what belongs to one call; the repositories and clients a handler uses are given once, at
 * start-up, to its area's factory (`createOutreachHandlers({ templates, … })`, gathered by
 * `server/start/handlers.ts`).
 * HTTP, MCP and the agent all reach handlers through the pipeline (`pipeline/pipeline.ts`), so
 * each rule is written once.
 *
 * This folder is the handler contract (this context, the caller, the budget, an invocation's
 * outcome): below both the pipeline, which implements it, and the areas, which write handlers
 * against it, so neither imports the other.
 */
import type { Logger } from 'pino';
import type { InputOf, OperationId, OutputOf, StreamEventOf, StreamOperationId } from '../../shared/operations/index.ts';
import type { Operations } from '../../shared/operations/index.ts';
import type { Principal } from './caller.ts';
import type { Budget } from './budget.ts';
import type { FileAnswer } from '../lib/file-answer.ts';
import type { TraceContext } from '../lib/trace-context.ts';
import type { AnswerForm, Outcome, RawInput, StreamEvent } from './outcome.ts';

export interface HandlerContext {
  operationId: OperationId;
  /** The caller's workspace; throws `unauthorized` on an operation open to anonymous callers. */
  readonly workspaceId: string;
  principal: Principal | null;
  log: Logger;
  /** The request's W3C trace: pass it to outgoing calls, which send it on as a child `traceparent`. */
  trace: TraceContext;
  /** Aborted when the caller goes away; pass it to outgoing calls. */
  readonly signal: AbortSignal;
  /**
   * Charges the workspace for data actually returned, priced by the operation's credit rule in
   * the registry (`priceOf`): `units` are the rows or leads returned, 1 for a fixed-price success
   * (0 when nothing billable was served), or the providers' summed credits. Call it once the
   * result is known and before returning it: it answers 402 `insufficient_credits` and changes
   * nothing when the balance does not cover it. Resolves with the credits charged.
   */
  charge(units: number, detail: string): Promise<number>;
  /** What this invocation has charged so far: the `creditsCharged` its answer reports, equal to its ledger movements. */
  readonly creditsCharged: number;
  /** What `units` would cost under the operation's credit rule, for budgeting before any charge. */
  price(units: number): number;
  /** What this request may spend: the balance, capped by the caller's `maxCredits`. */
  budget(maxCredits?: number): Promise<Budget>;
  /**
   * For a stream operation that declares a JSON answer: 'value' when the client asked for JSON,
   * and the handler then resolves with that body instead of yielding events.
   */
  answer: AnswerForm;
  /**
   * Whether the answer may hold stored JSON unparsed (`RawJson`, marked with `holdsRaw`; see
   * raw-json.ts): only when the binding writes it itself (HTTP, without an Idempotency-Key).
   */
  readonly rawJson: boolean;
  /**
   * Runs another operation for the same caller, exactly as a binding would (scope, validation,
   * plan gate, charges): how the agent calls its tools.
   */
  invoke(id: OperationId, raw: RawInput, options: { signal: AbortSignal; idempotencyKey?: string; maxCredits?: number }): Promise<Outcome>;
}

type JsonAnswerOf<Id extends OperationId> = Operations[Id] extends { stream: { json: true } } ? Promise<OutputOf<Id>> : never;

/** An operation that answers a file (`file` in its entry) hands the binding the file, not its text. */
type AnswerOf<Id extends OperationId> = Operations[Id] extends { file: object } ? FileAnswer : OutputOf<Id>;

export type Handler<Id extends OperationId> = Id extends StreamOperationId
  ? (input: InputOf<Id>, ctx: HandlerContext) => AsyncIterable<StreamEventOf<Id>> | JsonAnswerOf<Id>
  : (input: InputOf<Id>, ctx: HandlerContext) => Promise<AnswerOf<Id>>;

export type Handlers = { [Id in OperationId]: Handler<Id> };
