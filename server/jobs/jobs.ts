/**
 * Jobs and their items as stored documents, so that any server instance can run them and a
 * restart loses nothing. A job holds its counters, its webhook and the principal that started it
 * (each item runs as that caller); each item is a document of its own (`<jobId>:<index>`) holding
 * its input and, once finished, its answer or error as JSON text (the answer exactly as the
 * synchronous call gives it, and no field name of a client's can trouble the store).
 *
 * Everything is a single-document conditional update (no transactions, which FerretDB lacks):
 * the job's `cursor` hands out ranges of items, an item's lease says which runner holds it, its
 * `status: 'pending'` condition lets exactly one result be written, and a job's end is one
 * conditional status change. Counters are incremented as items finish and counted again from the
 * items when the job ends, so a crash between the two writes leaves no lasting error.
 */
import { randomUUID } from 'node:crypto';
import type { OutputOf } from '../../shared/operations/index.ts';
import { ENDED_JOB_STATUSES, type JobEvent, type JobKind, type JobOperation, type JobStatus } from '../../shared/schemas/jobs.ts';
import type { ExportFormat } from '../../shared/schemas/exports.ts';
import type { Principal } from '../invocation/caller.ts';
import type { ErrorCode } from '../lib/errors.ts';
import { isDuplicateKeyError, type Collection, type Filter, type IndexDeclaration, type Store } from '../store/port.ts';

/** Results are kept this long after their job ends. */
export const JOB_RETENTION_MS = 7 * 24 * 3600_000;
/** Items of a job that never ended (or was never stored) are kept this long. */
const UNFINISHED_ITEM_RETENTION_MS = 60 * 24 * 3600_000;
/** Jobs of one workspace running at once; others wait `queued`. */
export const RUNNING_JOBS_PER_WORKSPACE = 2;
/** How long an item's count may follow its write (finishItem's two writes) before a finisher is taken for dead. */
export const COUNT_GRACE_MS = 30_000;

export interface JobWebhookDoc {
  url: string;
  secret: string;
  events: JobEvent[];
}

/**
 * An export's request and where it stands (exports/exporter.ts): what the file holds, up to the
 * last checkpoint, and which runner writes it. Set whole at each checkpoint.
 */
export interface ExportState {
  format: ExportFormat;
  /** The company search filters, as validated. */
  filters: Record<string, unknown>;
  maxRows: number;
  /** Rows in the file, up to `bytes`, the last of them `lastCnpj`. */
  rows: number;
  bytes: number;
  lastCnpj: string | null;
  /**
   * Rows paid for: written before each debit, so a crash between the debit and the checkpoint
   * leaves rows that are paid and not yet written, which the resumed run writes without charging.
   */
  billed: number;
  /** The runner writing it, until `leaseUntil`. */
  owner: string | null;
  leaseUntil: Date | null;
  /** Runs that ended in a fault (the store, the disk), retried a few times. */
  attempts: number;
}

export interface JobDoc {
  _id: string;
  workspaceId: string;
  operation: JobKind;
  status: JobStatus;
  total: number;
  done: number;
  failed: number;
  creditsCharged: number;
  /** Credits reserved under `maxCredits` (at least those charged): the cap's conditional counter. */
  reserved: number;
  maxCredits: number | null;
  webhook: JobWebhookDoc | null;
  /** Who started it: every item runs as this caller. */
  principal: Principal;
  /** The next index never handed to a runner. */
  cursor: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  /** Once ended: when the job and its results are removed. */
  expiresAt: Date | null;
  /** Ended, and what follows its end (counts, slot, webhook) not yet done: see ending.ts. */
  settling: boolean;
  /** An export's state (operation `exportCompanies`): it has rows, and no items. */
  export?: ExportState;
}

export type ItemStatus = 'pending' | 'ok' | 'error';

export interface JobItemDoc {
  /** `<jobId>:<index>`: an item is found by its id, never by a scan. */
  _id: string;
  jobId: string;
  index: number;
  itemId: string;
  /** The request body, as JSON text. */
  input: string;
  status: ItemStatus;
  /** The runner holding it, until `leaseUntil`. */
  owner: string | null;
  leaseUntil: Date | null;
  /** Tries that ended in a passing failure (a provider away), retried a few times. */
  attempts: number;
  output?: string;
  error?: { error: ErrorCode; message: string };
  creditsCharged: number;
  finishedAt?: Date;
  expiresAt: Date;
}

