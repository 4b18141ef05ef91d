/**
 * The job runner, one in every server instance. Each poll (and each wake-up: a job started here,
 * an item finished) it moves queued jobs to running where their workspace has a free slot, takes
 * items of running jobs and runs each through `pipeline.invoke` as the job's caller, sends due
 * webhook deliveries, and finishes the ending of jobs a dead process left half-ended.
 *
 * Items are handed out in ranges by the job's cursor, then leased one by one, so several
 * instances share one job; a runner that dies leaves its items pending with a lease that passes
 * (at once on the embedded store, which one process holds at a time), and they are taken again
 * once the cursor has passed the end. Each item runs under an idempotency key derived from the job
 * and the item: a retry after a crash replays what the first run answered and charged, never
 * runs it or charges it again (pipeline/idempotency.ts). Items are background work: their calls
 * to outside services queue behind interactive requests (`TraceContext.background`).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Caller } from '../invocation/caller.ts';
import type { StillActing } from '../auth/still-acting.ts';
import { ServiceError, type ErrorCode } from '../lib/errors.ts';
import type { OperationId } from '../../shared/operations/index.ts';
import type { CreditCap, Outcome, RawInput } from '../invocation/outcome.ts';
import { startTrace, type TraceContext } from '../lib/trace-context.ts';
import { EXPORT_LEASE_MS, type Exporter } from '../exports/exporter.ts';
import { deliveryId, settleEnded } from './ending.ts';
import { itemKey, type JobDoc, type JobItemDoc, type Jobs } from './jobs.ts';
import type { Webhooks } from './webhooks.ts';

/** Items handed to one runner at a time from a job's cursor. */
const RANGE = 32;
/** How long a runner holds an item before another may take it (a research item may take minutes). */
const ITEM_LEASE_MS = 10 * 60_000;
/** Tries of an item whose failure may pass (a provider away), before its error is its result. */
const MAX_ATTEMPTS = 3;
const RETRY_DELAY_MS = 5_000;

/** Errors that may pass: the item is tried again later, up to MAX_ATTEMPTS. */
const PASSING: ReadonlySet<ErrorCode> = new Set(['provider_unavailable', 'rate_limited', 'insufficient_storage', 'internal_error', 'request_timeout']);
/** Errors no further item of the job would escape: the job ends `failed`, its remaining items unrun. */
const FATAL: ReadonlySet<ErrorCode> = new Set(['plan_required', 'unauthorized', 'no_workspace', 'insufficient_scope']);

/**
 * What the runner uses of the pipeline (`pipeline.ts`'s `Pipeline`, which imports the services
 * that hold this runner: named here rather than imported).
 */
export interface ItemPipeline {
  invoke(
    id: OperationId,
    caller: Caller,
    raw: RawInput,
    options: { log: Logger; signal: AbortSignal; idempotencyKey: string; binding: 'job'; trace: TraceContext; creditCap?: CreditCap; ledgerNote: string },
  ): Promise<Outcome>;
}

export interface RunnerOptions {
  jobs: Jobs;
  webhooks: Webhooks;
  log: Logger;
  pollMs: number;
  /** Items in flight at once in this process, all jobs together. */
  concurrency: number;
  /** This process alone uses the store (the embedded store's lock): a lease not its own is a dead process's. */
  exclusive: boolean;
  /** Whether the credential that started a job may still act (not revoked, its member not removed). */
  stillActing: StillActing;
  /**
   * The plan gate (`Payment.requirePlan`: 402 `plan_required`, which also expires a trial's
   * unspent credits), met by an export before each page as every item meets it in the pipeline.
   */
  requirePlan: (workspaceId: string) => Promise<void>;
  /** Writes export jobs' files (`exportCompanies`), which have rows rather than items. */
  exporter: Pick<Exporter, 'run' | 'remove' | 'refundUnwritten'>;
  /** Sends newly imported releases' changes to the watches (server/watches/), through the same webhooks. */
  watches?: { dispatch(): Promise<void> };
}

/** A revoked credential, met by an export between two pages. */
class Revoked extends Error {}

