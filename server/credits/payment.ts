/**
 * Every 402 the service answers is decided here: the plan gate before an operation runs, the
 * balance when a charge is settled, and the per-request budget (`maxCredits`) handlers spend
 * from. The debit itself is the ledger's atomic conditional update, so a charge never overdraws.
 */
import { isPaid, type Operation } from '../../shared/operations/types.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Workspaces } from './workspaces.ts';
import { Budget, credits, type Reservation } from '../invocation/budget.ts';
import type { DailyAllowances } from './allowance.ts';
import type { Credits } from './ledger.ts';
import { planBlocker } from './plans.ts';

export class Payment {
  constructor(
    private readonly ledger: Credits,
    private readonly workspaces: Workspaces,
    private readonly allowances: DailyAllowances,
  ) {}

  /** 402 `plan_required` unless the workspace's plan allows paid operations; a trial that ran out expires here. */
  async requirePlan(workspaceId: string, now = new Date()): Promise<void> {
    const account = await this.workspaces.get(workspaceId);
    if (!account) throw new ServiceError('unauthorized', 'The workspace of this credential no longer exists.');
    const current = await this.ledger.expireTrialIfDue(account, now);
    const blocker = planBlocker(current.plan, now);
    if (blocker) throw new ServiceError('plan_required', blocker);
  }

  /**
   * A message to the agent: free with an active plan (trial or paid); without one, one of the
   * workspace's `freePerDay` messages of today, else 402 `plan_required`. The chat itself costs
   * no credits; its tools meet their own plan gate in the pipeline.
   */
  async requireAgentMessage(workspaceId: string, freePerDay: number, now = new Date()): Promise<void> {
    const account = await this.workspaces.get(workspaceId);
    if (!account) throw new ServiceError('unauthorized', 'The workspace of this credential no longer exists.');
    const current = await this.ledger.expireTrialIfDue(account, now);
    const blocker = planBlocker(current.plan, now);
    if (!blocker) return;
    if (await this.allowances.take(workspaceId, 'agent_message', freePerDay, now)) return;
    throw new ServiceError('plan_required', `${blocker} Without a plan the agent answers ${freePerDay} messages a day, all used today.`);
  }

  /**
   * 402 `insufficient_credits` before a paid operation runs when what its invocation may still
   * spend (`maxCredits`: the agent message's cap less what its earlier calls charged) is nothing:
   * a call that could charge is not started. A free operation is never refused here.
   */
  requireRoom(operation: Pick<Operation, 'credits'>, maxCredits: number): void {
    if (maxCredits <= 0 && isPaid(operation)) {
      throw new ServiceError('insufficient_credits', "This message's maxCredits are spent, so a call that charges was not run.");
    }
  }

  /**
   * Takes `amount`, or answers 402 `insufficient_credits` having changed nothing. Resolves with
   * what was charged. `cap`: what the caller may still spend (the agent's `maxCredits` left for a
   * tool call), refused before the debit when the amount is over it. `reservation`: a stored cap
   * shared by many calls (a job's `maxCredits`), taken from before the debit and given back if the
   * debit fails. `note`: the run it is made under (an Idempotency-Key, a job's item), which the
   * movement keeps (ledger.ts, `paidUnder`).
   */
  async charge(
    workspaceId: string,
    amount: number,
    operationId: string,
    detail: string,
    { cap, reservation, note }: { cap?: number; reservation?: Reservation; note?: string } = {},
  ): Promise<number> {
    if (cap !== undefined && amount > cap) {
      throw new ServiceError('insufficient_credits', `This call may spend at most ${credits(cap)} (the message's maxCredits left) and costs ${credits(amount)}; nothing was charged. Ask for fewer results.`);
    }
    if (reservation === undefined || amount <= 0) return this.debit(workspaceId, amount, operationId, detail, note);
    if (!(await reservation.reserve(amount))) {
      throw new ServiceError('insufficient_credits', `This call costs ${credits(amount)}, more than what is left of the job's maxCredits.`);
    }
    try {
      return await this.debit(workspaceId, amount, operationId, detail, note);
    } catch (err) {
      await reservation.release(amount);
      throw err;
    }
  }

  private async debit(workspaceId: string, amount: number, operationId: string, detail: string, note: string | undefined): Promise<number> {
    const debit = await this.ledger.debit(workspaceId, amount, operationId, detail, note);
    if (!debit.ok) {
      throw new ServiceError('insufficient_credits', `This operation costs ${credits(amount)} and the balance is ${debit.balance}.`);
    }
    return Math.max(0, amount);
  }

  /** What the movements made under `note` since `since` took in all (ledger.ts). */
  paidUnder(workspaceId: string, note: string, since: Date): Promise<number> {
    return this.ledger.paidUnder(workspaceId, note, since);
  }

  /** Gives back `amount` taken earlier (a movement `refund:<operation>` in the ledger), under the run `note` if given. */
  refund(workspaceId: string, amount: number, operationId: string, detail: string, note?: string): Promise<void> {
    return this.ledger.refund(workspaceId, amount, operationId, detail, note);
  }

  async budget(workspaceId: string, cap?: number): Promise<Budget> {
    const account = await this.workspaces.get(workspaceId);
    return new Budget(account?.balance ?? 0, cap);
  }
}
