/** One change of a balance, as it waits in a workspace's outbox and then stands in the ledger. */
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
