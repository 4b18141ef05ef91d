/**
 * Daily counters per workspace (the agent's free messages): one document per workspace, purpose
 * and UTC day, taken by a conditional `$inc` so that two messages at once can never both take
 * the last one, on either store and across instances.
 */
import type { IndexDeclaration, Store } from '../store/port.ts';
import { utcDay } from './workspaces.ts';

interface AllowanceDoc {
  _id: string;
  workspaceId: string;
  purpose: string;
  day: string;
  used: number;
}

export const allowanceIndexes: IndexDeclaration[] = [{ collection: 'daily_allowances', keys: { workspaceId: 1, day: -1 } }];

export class DailyAllowances {
  constructor(private readonly store: Store) {}

  /** Takes one of `limit` for today; false, changing nothing, when today's are all used. */
  async take(workspaceId: string, purpose: string, limit: number, now = new Date()): Promise<boolean> {
    if (limit <= 0) return false;
    const day = utcDay(now);
    const _id = `${workspaceId}:${purpose}:${day}`;
    const collection = this.store.collection<AllowanceDoc>('daily_allowances');
    // The day's document exists first (an upsert that changes nothing when it does), so the
    // conditional increment below never has to insert: an upsert behind `used < limit` would
    // try to insert a second document with the same _id once the limit is reached.
    await collection.updateOne({ _id }, { $setOnInsert: { workspaceId, purpose, day, used: 0 } }, { upsert: true });
    const taken = await collection.updateOne({ _id, used: { $lt: limit } }, { $inc: { used: 1 } });
    return taken.modifiedCount === 1;
  }
}
