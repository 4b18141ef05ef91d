/** One change of a balance, as it stands in the ledger (and, on MongoDB, waits first in its workspace's outbox). */
import { timeOrderedId } from '../lib/time-ordered-id.ts';

export interface Movement {
  movementId: string;
  at: Date;
  /** Negative for a debit. */
  amount: number;
  operation: string;
  detail: string;
  /**
   * What paid, when a run under an Idempotency-Key, a job's item or a watch's delivery did (its
   * detail names it too, for people): how `paidUnder` finds that run's movements, exactly.
   */
  note?: string;
}

export function newMovement(amount: number, operation: string, detail: string, at = new Date(), note?: string): Movement {
  return { movementId: timeOrderedId(at.getTime()), at, amount, operation, detail, ...(note !== undefined ? { note } : {}) };
}
