/**
 * Workspaces: the unit of isolation and of billing. A workspace document also carries the credit
 * account (balance, consumption, movements not yet copied to the ledger) so that every debit is
 * one conditional single-document update.
 */
import { randomUUID } from 'node:crypto';
import { newMovement, type Movement } from './movement.ts';
import { planFor, TRIAL_CREDITS, type Plan, type PlanName } from './plans.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';

export interface WorkspaceDoc {
  _id: string;
  name: string;
  plan: Plan;
  balance: number;
  consumed: number;
  /** Increments with every movement; orders the ledger. */
  seq: number;
  /** Movements applied to the balance but not yet in the ledger collection (an outbox). */
  pending: Movement[];
  /** Set once an expired trial's credits have been written off. */
  trialExpiredAt: Date | null;
  /**
   * Credits spent per UTC day (`YYYY-MM-DD`), net of refunds, moved by the same update as each
   * movement: what `GET /credits/usage` reads, instead of summing the ledger. Whole from
   * `spentFrom` on; the days before it (an account made before the counts) are read from the ledger.
   */
  spent?: Record<string, number>;
  spentFrom?: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A moment's UTC day, as `spent` names it. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

export const workspaceIndexes: IndexDeclaration[] = [{ collection: 'workspaces', keys: { 'pending.movementId': 1 } }];

export class Workspaces {
  readonly collection: Collection<WorkspaceDoc>;

  constructor(store: Store) {
    this.collection = store.collection<WorkspaceDoc>('workspaces');
  }

  /**
   * Creates a workspace; a trial starts with its 500 credits already granted as a movement. `id`
   * is chosen by the caller when something must name the workspace before it exists (an OAuth
   * sign-up claims its subject first); inserting an id twice fails with a duplicate-key error.
   */
  async create(name: string, planName: PlanName = 'trial', now = new Date(), id: string = randomUUID()): Promise<WorkspaceDoc> {
    const grant: Movement | null =
      planName === 'trial'
        ? newMovement(TRIAL_CREDITS, 'trial_grant', 'Free trial credits', now)
        : null;
    const doc: WorkspaceDoc = {
      _id: id,
      name,
      plan: planFor(planName, now),
      balance: grant ? grant.amount : 0,
      consumed: 0,
      seq: grant ? 1 : 0,
      pending: grant ? [grant] : [],
      trialExpiredAt: null,
      spent: {},
      spentFrom: utcDay(now),
      createdAt: now,
      updatedAt: now,
    };
    await this.collection.insertOne(doc);
    return doc;
  }

  get(workspaceId: string): Promise<WorkspaceDoc | null> {
    return this.collection.findOne({ _id: workspaceId });
  }

  async setPlan(workspaceId: string, planName: PlanName, now = new Date()): Promise<WorkspaceDoc | null> {
    return this.collection.findOneAndUpdate(
      { _id: workspaceId },
      { $set: { plan: planFor(planName, now), trialExpiredAt: null, updatedAt: now } },
      { returnDocument: 'after' },
    );
  }

  async count(): Promise<number> {
    return this.collection.countDocuments({});
  }
}