interface ActiveJob {
  job: JobDoc;
  /** Aborted when the job ends (cancelled, stopped): its items in flight stop. */
  controller: AbortController;
  /** Item keys taken from the cursor, not yet leased. */
  queue: string[];
  running: number;
  /** The cursor had passed the end when last asked. */
  exhausted: boolean;
  /** An export: this runner has tried to take it since the last poll (one try a poll, so a claim another holds is not asked for in a loop). */
  exporting: boolean;
}

export class JobRunner {
  /** Names this runner in leases. */
  readonly owner = randomUUID();
  private pipeline: ItemPipeline | null = null;
  private readonly active = new Map<string, ActiveJob>();
  private running = 0;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: RunnerOptions) {}

  /** Starts polling with the pipeline items run through (the app's). */
  start(pipeline: ItemPipeline): void {
    this.pipeline = pipeline;
    this.wake();
  }

  /** Looks for work now rather than at the next poll. */
  wake(): void {
    if (this.closed || !this.pipeline) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ticking = this.tick().finally(() => {
      this.ticking = null;
      if (this.closed) return;
      if (this.again) {
        this.again = false;
        this.wake();
      } else {
        this.timer = setTimeout(() => this.wake(), this.options.pollMs);
        this.timer.unref();
      }
    });
  }

  /** Stops taking work, stops the items in flight (their leases let another runner take them), and waits for them. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const entry of this.active.values()) entry.controller.abort(new Error('The server is stopping.'));
    await this.ticking;
    await Promise.allSettled([...this.inFlight]);
  }

  private async tick(): Promise<void> {
    const { jobs, webhooks, log } = this.options;
    try {
      await this.refresh();
      await settleEnded(jobs, webhooks, (jobId) => (this.active.get(jobId)?.running ?? 0) > 0);
      // Alone: an ended job it cannot remove (a file the disk refuses to delete) is tried again at
      // the next pass, and holds up no other job and no delivery meanwhile.
      await jobs.sweep((job) => this.options.exporter.remove(job)).catch((err: unknown) => log.warn({ err }, 'jobs: removing ended jobs failed'));
      this.fill();
      await this.options.watches?.dispatch();
      await webhooks.sendDue();
    } catch (err) {
      if (!this.closed) log.warn({ err }, 'jobs: a runner pass failed');
    }
  }

  /** Reads the queued and running jobs: promotes what may run, and stops items of jobs that ended. */
  private async refresh(): Promise<void> {
    const { jobs } = this.options;
    const current = await jobs.active();
    const seen = new Set<string>();
    for (let job of current) {
      if (job.status === 'queued') {
        if (!(await jobs.promote(job))) continue;
        job = { ...job, status: 'running' };
      }
      seen.add(job._id);
      const entry = this.active.get(job._id);
      if (entry) {
        entry.job = job;
        // Items waiting for a retry, or stranded by another runner, are looked for at every poll.
        if (entry.queue.length === 0) entry.exhausted = false;
        if (entry.running === 0) entry.exporting = false;
      }
      else this.active.set(job._id, { job, controller: new AbortController(), queue: [], running: 0, exhausted: false, exporting: false });
    }
    for (const [jobId, entry] of this.active) {
      if (seen.has(jobId)) continue;
      entry.controller.abort(new ServiceError('job_finished', 'The job has ended.'));
      entry.queue.length = 0;
      if (entry.running === 0) this.active.delete(jobId);
    }
  }

  /** Starts items until the process runs `concurrency` of them, fairly across jobs. */
  private fill(): void {
    if (this.closed) return;
    const entries = [...this.active.values()].filter((entry) => !entry.controller.signal.aborted);
    let progress = true;
    while (this.running < this.options.concurrency && progress) {
      progress = false;
      for (const entry of entries) {
        if (this.running >= this.options.concurrency) break;
        if (entry.job.operation === 'exportCompanies') {
          if (entry.exporting) continue;
          entry.exporting = true;
          this.running++;
          entry.running++;
          progress = true;
          this.track(this.export(entry));
          continue;
        }
        if (entry.queue.length === 0) {
          if (!entry.exhausted) this.track(this.refill(entry));
          continue;
        }
        const key = entry.queue.shift()!;
        this.running++;
        entry.running++;
        progress = true;
        this.track(this.lease(entry, key));
      }
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => {
      if (!this.closed) this.options.log.warn({ err }, 'jobs: an item failed outside its operation');
    });
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
  }

  private refilling = new Set<string>();

  /** More items for a job: the next range of its cursor, else items stranded by a runner that died; else it may be done. */
  private async refill(entry: ActiveJob): Promise<void> {
    const { jobs } = this.options;
    const { job } = entry;
    if (this.refilling.has(job._id)) return;
    this.refilling.add(job._id);
    try {
      const range = await jobs.takeRange(job, RANGE);
      if (range) {
        for (let i = range.from; i < range.to; i++) entry.queue.push(itemKey(job._id, i));
      } else {
        const stranded = await jobs.stranded(job._id, this.owner, this.options.exclusive, RANGE);
        entry.queue.push(...stranded.map((item) => item._id));
        if (stranded.length === 0) {
          entry.exhausted = true;
          if (entry.running === 0 && (await jobs.pendingCount(job._id)) === 0) await this.end(entry, 'done');
        }
      }
    } finally {
      this.refilling.delete(job._id);
    }
    if (entry.queue.length > 0) this.fill();
  }

  private async lease(entry: ActiveJob, key: string): Promise<void> {
    try {
      const item = await this.options.jobs.lease(key, this.owner, ITEM_LEASE_MS, this.options.exclusive);
      if (item && !entry.controller.signal.aborted) await this.run(entry, item);
    } finally {
      this.running--;
      entry.running--;
      // Items that waited for a retry are looked for again once the job's cursor has passed the end.
      if (entry.queue.length === 0 && entry.running === 0) entry.exhausted = false;
      if (entry.controller.signal.aborted && entry.running === 0) this.active.delete(entry.job._id);
      this.fill();
    }
  }

  private async run(entry: ActiveJob, item: JobItemDoc): Promise<void> {
    const { jobs, webhooks } = this.options;
    const { job } = entry;
    if (!(await this.options.stillActing(job.principal))) {
      // What is revoked is refused everywhere at once: a job stops with the credential that started it.
      await jobs.release(item._id, this.owner, 0, false);
      await this.end(entry, 'failed');
      return;
    }
    const caller: Caller = { principal: job.principal, refused: null };
    const creditCap: CreditCap | undefined =
      job.maxCredits === null
        ? undefined
        : {
            remaining: () => Math.max(0, job.maxCredits! - entry.job.reserved),
            reserve: async (amount) => {
              const ok = await jobs.reserve(job, amount);
              if (ok) entry.job = { ...entry.job, reserved: entry.job.reserved + amount };
              return ok;
            },
            release: (amount) => jobs.unreserve(job, amount),
          };
    try {
      const outcome = await this.pipeline!.invoke(
        job.operation,
        caller,
        { body: JSON.parse(item.input) },
        {
          log: this.options.log,
          signal: entry.controller.signal,
          idempotencyKey: `job:${job._id}:${item.index}`,
          // Each charge names its job and item in the ledger: what an item cost can be read there.
          ledgerNote: `job ${job._id} item ${item.itemId}`,
          binding: 'job',
          trace: { ...startTrace(), background: true },
          ...(creditCap ? { creditCap } : {}),
        },
      );
      if (outcome.kind !== 'value') throw new ServiceError('internal_error', `${job.operation} answered a stream, which a job cannot keep.`);
      // Replayed (its first run answered, then the process stopped before its result was written): that run's charge.
      const credits = outcome.firstCharged ?? outcome.receipt.credits;
      await this.itemEvent(job, item, { status: 'ok', output: outcome.value, creditsCharged: credits });
      await jobs.finishItem(job, item._id, { status: 'ok', output: JSON.stringify(outcome.value), credits });
    } catch (err) {
      if (entry.controller.signal.aborted) {
        await jobs.release(item._id, this.owner, 0, false);
        return;
      }
      const error = err instanceof ServiceError ? err : new ServiceError('internal_error', 'The item failed unexpectedly.');
      if (!(err instanceof ServiceError)) this.options.log.error({ err, jobId: job._id, index: item.index }, 'jobs: an item failed');
      if (error.code === 'insufficient_credits') {
        // The job's maxCredits, or the workspace's balance: no further item could be paid for.
        await jobs.release(item._id, this.owner, 0, false);
        await this.end(entry, 'stopped');
        return;
      }
      if (FATAL.has(error.code)) {
        await jobs.release(item._id, this.owner, 0, false);
        await this.end(entry, 'failed');
        return;
      }
      if (error.code === 'idempotency_key_in_use') {
        // A run of this item by a process that died still holds its key: try again once it may be taken over.
        await jobs.release(item._id, this.owner, (error.details.retryAfterSeconds ?? 5) * 1000, false);
        return;
      }
      if (PASSING.has(error.code) && item.attempts + 1 < MAX_ATTEMPTS) {
        await jobs.release(item._id, this.owner, RETRY_DELAY_MS * (item.attempts + 1), true);
        return;
      }
      const failure = { error: error.code, message: error.message };
      // A failure after a charge, replayed, says what it charged; any other charged nothing.
      const credits = error.details.charged ?? 0;
      await this.itemEvent(job, item, { status: 'error', error: failure, creditsCharged: credits });
      await jobs.finishItem(job, item._id, { status: 'error', error: failure, credits });
    }
  }

  /**
   * Writes an export (exports/exporter.ts) when no other runner does, from its checkpoint to its
   * end. A fault (the store, the disk) lets it go for another try after a delay, up to
   * MAX_ATTEMPTS; then it fails, keeping what it wrote and was paid for.
   */
  private async export(entry: ActiveJob): Promise<void> {
    const { jobs, exporter, exclusive, stillActing, requirePlan, log } = this.options;
    try {
      const job = await jobs.claimExport(entry.job._id, this.owner, EXPORT_LEASE_MS, exclusive);
      if (!job || entry.controller.signal.aborted) return;
      try {
        const end = await exporter.run(job, this.owner, entry.controller.signal, async () => {
          // What is revoked is refused everywhere at once: an export stops with the credential that started it.
          if (!(await stillActing(job.principal))) throw new Revoked();
          // A workspace whose plan ended (a trial over) meanwhile pays for no more rows, as a job's item would not run.
          await requirePlan(job.workspaceId);
        });
        if (end) await this.end(entry, end);
      } catch (err) {
        if (err instanceof Revoked || (err instanceof ServiceError && FATAL.has(err.code))) return await this.failExport(entry);
        if (entry.controller.signal.aborted) return;
        log.error({ err, jobId: job._id }, 'jobs: an export failed');
        const attempts = await jobs.retryExport(job._id, this.owner, RETRY_DELAY_MS * (job.export!.attempts + 1));
        if (attempts >= MAX_ATTEMPTS) await this.failExport(entry);
      }
    } finally {
      this.running--;
      entry.running--;
      if (entry.controller.signal.aborted && entry.running === 0) this.active.delete(entry.job._id);
    }
  }

  /**
   * Stores an item's `job.item` event before its result: neither is written without the other
   * having been, so a kill -9 between the two loses no event. A process that dies after the event
   * leaves the item pending; its retry replays the answer stored under its key and stores the
   * event again under the same id (derived from the item), which stores nothing new.
   */
  private async itemEvent(job: JobDoc, item: JobItemDoc, result: { status: 'ok' | 'error'; output?: unknown; error?: object; creditsCharged: number }): Promise<void> {
    if (!job.webhook?.events.includes('job.item')) return;
    await this.options.webhooks.enqueue({
      id: deliveryId(job._id, 'job.item', item.index),
      jobId: job._id,
      workspaceId: job.workspaceId,
      type: 'job.item',
      url: job.webhook.url,
      secret: job.webhook.secret,
      payload: { item: { itemId: item.itemId, ...result } },
    });
  }

  /** An export that fails keeps what it wrote; what it was paid for and never wrote is given back, once, by the runner that ended it. */
  private async failExport(entry: ActiveJob): Promise<void> {
    const ended = await this.end(entry, 'failed');
    if (ended) await this.options.exporter.refundUnwritten(ended);
  }

  private async end(entry: ActiveJob, status: 'done' | 'stopped' | 'failed'): Promise<JobDoc | null> {
    const ended = await this.options.jobs.end(entry.job._id, status, ['running']);
    entry.controller.abort(new ServiceError('job_finished', 'The job has ended.'));
    entry.queue.length = 0;
    if (ended) this.options.log.info({ jobId: ended._id, status }, 'job ended');
    // It is settled, and its webhook sent, now rather than at the next poll.
    this.wake();
    return ended;
  }
}
