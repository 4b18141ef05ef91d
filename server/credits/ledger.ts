/**
 * Credits: atomic debits that never overdraw, grants and refunds, trial expiry, and the
 * append-only ledger. A movement is applied to the workspace document in one conditional update;
 * no read-then-write ever decides whether a balance suffices.
 *
 * Where the store has transactions across collections (the embedded store), the update and the
 * movement's ledger row are one transaction (`move`): both or neither, committed before the
 * answer. That replaced, on the embedded store, an outbox filed after the answer: three commits a
 * charge (the debit, the row, the outbox's pull), against one now, and a single charged lookup's
 * time in the store was mostly those (issue 41).
 *
 * MongoDB (and FerretDB, which has no transactions) writes one document at a time: the update
 * also pushes the movement onto the account's `pending` outbox; the movement is then copied into
 * the `ledger` collection, and pulled from the outbox. A crash between those steps loses
 * nothing: `recover()` copies any movement still pending (also one an older version left in an
 * embedded store's outbox). The pull is never waited for: a pull that never lands leaves the
 * movement pending, and copying it again finds it filed.
 *
 * A movement's `seq` and `balanceAfter` are those of the update that applied it: the debit that
 * made it reads them from that update's answer. Whoever else files a pending movement (a read of
 * the credits, another instance, start-up after a crash) works them out from the account and the
 * ledger (`placePending`), never from the account's current `seq` and balance, which later
 * movements have already moved on.
 *
 * The outbox is cleared by pulling the movement as it was pushed (the whole document): FerretDB
 * 1.24 does not apply a `$pull` whose condition names a field of the array's documents.
 *
 * The same update counts what each UTC day spent (`spent` on the account, see `usage`), so the
 * consumption per day is read from one document, not summed from the ledger's rows.
 */
