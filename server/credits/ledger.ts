/**
 * Credits: atomic debits that never overdraw, grants and refunds, trial expiry, and the
 * append-only ledger.
 *
 * A movement is applied to the workspace document in one conditional update that also pushes it
 * onto the document's `pending` outbox; it is then copied into the `ledger` collection and pulled
 * from the outbox. A crash between those steps loses nothing: `recover()` copies any movement
 * still pending. No read-then-write ever decides whether a balance suffices.
 *
 * A movement is answered once it is durable in the ledger; the pull that follows is not waited
 * for (each durable write is a disk flush, and this one was a third of a charged call's wait).
 * A pull that never lands leaves the movement pending, and copying it again finds it there.
 */
import { ServiceError } from '../errors.ts';
import { isDuplicateKeyError, type Collection, type Filter, type IndexDeclaration, type Store } from '../store/port.ts';
import type { WorkspaceDoc, Workspaces } from '../workspaces.ts';
import type { OutputOf } from '../../shared/operations/index.ts';
import { Lru } from '../auth/lru.ts';
import { newMovement } from './movement.ts';
import { isTrialOver, type Plan } from './plans.ts';

export interface LedgerDoc {
  _id: string;
  workspaceId: string;
  seq: number;
  at: Date;
  amount: number;
  balanceAfter: number;
  operation: string;
  detail: string;
}

export const ledgerIndexes: IndexDeclaration[] = [
  { collection: 'ledger', keys: { workspaceId: 1, seq: -1 } },
  // Consumption per day reads a workspace's last days.
  { collection: 'ledger', keys: { workspaceId: 1, at: -1 } },
];

/** The body of `GET /api/credits`, as the registry declares it. */
export type CreditsView = OutputOf<'getCredits'>;
export type LedgerPage = OutputOf<'listLedger'>;

const DAY_MS = 86_400_000;

const RECENT_MOVEMENTS = 50;
/** Workspaces whose recent movements are kept between reads. */
const RECENT_CACHE_ENTRIES = 1_000;

type MovementView = CreditsView['movements'][number];

export type Debit = { ok: true } | { ok: false; balance: number };

export class Credits {
  private readonly ledger: Collection<LedgerDoc>;
  private readonly accounts: Collection<WorkspaceDoc>;
  /**
   * Each workspace's most recent movements as last read, under the account's `seq` then. Ledger
   * rows never change and every movement increments `seq`, so while the account's `seq` is the
   * same the rows are too: `GET /api/credits` then reads the account alone. The `seq` comes from
   * the account read of each request, so this holds across instances on MongoDB too.
   */
  private readonly recent = new Lru<string, { seq: number; movements: readonly MovementView[] }>(RECENT_CACHE_ENTRIES);

  constructor(
    store: Store,
    private readonly workspaces: Workspaces,
    /** Receives a failed outbox pull, which no caller waits for. */
    private readonly onBackgroundError: (err: Error) => void = (err) => process.emitWarning(err),
  ) {
    this.ledger = store.collection<LedgerDoc>('ledger');
    this.accounts = workspaces.collection;
  }

  /**
   * Takes `amount` credits, or changes nothing and says the balance that could not cover it
   * (`payment.ts` turns that into the 402). A zero amount is a no-op: operations that return no
   * data charge nothing.
   */
  async debit(workspaceId: string, amount: number, operation: string, detail: string): Promise<Debit> {
    if (amount <= 0) return { ok: true };
    const movement = newMovement(-amount, operation, detail);
    const after = await this.accounts.findOneAndUpdate(
      { _id: workspaceId, balance: { $gte: amount } },
      {
        $inc: { balance: -amount, consumed: amount, seq: 1 },
        $push: { pending: movement },
        $set: { updatedAt: movement.at },
      },
      { returnDocument: 'after' },
    );
    if (!after) {
      const account = await this.workspaces.get(workspaceId);
      if (!account) throw new ServiceError('not_found', 'workspace not found');
      return { ok: false, balance: account.balance };
    }
    await this.record(after, movement.movementId);
    return { ok: true };
  }

  /** Adds credits (grants, refunds). */
  async credit(workspaceId: string, amount: number, operation: string, detail: string): Promise<void> {
    if (!Number.isInteger(amount) || amount <= 0) throw new RangeError('credit amount must be a positive integer');
    const movement = newMovement(amount, operation, detail);
    const after = await this.accounts.findOneAndUpdate(
      { _id: workspaceId },
      { $inc: { balance: amount, seq: 1 }, $push: { pending: movement }, $set: { updatedAt: movement.at } },
      { returnDocument: 'after' },
    );
    if (!after) throw new ServiceError('not_found', 'workspace not found');
    await this.record(after, movement.movementId);
  }

  /** Gives back credits taken by an earlier debit, e.g. when the work it paid for failed. */
  refund(workspaceId: string, amount: number, operation: string, detail: string): Promise<void> {
    return this.credit(workspaceId, amount, `refund:${operation}`, detail);
  }

  /**
   * When a trial is over, its unspent credits expire as one movement. Idempotent and safe under
   * concurrency: the write-off only applies to the balance it read.
   */
  async expireTrialIfDue(account: WorkspaceDoc, now = new Date()): Promise<WorkspaceDoc> {
    let current: WorkspaceDoc | null = account;
    while (current && isTrialOver(current.plan, now) && !current.trialExpiredAt) {
      const movement = newMovement(-current.balance, 'trial_expired', 'Unspent trial credits expired');
      const after: WorkspaceDoc | null = await this.accounts.findOneAndUpdate(
        { _id: current._id, balance: current.balance, trialExpiredAt: null, 'plan.name': 'trial' },
        {
          $set: { balance: 0, trialExpiredAt: now, updatedAt: now },
          $inc: { seq: 1 },
          ...(current.balance > 0 ? { $push: { pending: movement } } : {}),
        },
        { returnDocument: 'after' },
      );
      if (after) {
        if (current.balance > 0) await this.record(after, movement.movementId);
        return after;
      }
      current = await this.workspaces.get(account._id);
    }
    return current ?? account;
  }

