/** One change of a balance, as it stands in the ledger (and, on MongoDB, waits first in its workspace's outbox). */
import { timeOrderedId } from '../lib/time-ordered-id.ts';

export interface Movement {
  movementId: string;
  at: Date;
  /** Negative for a debit. */
  amount: number;
  operation: string;
  detail: string;
}

export function newMovement(amount: number, operation: string, detail: string, at = new Date()): Movement {
  return { movementId: timeOrderedId(at.getTime()), at, amount, operation, detail };
}
