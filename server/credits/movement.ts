/** One change of a balance, as it waits in a workspace's outbox and then stands in the ledger. */
import { randomUUID } from 'node:crypto';

export interface Movement {
  movementId: string;
  at: Date;
  /** Negative for a debit. */
  amount: number;
  operation: string;
  detail: string;
}

export function newMovement(amount: number, operation: string, detail: string, at = new Date()): Movement {
  return { movementId: randomUUID(), at, amount, operation, detail };
}