  /** Balance, consumption, plan and the most recent movements, newest first. */
  async view(workspaceId: string): Promise<CreditsView | null> {
    let account = await this.workspaces.get(workspaceId);
    if (!account) return null;
    account = await this.expireTrialIfDue(account);
    const settled = account.pending.length === 0;
    if (!settled) await this.flushPending(account);
    return {
      balance: account.balance,
      consumed: account.consumed,
      plan: planView(account.plan),
      movements: (await this.recentMovements(account, settled)) as MovementView[],
    };
  }

  /**
   * The newest movements, from the cache when the account has not moved since they were read.
   * Kept only when they are exactly the account's: nothing was pending (every movement up to its
   * `seq` is in the ledger), and no newer movement landed between the two reads. Shared by every
   * answer that reuses them, so frozen.
   */
  private async recentMovements(account: WorkspaceDoc, settled: boolean): Promise<readonly MovementView[]> {
    const cached = this.recent.get(account._id);
    if (settled && cached?.seq === account.seq) return cached.movements;
    const rows = await this.ledger.find({ workspaceId: account._id }, { sort: { seq: -1 }, limit: RECENT_MOVEMENTS }).toArray();
    const movements = Object.freeze(rows.map((r) => Object.freeze(movementView(r))));
    if (settled && (rows[0]?.seq ?? 0) === account.seq) this.recent.set(account._id, { seq: account.seq, movements });
    return movements;
  }

  /** One page of the ledger, newest first: movements older than `before` (a `seq`), of one operation if given. */
  async page(workspaceId: string, { limit, before, operation }: { limit: number; before?: number; operation?: string }): Promise<LedgerPage> {
    const filter: Filter<LedgerDoc> = { workspaceId };
    if (before !== undefined) filter.seq = { $lt: before };
    if (operation !== undefined) filter.operation = operation;
    // One more than asked says whether there is a next page.
    const rows = await this.ledger.find(filter, { sort: { seq: -1 }, limit: limit + 1 }).toArray();
    const page = rows.slice(0, limit);
    return {
      movements: page.map((r) => ({ ...movementView(r), seq: r.seq })),
      nextBefore: rows.length > limit ? page[page.length - 1]!.seq : null,
    };
  }

  /**
   * Credits spent per UTC day over the last `days` days (today included), oldest first: what
   * operations took, net of their refunds. Grants, and trial credits that expired unspent, are
   * not consumption.
   */
  async usage(workspaceId: string, days: number, now = new Date()): Promise<Array<{ date: string; consumed: number }>> {
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const first = today - (days - 1) * DAY_MS;
    const spent = new Map<number, number>();
    const rows = this.ledger.find(
      { workspaceId, at: { $gte: new Date(first) } },
      { projection: { at: 1, amount: 1, operation: 1 } },
    );
    for await (const row of rows) {
      const isDebit = row.amount < 0 && row.operation !== 'trial_expired';
      if (!isDebit && !row.operation.startsWith('refund:')) continue;
      const day = first + Math.floor((row.at.getTime() - first) / DAY_MS) * DAY_MS;
      spent.set(day, (spent.get(day) ?? 0) - row.amount);
    }
    return Array.from({ length: days }, (_, i) => {
      const day = first + i * DAY_MS;
      return { date: new Date(day).toISOString().slice(0, 10), consumed: Math.max(0, spent.get(day) ?? 0) };
    });
  }

  /** Copies movements left pending by a crash into the ledger; run at start-up. */
  async recover(): Promise<number> {
    const stranded = await this.accounts.find({ 'pending.0': { $exists: true } }).toArray();
    for (const account of stranded) await this.flushPending(account);
    return stranded.length;
  }

  /** Copies an account's outbox into the ledger (after creation, or after a crash). */
  async flushPending(account: WorkspaceDoc): Promise<void> {
    for (const movement of account.pending) await this.record(account, movement.movementId);
  }

  /**
   * Writes one applied movement to the ledger and clears it from the outbox. `after` is the
   * account as returned by the update that applied it, so its balance is the balance after it;
   * for a movement recovered after a crash it is the balance at recovery.
   */
  private async record(after: WorkspaceDoc, movementId: string): Promise<void> {
    const movement = after.pending.find((m) => m.movementId === movementId);
    if (!movement) return;
    try {
      await this.ledger.insertOne({
        _id: movement.movementId,
        workspaceId: after._id,
        seq: after.seq,
        at: movement.at,
        amount: movement.amount,
        balanceAfter: after.balance,
        operation: movement.operation,
        detail: movement.detail,
      });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    this.accounts
      .updateOne({ _id: after._id }, { $pull: { pending: { movementId } } })
      .catch((err: unknown) => this.onBackgroundError(err as Error));
  }
}

function movementView(r: LedgerDoc): MovementView {
  return { movementId: r._id, at: r.at.toISOString(), amount: r.amount, balanceAfter: r.balanceAfter, operation: r.operation, detail: r.detail };
}

export function planView(plan: Plan): CreditsView['plan'] {
  return { name: plan.name, expiresAt: plan.expiresAt ? plan.expiresAt.toISOString() : null };
}
