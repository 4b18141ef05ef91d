/**
 * The context one invocation hands its handler. A class, not an object literal: a literal with
 * getters defines new accessor closures on every call, so V8 gives each such object a hidden class
 * of its own, made in old space and pointing at the request; everything the request touched then
 * survived the young-generation collections, and on bench:http collecting it took a fifth of the
 * process's time (issue 23). Getters on a prototype cost nothing of the kind.
 *
 * The functions stay own properties: handlers pass them on detached (`charge: ctx.charge`).
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { OperationId } from '../../shared/operations/index.ts';
import { priceOf, type Operation } from '../../shared/operations/types.ts';
import type { Principal } from '../invocation/caller.ts';
import type { Payment } from '../credits/payment.ts';
import type { Budget } from '../invocation/budget.ts';
import { ServiceError } from '../lib/errors.ts';
import { creditsDebited } from '../lib/metrics.ts';
import { startTrace, type TraceContext } from '../lib/trace-context.ts';
import type { HandlerContext } from '../invocation/handler.ts';
import type { AnswerForm, CreditCap, Receipt } from '../invocation/outcome.ts';

/** What the context reads of the binding's options (the pipeline's `InvokeOptions`). */
export interface ContextOptions {
  /** Read when used: HTTP hands a request logger that is made on first use (request-context.ts). */
  readonly log: Logger;
  signal: AbortSignal | (() => AbortSignal);
  answer?: AnswerForm;
  trace?: TraceContext;
  /** The most the whole invocation may charge (the agent's remaining budget for a tool call). */
  maxCredits?: number;
  /** A cap shared beyond this call (a job's `maxCredits`, stored): each charge reserves from it first. */
  creditCap?: CreditCap;
  rawJson?: boolean;
  /** Added to the detail of each ledger movement it charges: what paid (a job's item), so the ledger says it. */
  ledgerNote?: string;
}

export class InvocationContext implements HandlerContext {
  readonly trace: TraceContext;
  readonly answer: AnswerForm;
  private abortSignal: AbortSignal | undefined = undefined;

  constructor(
    readonly operationId: OperationId,
    private readonly operation: Operation,
    private readonly input: Record<string, unknown>,
    readonly principal: Principal | null,
    private readonly payment: Payment,
    private readonly options: ContextOptions,
    private readonly receipt: Receipt,
    readonly invoke: HandlerContext['invoke'],
  ) {
    this.trace = options.trace ?? startTrace();
    this.answer = options.answer ?? 'events';
  }

  get workspaceId(): string {
    if (!this.principal) throw new ServiceError('unauthorized', 'This operation needs a credential.');
    return this.principal.workspaceId;
  }

  get log(): Logger {
    return this.options.log;
  }

  get rawJson(): boolean {
    return this.options.rawJson === true;
  }

  get signal(): AbortSignal {
    if (!this.abortSignal) {
      const { signal } = this.options;
      this.abortSignal = typeof signal === 'function' ? signal() : signal;
      // One request may fan out to many calls (25 rows, 25 model calls), each listening for the abort.
      setMaxListeners(100, this.abortSignal);
    }
    return this.abortSignal;
  }

  get creditsCharged(): number {
    return this.receipt.credits;
  }

  price = (units: number): number => priceOf(this.operation.credits, units, this.input);

  charge = async (units: number, what: string): Promise<number> => {
    const price = this.price(units);
    const note = this.options.ledgerNote;
    const detail = note === undefined ? what : `${what} (${note})`;
    const { receipt } = this;
    // A retry of a run a crash cut: what that run charged pays first (idempotency.ts).
    const prepaid = Math.min(price, Math.max(0, receipt.prepaid ?? 0));
    if (prepaid > 0) receipt.prepaid! -= prepaid;
    const owed = price - prepaid;
    const { charging } = receipt;
    const cap = this.creditsLeft();
    const { creditCap } = this.options;
    if (charging === undefined || owed <= 0) return this.settle(await this.payment.charge(this.workspaceId, owed, this.operationId, detail, { cap, reservation: creditCap, note }), prepaid);
    await charging(owed);
    try {
      return this.settle(await this.payment.charge(this.workspaceId, owed, this.operationId, detail, { cap, reservation: creditCap, note }), prepaid);
    } catch (err) {
      await charging(-owed).catch(() => {});
      if (prepaid > 0) receipt.prepaid! += prepaid;
      throw err;
    }
  };

  /** `prepaid`: the part a cut run under the same key had paid, counted in this call's charge but not debited again. */
  private settle(charged: number, prepaid: number): number {
    creditsDebited(this.operationId, charged);
    this.receipt.credits += charged + prepaid;
    return charged + prepaid;
  }

  /** The handler's own cap (its input's `maxCredits`), within what the invocation and its job may still charge. */
  budget = (maxCredits?: number): Promise<Budget> => {
    const limits = [maxCredits, this.creditsLeft(), this.options.creditCap?.remaining()].filter((n): n is number => n !== undefined);
    return this.payment.budget(this.workspaceId, limits.length === 0 ? undefined : Math.min(...limits));
  };

  private creditsLeft(): number | undefined {
    const { maxCredits } = this.options;
    return maxCredits === undefined ? undefined : Math.max(0, maxCredits - this.receipt.credits);
  }
}
