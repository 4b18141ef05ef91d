/**
 * What an invocation takes and gives, apart from the pipeline itself, so that a handler's
 * context can run another operation (the agent's tools) without an import cycle.
 */
import type { Reservation } from './budget.ts';
import type { Operation } from '../../shared/operations/types.ts';

/** An operation's input as a binding received it, in the registry's three parts. */
export interface RawInput {
  params?: unknown;
  query?: unknown;
  body?: unknown;
  /**
   * The body, not read yet (HTTP): called only for an operation that declares one, once the
   * credential, its scope, the path and the query are accepted, so nothing refused costs a parse.
   */
  readBody?: () => Promise<unknown>;
}

/** Any event of any stream, as bindings write them. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

/** Credits charged so far by one invocation; a stream's total grows with each page it sends. */
export interface Receipt {
  credits: number;
  /** Told each price before it is debited (negative when refused), under an Idempotency-Key. */
  charging?: (credits: number) => Promise<void>;
  /**
   * Credits a run of this key that a crash cut had already charged (idempotency.ts): charges are
   * taken from them first, and what is left when the run ends is refunded.
   */
  prepaid?: number;
}

export type Outcome =
  | {
      kind: 'value';
      operation: Operation;
      value: unknown;
      receipt: Receipt;
      replayed?: true;
      /** A replayed answer: what its first request charged (its receipt, this call's, holds 0). */
      firstCharged?: number;
    }
  | {
      kind: 'stream';
      operation: Operation;
      events: AsyncIterable<StreamEvent>;
      receipt: Receipt;
      /** Names this run of the stream: SSE event ids are `<streamId>:<seq>`, and a reconnection names it. */
      streamId: string;
      /** The answer stored under an `Idempotency-Key`, sent again rather than run again. */
      replayed?: true;
    };

/**
 * A limit shared by several calls (a job's `maxCredits` over its items): each charge reserves its
 * amount first, with a conditional update, so concurrent items cannot together pass it; a charge
 * the balance then refuses gives its reservation back.
 */
export interface CreditCap extends Reservation {
  /** What is left, as last known: budgets (`ctx.budget`) are capped by it. */
  remaining(): number;
}

/**
 * How the client wants a stream operation answered: its events, or (when the registry declares a
 * JSON answer for it) the one JSON body. Other operations ignore it.
 */
export type AnswerForm = 'events' | 'value';