import { ServiceError } from '../lib/errors.ts';
import { isDuplicateKeyError, isStoreClosed, type Collection, type Filter, type IndexDeclaration, type Store, type UpdateFilter } from '../store/port.ts';
import { utcDay, type WorkspaceDoc, type Workspaces } from './workspaces.ts';
import { MAX_USAGE_DAYS } from '../../shared/schemas/credits.ts';
import type { OutputOf } from '../../shared/operations/index.ts';
import { Lru } from '../lib/lru.ts';
import { newMovement, type Movement } from './movement.ts';
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
  /** The run that made it (Movement's `note`); absent on rows filed before it was kept. */
  note?: string;
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
/** Days of counts kept past the oldest a usage read can ask before they are dropped (a write every week, not at every read). */
const PRUNE_AFTER_EXTRA_DAYS = 7;
/** Ledger rows read at a time while placing pending movements (usually a few are enough). */
const PLACING_BATCH = 64;
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
  /** The store's transactions across collections, if it has them (see the header). */
  private readonly atomically: Store['atomically'];
  /** Writes no caller waits for (outbox pulls), until each ends. */
  private readonly background = new Set<Promise<void>>();

  constructor(
    store: Store,
    private readonly workspaces: Workspaces,
    /** Receives a failed outbox pull, which no caller waits for. */
    private readonly onBackgroundError: (err: Error) => void = (err) => process.emitWarning(err),
  ) {
    this.ledger = store.collection<LedgerDoc>('ledger');
    this.accounts = workspaces.collection;
    this.atomically = store.atomically?.bind(store);
  }

  /**
   * Takes `amount` credits, or changes nothing and says the balance that could not cover it
   * (`payment.ts` turns that into the 402). A zero amount is a no-op: operations that return no
   * data charge nothing. `note`: the run it is made under (Movement's `note`).
   */
  async debit(workspaceId: string, amount: number, operation: string, detail: string, note?: string): Promise<Debit> {
    if (amount <= 0) return { ok: true };
    const movement = newMovement(-amount, operation, detail, new Date(), note);
    const after = await this.move(
      { _id: workspaceId, balance: { $gte: amount } },
      { $inc: { balance: -amount, consumed: amount, seq: 1, [`spent.${utcDay(movement.at)}`]: amount }, $set: { updatedAt: movement.at } },
      movement,
    );
    if (!after) {
      const account = await this.workspaces.get(workspaceId);
      if (!account) throw new ServiceError('not_found', 'workspace not found');
      return { ok: false, balance: account.balance };
    }
    return { ok: true };
  }

  /** Adds credits (grants, refunds). */
  async credit(workspaceId: string, amount: number, operation: string, detail: string, note?: string): Promise<void> {
    if (!Number.isInteger(amount) || amount <= 0) throw new RangeError('credit amount must be a positive integer');
    const movement = newMovement(amount, operation, detail, new Date(), note);
    // A refund gives back what a debit spent, on the day it is given (as the ledger says it).
    const spent = isRefund(operation) ? { [`spent.${utcDay(movement.at)}`]: -amount } : {};
    const after = await this.move({ _id: workspaceId }, { $inc: { balance: amount, seq: 1, ...spent }, $set: { updatedAt: movement.at } }, movement);
    if (!after) throw new ServiceError('not_found', 'workspace not found');
  }

  /** Gives back credits taken by an earlier debit, e.g. when the work it paid for failed. */
  refund(workspaceId: string, amount: number, operation: string, detail: string, note?: string): Promise<void> {
    return this.credit(workspaceId, amount, `${REFUND}${operation}`, detail, note);
  }

  /**
   * When a trial is over, its unspent credits expire as one movement: what was left when it
   * ended, written off the first time the workspace is used after. Credits granted (or refunded)
   * since are not the trial's and stay. Idempotent and safe under concurrency: the write-off only
   * applies to the balance it read.
   */
  async expireTrialIfDue(account: WorkspaceDoc, now = new Date()): Promise<WorkspaceDoc> {
    let current: WorkspaceDoc | null = account;
    while (current && isTrialOver(current.plan, now) && !current.trialExpiredAt) {
      const unspent = Math.min(current.balance, await this.balanceBefore(current._id, current.plan.expiresAt!));
      const read: Filter<WorkspaceDoc> = { _id: current._id, balance: current.balance, trialExpiredAt: null, 'plan.name': 'trial' };
      // `seq` counts movements only: a seq without one would leave a gap that placePending
      // could not tell from a movement still pending.
      const after: WorkspaceDoc | null =
        unspent > 0
          ? await this.move(read, { $set: { trialExpiredAt: now, updatedAt: now }, $inc: { balance: -unspent, seq: 1 } }, newMovement(-unspent, 'trial_expired', 'Unspent trial credits expired'))
          : await this.accounts.findOneAndUpdate(read, { $set: { trialExpiredAt: now, updatedAt: now } }, { returnDocument: 'after' });
      if (after) return after;
      current = await this.workspaces.get(account._id);
    }
    return current ?? account;
  }

  /**
   * The balance just before `at`, as the ledger says: the newest row's before then. A movement
   * before then still in the outbox (MongoDB) is not counted yet, which only errs the customer's way.
   */
  private async balanceBefore(workspaceId: string, at: Date): Promise<number> {
    const [row] = await this.ledger.find({ workspaceId, at: { $lt: at } }, { sort: { seq: -1 }, limit: 1, projection: { balanceAfter: 1 } }).toArray();
    return row?.balanceAfter ?? 0;
  }

  /** Balance, consumption, plan and the most recent movements, newest first. */
  async view(workspaceId: string): Promise<CreditsView | null> {
    let account = await this.workspaces.get(workspaceId);
    if (!account) return null;
    account = await this.expireTrialIfDue(account);
    await this.pruneDailyCounts(account);
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
   * not consumption. Read from the account's counts (`spent`), and from the ledger for the days
   * before they began (`spentFrom`): a ledger holding a row per charge made this read grow with
   * the workspace's use (2.0 s for 110,000 rows in the window).
   */
  async usage(workspaceId: string, days: number, now = new Date()): Promise<Array<{ date: string; consumed: number }>> {
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const first = today - (days - 1) * DAY_MS;
    const account = await this.workspaces.get(workspaceId);
    const countedFrom = account?.spentFrom ? Date.parse(account.spentFrom) : Infinity;
    const spent = new Map<number, number>();
    if (first < countedFrom) {
      const rows = this.ledger.find(
        { workspaceId, at: { $gte: new Date(first), ...(countedFrom < Infinity ? { $lt: new Date(countedFrom) } : {}) } },
        { projection: { at: 1, amount: 1, operation: 1 } },
      );
      for await (const row of rows) {
        const isDebit = row.amount < 0 && row.operation !== 'trial_expired';
        if (!isDebit && !isRefund(row.operation)) continue;
        const day = first + Math.floor((row.at.getTime() - first) / DAY_MS) * DAY_MS;
        spent.set(day, (spent.get(day) ?? 0) - row.amount);
      }
    }
    for (const [date, amount] of Object.entries(account?.spent ?? {})) {
      const day = Date.parse(date);
      if (day >= countedFrom && day >= first) spent.set(day, (spent.get(day) ?? 0) + amount);
    }
    return Array.from({ length: days }, (_, i) => {
      const day = first + i * DAY_MS;
      return { date: utcDay(new Date(day)), consumed: Math.max(0, spent.get(day) ?? 0) };
    });
  }

  /**
   * Starts the daily counts (`spent`) of accounts made before them, from tomorrow (UTC): today's
   * spending before this moment is only in the ledger, which `usage` reads for the days before
   * `spentFrom`. Run at start-up; an account already counting is left as it is.
   */
  async startDailyCounts(now = new Date()): Promise<number> {
    const tomorrow = utcDay(new Date(now.getTime() + DAY_MS));
    return (await this.accounts.updateMany({ spentFrom: { $exists: false } }, { $set: { spentFrom: tomorrow, spent: {} } })).modifiedCount;
  }

  /** Drops the counts of days older than any usage read can ask (MAX_USAGE_DAYS), once there are some: an account read at every charge stays small. */
  private async pruneDailyCounts(account: WorkspaceDoc, now = new Date()): Promise<void> {
    const dates = Object.keys(account.spent ?? {});
    if (dates.length <= MAX_USAGE_DAYS + PRUNE_AFTER_EXTRA_DAYS) return;
    const oldest = utcDay(new Date(now.getTime() - MAX_USAGE_DAYS * DAY_MS));
    const old = dates.filter((date) => date < oldest);
    if (old.length > 0) await this.accounts.updateOne({ _id: account._id }, { $unset: Object.fromEntries(old.map((date) => [`spent.${date}`, ''])) });
  }

  /**
   * What the movements made under `note` since `since` took in all, from the ledger and the
   * account's outbox: what a run under an Idempotency-Key really paid, whatever its own count says.
   * Read from each movement's `note`, never from its detail: a detail ends with text a client chose
   * (a job's item id), which could name another run, whose charges would then be refunded to it.
   * Only rows filed before notes were kept are read from their detail (debits `… (note)`, refunds
   * `note: …`), as they were then.
   */
  async paidUnder(workspaceId: string, note: string, since: Date): Promise<number> {
    const madeUnder = (m: { note?: string; detail: string }) =>
      m.note !== undefined ? m.note === note : m.detail.endsWith(`(${note})`) || m.detail.startsWith(`${note}:`);
    const seen = new Set<string>();
    let paid = 0;
    for await (const row of this.ledger.find({ workspaceId, at: { $gte: since } }, { projection: { amount: 1, detail: 1, note: 1 } })) {
      if (!madeUnder(row)) continue;
      seen.add(row._id);
      paid -= row.amount;
    }
    const account = await this.workspaces.get(workspaceId);
    for (const m of account?.pending ?? []) if (!seen.has(m.movementId) && m.at >= since && madeUnder(m)) paid -= m.amount;
    return Math.max(0, paid);
  }

  /** Copies movements left pending by a crash into the ledger; run at start-up. */
  async recover(): Promise<number> {
    const stranded = await this.accounts.find({ 'pending.0': { $exists: true } }).toArray();
    for (const account of stranded) await this.flushPending(account);
    return stranded.length;
  }

  /**
   * Copies an account's outbox into the ledger (after creation, after a crash, or when a read
   * finds movements whose debit has not filed them yet), each under its own `seq` and balance.
   */
  async flushPending(account: WorkspaceDoc): Promise<void> {
    if (account.pending.length === 0) return;
    // One pull at a time, each awaited: off the charged path, and FerretDB 1.24 loses all but one
    // of concurrent updates to one document.
    for (const { movement, seq, balanceAfter, filed } of await this.placePending(account)) {
      if (!filed) await this.insertRow(account._id, movement, seq, balanceAfter);
      await this.accounts.updateOne({ _id: account._id }, { $pull: { pending: movement } });
    }
  }

  /**
   * The `seq` and `balanceAfter` of each movement in `account.pending`, as read in one account
   * document. Every `seq` up to the account's belongs to exactly one movement, pushed onto the
   * outbox by the same update that took its `seq`, so the outbox is in `seq` order and a movement
   * leaves it only once it is in the ledger. Walking the ledger down from the account's `seq`, a
   * `seq` with no row is therefore the newest pending movement not found in the ledger yet; each
   * balance before is the one after less the amount. Rows filed meanwhile by the movement's own
   * debit carry the same `seq`, so racing writers agree.
   */
  private async placePending(account: WorkspaceDoc): Promise<Array<{ movement: Movement; seq: number; balanceAfter: number; filed: boolean }>> {
    const pending = new Map(account.pending.map((m) => [m.movementId, m]));
    const placed: Array<{ movement: Movement; seq: number; balanceAfter: number; filed: boolean }> = [];
    const found = new Set<string>();
    let newest = account.pending.length - 1;
    let seq = account.seq;
    let balance = account.balance;
    /** Files the movement missing at `seq`: the newest pending one not found in the ledger. */
    const placeMissing = (): boolean => {
      while (newest >= 0 && found.has(account.pending[newest]!.movementId)) newest--;
      const movement = account.pending[newest--];
      if (!movement) return false;
      placed.push({ movement, seq, balanceAfter: balance, filed: false });
      balance -= movement.amount;
      seq--;
      return true;
    };
    let below = account.seq + 1;
    while (placed.length < pending.size && seq > 0) {
      const rows = await this.ledger
        .find({ workspaceId: account._id, seq: { $lt: below } }, { sort: { seq: -1 }, limit: PLACING_BATCH, projection: { seq: 1, amount: 1 } })
        .toArray();
      for (const row of rows) {
        while (seq > row.seq && placed.length < pending.size) if (!placeMissing()) return placed;
        if (placed.length === pending.size) return placed;
        if (row.seq !== seq) continue;
        const movement = pending.get(row._id);
        if (movement) {
          found.add(row._id);
          placed.push({ movement, seq, balanceAfter: balance, filed: true });
        }
        balance -= row.amount;
        seq--;
      }
      if (rows.length < PLACING_BATCH) {
        // No rows further down: every remaining seq is a pending movement.
        while (seq > 0 && placed.length < pending.size) if (!placeMissing()) break;
        break;
      }
      below = rows[rows.length - 1]!.seq;
    }
    return placed;
  }

  /**
   * Applies `update`, which moves the account's balance and `seq`, to the account `filter` finds,
   * with `movement`'s ledger row: in one transaction where the store has them, or through the
   * account's outbox (see the header). The account as the update left it (its `seq` and balance
   * are the movement's), or null if none matched.
   */
  private async move(filter: Filter<WorkspaceDoc>, update: UpdateFilter<WorkspaceDoc>, movement: Movement): Promise<WorkspaceDoc | null> {
    if (this.atomically) {
      return this.atomically((writes) => {
        const after = writes.findOneAndUpdate<WorkspaceDoc>(this.accounts.collectionName, filter, update, { returnDocument: 'after' });
        if (after) writes.insertOne<LedgerDoc>(this.ledger.collectionName, ledgerRow(after._id, movement, after.seq, after.balance));
        return after;
      });
    }
    const after = await this.accounts.findOneAndUpdate(filter, { ...update, $push: { pending: movement } }, { returnDocument: 'after' });
    if (after) {
      await this.insertRow(after._id, movement, after.seq, after.balance);
      this.clearFromOutbox(after._id, movement);
    }
    return after;
  }

  /** One ledger row; a row already there (filed by someone else) is the same row, so it is left. */
  private async insertRow(workspaceId: string, movement: Movement, seq: number, balanceAfter: number): Promise<void> {
    try {
      await this.ledger.insertOne(ledgerRow(workspaceId, movement, seq, balanceAfter));
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  /** Not waited for: a pull that never lands leaves a movement that filing again finds filed. */
  private clearFromOutbox(workspaceId: string, movement: Movement): void {
    this.inBackground(this.accounts.updateOne({ _id: workspaceId }, { $pull: { pending: movement } }));
  }

  /**
   * Runs `work` without a caller waiting. A store closed under it (shutting down) is no failure:
   * the movement stays in the account's outbox, and the next start files or clears it (`recover`).
   */
  private inBackground(work: Promise<unknown>): void {
    const tracked: Promise<void> = work
      .then(
        () => {},
        (err: unknown) => {
          if (!isStoreClosed(err)) this.onBackgroundError(err as Error);
        },
      )
      .finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  /** Once the writes issued in the background have ended: shutdown waits for it before closing the store. */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.all(this.background);
  }
}

/** A refund's operation: this prefix and the operation it gives back for. */
const REFUND = 'refund:';
const isRefund = (operation: string) => operation.startsWith(REFUND);

function ledgerRow(workspaceId: string, movement: Movement, seq: number, balanceAfter: number): LedgerDoc {
  const { movementId, at, amount, operation, detail, note } = movement;
  return { _id: movementId, workspaceId, seq, at, amount, balanceAfter, operation, detail, ...(note !== undefined ? { note } : {}) };
}

function movementView(r: LedgerDoc): MovementView {
  return { movementId: r._id, at: r.at.toISOString(), amount: r.amount, balanceAfter: r.balanceAfter, operation: r.operation, detail: r.detail };
}

export function planView(plan: Plan): CreditsView['plan'] {
  return { name: plan.name, expiresAt: plan.expiresAt ? plan.expiresAt.toISOString() : null };
}