/** A slot of the workspace's running jobs: `<workspaceId>:<n>`, held by one job. */
interface JobSlotDoc {
  _id: string;
  jobId: string;
}

export type JobView = OutputOf<'getJob'>;

const JOBS = 'jobs';
const ITEMS = 'jobItems';
const SLOTS = 'jobSlots';

/**
 * Jobs expire by the runner's sweep (`sweep`), not a TTL index: a job's items must go with it,
 * and a TTL index would remove the job that names them first. Items carry a far TTL of their own,
 * for items whose job was never stored.
 */
export const jobIndexes: IndexDeclaration[] = [
  { collection: JOBS, keys: { workspaceId: 1, createdAt: -1 } },
  { collection: JOBS, keys: { status: 1 } },
  { collection: JOBS, keys: { settling: 1 } },
  { collection: JOBS, keys: { expiresAt: 1 } },
  { collection: ITEMS, keys: { jobId: 1, index: 1 } },
  { collection: ITEMS, keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
];

export const itemKey = (jobId: string, index: number) => `${jobId}:${index}`;
const isEnded = (status: JobStatus) => ENDED_JOB_STATUSES.includes(status);

export interface NewJob {
  workspaceId: string;
  operation: JobOperation;
  items: Array<{ itemId: string; input: unknown }>;
  webhook: JobWebhookDoc | null;
  maxCredits: number | null;
  principal: Principal;
}

/** Item documents are written in batches of this many. */
const INSERT_BATCH = 1000;

export class Jobs {
  readonly docs: Collection<JobDoc>;
  readonly items: Collection<JobItemDoc>;
  private readonly slots: Collection<JobSlotDoc>;

  constructor(
    store: Store,
    readonly now: () => number = Date.now,
  ) {
    this.docs = store.collection<JobDoc>(JOBS);
    this.items = store.collection<JobItemDoc>(ITEMS);
    this.slots = store.collection<JobSlotDoc>(SLOTS);
  }

  /**
   * Stores the items, then the job (queued): a runner only ever sees a job whose items are all
   * there. A crash in between leaves items no job names; their expiry, set far ahead from the
   * start and brought to 7 days after the job ends once it does, removes them.
   */
  async create(job: NewJob): Promise<JobDoc> {
    const jobId = randomUUID();
    const orphanExpiry = new Date(this.now() + UNFINISHED_ITEM_RETENTION_MS);
    for (let start = 0; start < job.items.length; start += INSERT_BATCH) {
      const batch = job.items.slice(start, start + INSERT_BATCH).map((item, offset) => {
        const index = start + offset;
        const doc: JobItemDoc = {
          _id: itemKey(jobId, index),
          jobId,
          index,
          itemId: item.itemId,
          input: JSON.stringify(item.input),
          status: 'pending',
          owner: null,
          leaseUntil: null,
          attempts: 0,
          creditsCharged: 0,
          expiresAt: orphanExpiry,
        };
        return { insertOne: { document: doc } };
      });
      await this.items.bulkWrite(batch, { ordered: false });
    }
    return this.insertJob(jobId, job, job.items.length);
  }

  /** Stores an export job (queued): it has no items, and its `total` is its `maxRows` until it ends. */
  async createExport(job: Omit<NewJob, 'operation' | 'items' | 'maxCredits'>, request: Pick<ExportState, 'format' | 'filters' | 'maxRows'>): Promise<JobDoc> {
    const state: ExportState = { ...request, rows: 0, bytes: 0, lastCnpj: null, billed: 0, owner: null, leaseUntil: null, attempts: 0 };
    return this.insertJob(randomUUID(), { ...job, operation: 'exportCompanies', maxCredits: null }, request.maxRows, state);
  }

  private async insertJob(
    jobId: string,
    job: Omit<NewJob, 'items' | 'operation'> & { operation: JobKind },
    total: number,
    state?: ExportState,
  ): Promise<JobDoc> {
    const now = new Date(this.now());
    const doc: JobDoc = {
      _id: jobId,
      workspaceId: job.workspaceId,
      operation: job.operation,
      status: 'queued',
      total,
      done: 0,
      failed: 0,
      creditsCharged: 0,
      reserved: 0,
      maxCredits: job.maxCredits,
      webhook: job.webhook,
      principal: job.principal,
      cursor: 0,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      expiresAt: null,
      settling: false,
      ...(state ? { export: state } : {}),
    };
    await this.docs.insertOne(doc);
    return doc;
  }

  /**
   * Gives a running export to `owner` when nobody writes it: never taken, its lease passed, or
   * (`exclusive`) taken by a process that has since died. Resolves with the job as taken, or null.
   */
  async claimExport(jobId: string, owner: string, leaseMs: number, exclusive: boolean): Promise<JobDoc | null> {
    const now = this.now();
    const free: Filter<JobDoc>[] = [{ 'export.leaseUntil': null }, { 'export.leaseUntil': { $lt: new Date(now) } }];
    if (exclusive) free.push({ 'export.owner': { $ne: owner } });
    return this.docs.findOneAndUpdate(
      { _id: jobId, status: 'running', operation: 'exportCompanies', $or: free },
      { $set: { 'export.owner': owner, 'export.leaseUntil': new Date(now + leaseMs) } },
      { returnDocument: 'after' },
    );
  }

  /** Lets an export go after a fault, to be taken again after `delayMs`; resolves with its faults so far. */
  async retryExport(jobId: string, owner: string, delayMs: number): Promise<number> {
    const after = await this.docs.findOneAndUpdate(
      { _id: jobId, 'export.owner': owner },
      { $set: { 'export.leaseUntil': new Date(this.now() + delayMs) }, $inc: { 'export.attempts': 1 } },
      { returnDocument: 'after' },
    );
    return after?.export?.attempts ?? 0;
  }

  /**
   * An export's checkpoint: its state, its progress (`done` counts rows) and its charge, in one
   * write, whatever its status (rows paid for before a cancel stay counted).
   */
  async saveExport(jobId: string, state: ExportState, creditsCharged: number): Promise<void> {
    await this.docs.updateOne({ _id: jobId }, { $set: { export: state, done: state.rows, creditsCharged, updatedAt: new Date(this.now()) } });
  }

  /** The workspace's job, or null (another workspace's job, or one past its retention, is not there). */
  async get(workspaceId: string, jobId: string): Promise<JobDoc | null> {
    const doc = await this.docs.findOne({ _id: jobId, workspaceId });
    if (!doc || (doc.expiresAt && doc.expiresAt.getTime() <= this.now())) return null;
    return doc;
  }

  async list(workspaceId: string, limit = 100): Promise<JobDoc[]> {
    const docs = await this.docs.find({ workspaceId }, { sort: { createdAt: -1 }, limit }).toArray();
    const now = this.now();
    return docs.filter((doc) => !doc.expiresAt || doc.expiresAt.getTime() > now);
  }

  /** Jobs that may need a runner: queued or running, oldest first. */
  active(limit = 100): Promise<JobDoc[]> {
    return this.docs.find({ status: { $in: ['queued', 'running'] } }, { sort: { createdAt: 1 }, limit }).toArray();
  }

  /**
   * Moves a queued job to running when its workspace has a free slot. The slot is a document with
   * a unique id, so two instances promoting two jobs of one workspace at once cannot both take the
   * last one; a slot left by a job that has ended (its process died before letting go) is freed.
   */
  async promote(job: JobDoc): Promise<boolean> {
    for (let n = 0; n < RUNNING_JOBS_PER_WORKSPACE; n++) {
      const _id = `${job.workspaceId}:${n}`;
      try {
        await this.slots.insertOne({ _id, jobId: job._id });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const holder = await this.slots.findOne({ _id });
        if (!holder) {
          n--;
          continue;
        }
        if (holder.jobId === job._id) break;
        const held = await this.docs.findOne({ _id: holder.jobId });
        if (held && !isEnded(held.status)) continue;
        await this.slots.deleteOne({ _id, jobId: holder.jobId });
        n--;
        continue;
      }
      break;
    }
    const mine = await this.slots.find({ jobId: job._id }).toArray();
    if (mine.length === 0) return false;
    // A job holds one slot: any other it took in a race is let go.
    for (const extra of mine.slice(1)) await this.slots.deleteOne({ _id: extra._id, jobId: job._id });
    const moved = await this.docs.updateOne({ _id: job._id, status: 'queued' }, { $set: { status: 'running', updatedAt: new Date(this.now()) } });
    return moved.matchedCount === 1;
  }

  /** The next `size` indexes of a running job, handed out once (across instances), or null when all were. */
  async takeRange(job: JobDoc, size: number): Promise<{ from: number; to: number } | null> {
    const before = await this.docs.findOneAndUpdate(
      { _id: job._id, status: 'running', cursor: { $lt: job.total } },
      { $inc: { cursor: size } },
      { returnDocument: 'before' },
    );
    if (!before) return null;
    return { from: before.cursor, to: Math.min(before.cursor + size, before.total) };
  }

  /**
   * Leases one item to `owner`: when it is pending and nobody holds it, its lease has passed, or
   * (`exclusive`: this process alone uses the store) another process held it before this one started.
   */
  async lease(key: string, owner: string, leaseMs: number, exclusive: boolean): Promise<JobItemDoc | null> {
    const now = this.now();
    const free: Filter<JobItemDoc>[] = [{ leaseUntil: null }, { leaseUntil: { $lt: new Date(now) } }];
    if (exclusive) free.push({ owner: { $ne: owner } });
    return this.items.findOneAndUpdate(
      { _id: key, status: 'pending', $or: free },
      { $set: { owner, leaseUntil: new Date(now + leaseMs) } },
      { returnDocument: 'after' },
    );
  }

  /** Pending items of a job that no runner holds any more (their runner died, or they wait for a retry). */
  async stranded(jobId: string, owner: string, exclusive: boolean, limit: number): Promise<JobItemDoc[]> {
    const now = new Date(this.now());
    const free: Filter<JobItemDoc>[] = [{ leaseUntil: null }, { leaseUntil: { $lt: now } }];
    if (exclusive) free.push({ owner: { $ne: owner } });
    return this.items.find({ jobId, status: 'pending', $or: free }, { sort: { index: 1 }, limit }).toArray();
  }

  pendingCount(jobId: string): Promise<number> {
    return this.items.countDocuments({ jobId, status: 'pending' });
  }

  /** Lets an item go, to be tried again after `delayMs`. */
  async release(key: string, owner: string, delayMs: number, failedAttempt: boolean): Promise<void> {
    await this.items.updateOne(
      { _id: key, owner, status: 'pending' },
      { $set: { owner: null, leaseUntil: new Date(this.now() + delayMs) }, ...(failedAttempt ? { $inc: { attempts: 1 } } : {}) },
    );
  }

  /**
   * Writes an item's result once (the `pending` condition), then counts it on the job. Resolves
   * with whether this call wrote it.
   */
  async finishItem(
    job: JobDoc,
    key: string,
    result: { status: 'ok'; output: string; credits: number } | { status: 'error'; error: { error: ErrorCode; message: string }; credits: number },
  ): Promise<boolean> {
    const now = new Date(this.now());
    const set =
      result.status === 'ok'
        ? { status: 'ok' as const, output: result.output, creditsCharged: result.credits, finishedAt: now, owner: null, leaseUntil: null }
        : { status: 'error' as const, error: result.error, creditsCharged: result.credits, finishedAt: now, owner: null, leaseUntil: null };
    const written = await this.items.updateOne({ _id: key, status: 'pending' }, { $set: set });
    if (written.matchedCount !== 1) return false;
    await this.docs.updateOne(
      { _id: job._id },
      { $inc: { [result.status === 'ok' ? 'done' : 'failed']: 1, creditsCharged: result.credits }, $set: { updatedAt: now } },
    );
    return true;
  }

  /** Takes `amount` from the job's `maxCredits`, if it fits. */
  async reserve(job: JobDoc, amount: number): Promise<boolean> {
    if (job.maxCredits === null) return true;
    const taken = await this.docs.updateOne({ _id: job._id, reserved: { $lte: job.maxCredits - amount } }, { $inc: { reserved: amount } });
    return taken.matchedCount === 1;
  }

  async unreserve(job: JobDoc, amount: number): Promise<void> {
    if (job.maxCredits === null) return;
    await this.docs.updateOne({ _id: job._id }, { $inc: { reserved: -amount } });
  }

  /**
   * Ends a job once, `from` the statuses it may end from, marked `settling` until `settle` has
   * run. Resolves with the ended job, or null when it had already ended (or was not in `from`).
   */
  async end(jobId: string, status: JobStatus, from: JobStatus[] = ['queued', 'running']): Promise<JobDoc | null> {
    const now = this.now();
    const ended = await this.docs.findOneAndUpdate(
      { _id: jobId, status: { $in: from } },
      { $set: { status, settling: true, finishedAt: new Date(now), updatedAt: new Date(now), expiresAt: new Date(now + JOB_RETENTION_MS) } },
      { returnDocument: 'after' },
    );
    return ended;
  }

  /**
   * Counts the job again from its items and frees its slot; safe to repeat. Resolves with the
   * settled job, or null when it must be looked at again at a later pass: an item was written
   * and its count (finishItem's second write, maybe on another instance) may still be on its way.
   * Counts that disagree with the items are only corrected once the newest item is older than
   * COUNT_GRACE_MS, when a finisher still between its two writes must have died; correcting them
   * sooner counted such an item twice once its increment landed.
   */
  async settle(job: JobDoc): Promise<JobDoc | null> {
    if (job.export) {
      // An export's counters are its checkpoints (saveExport), written by its one runner: nothing to count again.
      await this.slots.deleteMany({ jobId: job._id });
      return job;
    }
    // Summed here rather than by $group: FerretDB 1.24 summed the credits to 0.
    const totals = { done: 0, failed: 0, creditsCharged: 0 };
    let newest = 0;
    for await (const item of this.items.find({ jobId: job._id, status: { $ne: 'pending' } }, { projection: { status: 1, creditsCharged: 1, finishedAt: 1 } })) {
      if (item.status === 'ok') totals.done++;
      else totals.failed++;
      totals.creditsCharged += item.creditsCharged;
      newest = Math.max(newest, item.finishedAt?.getTime() ?? 0);
    }
    const agree = job.done === totals.done && job.failed === totals.failed && job.creditsCharged === totals.creditsCharged;
    if (!agree) {
      if (this.now() - newest < COUNT_GRACE_MS) return null;
      // Unless an item was counted meanwhile: then the counters moved past what was read.
      const fixed = await this.docs.updateOne({ _id: job._id, done: job.done, failed: job.failed, creditsCharged: job.creditsCharged }, { $set: totals });
      if (fixed.matchedCount !== 1) return null;
    }
    await this.slots.deleteMany({ jobId: job._id });
    return { ...job, ...totals };
  }

  /**
   * Removes jobs 7 days after they ended, with their items; `removing` first removes what else a
   * job keeps (an export's file), so a crash in between leaves the job, to be removed again.
   */
  async sweep(removing: (job: JobDoc) => Promise<void> = async () => {}): Promise<number> {
    const expired = await this.docs.find({ expiresAt: { $lt: new Date(this.now()) } }, { limit: 10 }).toArray();
    for (const job of expired) {
      await removing(job);
      await this.items.deleteMany({ jobId: job._id });
      await this.docs.deleteOne({ _id: job._id });
    }
    return expired.length;
  }

  /** One page of finished items after index `after`, in item order. */
  async results(jobId: string, after: number, limit: number): Promise<JobItemDoc[]> {
    return this.items.find({ jobId, index: { $gt: after } }, { sort: { index: 1 }, limit }).toArray();
  }
}

export function viewOf(doc: JobDoc): JobView {
  return {
    jobId: doc._id,
    operation: doc.operation,
    status: doc.status,
    // An export that ended wrote what it wrote: that is its total.
    total: doc.export && isEnded(doc.status) ? doc.done : doc.total,
    done: doc.done,
    failed: doc.failed,
    creditsCharged: doc.creditsCharged,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    finishedAt: doc.finishedAt ? doc.finishedAt.toISOString() : null,
  };
}

export { isEnded };
