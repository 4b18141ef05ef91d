/**
 * Runs over selected rows. A run that fits one fetchAll is sent at once; a larger one becomes a
 * job on the server (startJob), which works on it whether the sheet is open or not, and whose
 * results are written back page by page (getJobResults) as they finish: from the sidebar's Jobs
 * panel while it is open, and from a time-driven trigger otherwise. What a run needs to go on is
 * kept in the document's properties (the server's job id, the `Idempotency-Key` it was started
 * with, the cursor of the next page of results), so a reopened sheet resumes writing the job's
 * results; it never starts, nor pays for, a second job.
 */
import { ApiCallError, randomKey, type ProspectaClient } from '../api/client.ts';
import { NetworkError, type HttpPort } from '../api/http.ts';
import { MAX_JOB_ITEMS as MAX_JOB_ROWS, type JobOperation } from '../../shared/schemas/jobs.ts';
import type { InputOf, OutputOf } from '../../shared/operations/index.ts';
import { plainError, StopJob } from './errors.ts';
import type { Clock, LockPort, PropertiesPort, SheetPort, TriggerPort } from './ports.ts';
import { sendAll } from './send.ts';

export const STATUS_COLUMN = 'prospecta status';
export const CONTINUE_HANDLER = 'continueJobs';
/** Of the 6 minutes an execution may run, what writing results may take before handing over. */
export const DEFAULT_BUDGET_MS = 4.5 * 60_000;
/** Results asked for a page: the most getJobResults gives. */
const RESULTS_PER_PAGE = 500;
/** Runs kept in the Jobs panel's history. */
const HISTORY = 20;
const ACTIVE_KEY = 'prospecta.jobs';
const HISTORY_KEY = 'prospecta.history';

/** A run over rows; `O` is what its kind of run was asked to do (RunOptions in runs.ts). */
export interface Job<O extends object = object> {
  id: string;
  kind: string;
  sheet: string;
  first: number;
  last: number;
  options: O;
  state: 'running' | 'done' | 'stopped' | 'cancelled';
  error?: string;
  /** Rows written: filled, failed, skipped; credits their answers charged. */
  totals: { done: number; failed: number; skipped: number; credits: number };
  /** Rows sent to the server (the others needed no request). */
  requests: number;
  startedAt: number;
  /** The server's job, when the run needed more than one fetchAll. */
  server?: ServerJob;
}

export interface ServerJob {
  /** Null until startJob answered; sent again with the same key, it answers the same job. */
  jobId: string | null;
  key: string;
  /** Items finished on the server, and the credits they charged, as getJob last said. */
  finished: number;
  credits: number;
  /** The next page of results to write; null before the first. */
  cursor: string | null;
  cancelling?: boolean;
  /** The totals of the rows that needed no request, written when the run started. */
  base: Job['totals'];
  /**
   * A job that ended early (cancelled, stopped, failed) may still be finishing the items it had in
   * flight, after a walk of its results passed them over: its results are walked once more from
   * the start (`pending`, then `walking`) until they add up to what getJob counts.
   */
  recount?: 'pending' | 'walking';
}

export interface InputRow {
  row: number;
  cells: string[];
}

export interface RowResult {
  /** Output column label → value. */
  values?: Record<string, string>;
  status: string;
  credits?: number;
  failed?: boolean;
  skipped?: boolean;
  /** A note for one output cell (citations, details). */
  note?: { label: string; text: string };
}

/** A row's request, or what the row gets without one (skipped, or refused before sending). */
export type Prepared<Id extends JobOperation> = { input: InputOf<Id> } | { result: RowResult };

/** One kind of run: which operation each row is, and how an answer becomes cells. */
export interface Processor<O extends object = object, Id extends JobOperation = JobOperation> {
  operation: Id;
  /** Requests sent in one fetchAll: a run needing more becomes a server job. */
  perFetch: number;
  /** Each row's request; StopJob when the sheet lacks what the run needs (a CNPJ column). */
  prepare(rows: InputRow[], headers: string[], options: O): Array<Prepared<Id>>;
  /** A row's result from its answer. */
  read(output: OutputOf<Id>, options: O): RowResult;
}

export { StopJob };

export interface JobDeps {
  client: ProspectaClient;
  http: HttpPort;
  sheet(name: string): SheetPort | null;
  properties: PropertiesPort;
  triggers: TriggerPort;
  lock: LockPort;
  clock: Clock;
  // Each kind's processor, of its own operation: the kind, not the type, ties a job to it.
  processors: Record<string, Processor<any, any>>;
  budgetMs?: number;
}

const marker = (job: Job) => `job ${job.id}`;
const ids = (props: PropertiesPort, key: string): string[] => JSON.parse(props.get(key) ?? '[]');

export function loadJob(props: PropertiesPort, id: string): Job | null {
  const raw = props.get(`prospecta.job.${id}`);
  return raw ? (JSON.parse(raw) as Job) : null;
}

function saveJob(props: PropertiesPort, job: Job): void {
  props.set(`prospecta.job.${job.id}`, JSON.stringify(job));
  const active = new Set(ids(props, ACTIVE_KEY));
  if (job.state === 'running') active.add(job.id);
  else active.delete(job.id);
  props.set(ACTIVE_KEY, JSON.stringify([...active]));
}

/** Runs still writing results. */
export function activeJobs(props: PropertiesPort): string[] {
  return ids(props, ACTIVE_KEY);
}

/** The Jobs panel's runs, newest first; the oldest beyond the history's length are forgotten. */
export function jobHistory(props: PropertiesPort): Job[] {
  return ids(props, HISTORY_KEY).flatMap((id) => loadJob(props, id) ?? []);
}

function remember(props: PropertiesPort, job: Job): void {
  const history = [job.id, ...ids(props, HISTORY_KEY).filter((id) => id !== job.id)];
  for (const old of history.slice(HISTORY)) if (!activeJobs(props).includes(old)) props.delete(`prospecta.job.${old}`);
  props.set(HISTORY_KEY, JSON.stringify(history.slice(0, HISTORY)));
}

export function newJob<O extends object>(props: PropertiesPort, fields: Pick<Job<O>, 'kind' | 'sheet' | 'first' | 'last' | 'options'>, clock: Clock): Job<O> {
  const id = (clock.now().toString(36) + Math.random().toString(36).slice(2, 6)).slice(-8);
  const job: Job<O> = { id, ...fields, state: 'running', totals: { done: 0, failed: 0, skipped: 0, credits: 0 }, requests: 0, startedAt: clock.now() };
  saveJob(props, job);
  remember(props, job);
  return job;
}

/** The rows of a run, each with its request or its result. */
function prepared(job: Job, sheet: SheetPort, processor: Processor): { rows: InputRow[]; prepared: Array<Prepared<JobOperation>> } {
  const cells = sheet.readRows(job.first, job.last - job.first + 1);
  const rows = cells.map((c, i) => ({ row: job.first + i, cells: c }));
  return { rows, prepared: processor.prepare(rows, sheet.headers(), job.options) };
}

/**
 * A failure whose outcome is unknown or passing (no answer, too many requests, the server's own
 * trouble): a server job's run stays on and the next poll tries again, with the same key.
 */
const passing = (err: unknown) => err instanceof NetworkError || (err instanceof ApiCallError && (err.status === 429 || err.status >= 500));

/** Where a run stops for lack of what it needs; the rows written so far stay. */
function stop(deps: JobDeps, job: Job, err: unknown): Job {
  if (!(err instanceof StopJob || err instanceof ApiCallError || err instanceof NetworkError)) throw err;
  if (job.server && passing(err)) {
    saveJob(deps.properties, job);
    return job;
  }
  job.state = 'stopped';
  job.error = err instanceof StopJob ? err.message : plainError(err);
  saveJob(deps.properties, job);
  return job;
}

/**
 * Starts a run: rows that need no request are marked at once; the others are sent in one fetchAll
 * when they fit, or become a server job whose results the next polls write.
 */
export function startJob(deps: JobDeps, job: Job): Job {
  const processor = deps.processors[job.kind];
  const sheet = deps.sheet(job.sheet);
  if (!processor || !sheet) return stop(deps, job, new StopJob(sheet ? `unknown kind of run ${job.kind}` : `the sheet "${job.sheet}" no longer exists`));
  try {
    const { rows, prepared: all } = prepared(job, sheet, processor);
    const byRow = new Map<number, RowResult>();
    const sending: Array<{ row: number; input: object }> = [];
    all.forEach((p, i) => ('result' in p ? byRow.set(rows[i]!.row, p.result) : sending.push({ row: rows[i]!.row, input: p.input })));
    job.requests = sending.length;
    if (sending.length > MAX_JOB_ROWS) throw new StopJob(`A run takes at most ${MAX_JOB_ROWS.toLocaleString('en')} rows to look up; select fewer.`);
    if (sending.length > processor.perFetch) {
      job.server = { jobId: null, key: randomKey(), finished: 0, credits: 0, cursor: null, base: { ...job.totals } };
      // Saved with its key before it is sent: an execution that dies here sends the same key again.
      saveJob(deps.properties, job);
    } else {
      const answers = sendAll(deps.client, deps.http, deps.clock, processor.operation, sending.map((s) => s.input) as never[]);
      sending.forEach((s, i) => {
        const answer = answers[i]!;
        byRow.set(s.row, answer.ok ? processor.read(answer.value, job.options) : { status: `✗ ${answer.error}`, failed: true });
      });
      job.state = 'done';
    }
    writeRows(sheet, job, byRow);
    if (job.server) job.server.base = { ...job.totals };
    saveJob(deps.properties, job);
    if (job.server) {
      // Polled from now on (the trigger, the Jobs panel), also when the start's answer is lost.
      deps.triggers.clear(CONTINUE_HANDLER);
      deps.triggers.continueLater(CONTINUE_HANDLER);
      startServerJob(deps, job, sending);
    }
    return job;
  } catch (err) {
    return stop(deps, job, err);
  }
}

/** A server job's item answer: the same JSON as the synchronous call's, so read as `parse` reads that. */
function readResult<Id extends JobOperation>(processor: Processor<object, Id>, output: unknown, options: object): RowResult {
  return processor.read(output as OutputOf<Id>, options);
}

/** startJob on the server with the run's key: sent again after a lost answer, it answers the same job. */
function startServerJob(deps: JobDeps, job: Job, sending: Array<{ row: number; input: object }>): void {
  const server = job.server!;
  const items = sending.map((s) => ({ itemId: String(s.row), input: s.input as Record<string, unknown> }));
  const processor = deps.processors[job.kind]!;
  server.jobId = deps.client.call('startJob', { operation: processor.operation, items }, server.key).jobId;
  saveJob(deps.properties, job);
}

/** Writes every run's finished results; the last one out asks for another execution while runs go on. */
export function runJobs(deps: JobDeps): Job[] {
  if (!deps.lock.tryLock(10_000)) return [];
  try {
    const deadline = deps.clock.now() + (deps.budgetMs ?? DEFAULT_BUDGET_MS);
    const running = activeJobs(deps.properties).flatMap((id) => loadJob(deps.properties, id) ?? []);
    for (const job of running) {
      if (deps.clock.now() > deadline) break;
      pollJob(deps, job, deadline);
    }
    deps.triggers.clear(CONTINUE_HANDLER);
    if (activeJobs(deps.properties).length > 0) deps.triggers.continueLater(CONTINUE_HANDLER);
    return running.map((job) => loadJob(deps.properties, job.id)!);
  } finally {
    deps.lock.release();
  }
}

const ENDED: Record<string, Job['state']> = { done: 'done', stopped: 'stopped', cancelled: 'cancelled', failed: 'stopped' };

/** One run's progress from the server, and its finished results written, page by page, until the deadline. */
function pollJob(deps: JobDeps, job: Job, deadline: number): void {
  const processor = deps.processors[job.kind];
  const sheet = deps.sheet(job.sheet);
  if (!processor || !sheet) return void stop(deps, job, new StopJob(sheet ? `unknown kind of run ${job.kind}` : `the sheet "${job.sheet}" no longer exists`));
  // A run saved by the add-on before server jobs continued by itself; it cannot go on here.
  if (!job.server) return void stop(deps, job, new StopJob('started by an earlier version of the add-on: select the rows left and run it again'));
  const server = job.server;
  try {
    if (!server.jobId) {
      const { rows, prepared: all } = prepared(job, sheet, processor);
      startServerJob(deps, job, all.flatMap((p, i) => ('input' in p ? [{ row: rows[i]!.row, input: p.input }] : [])));
    }
    const jobId = server.jobId!;
    const status = deps.client.call('getJob', { jobId });
    server.finished = status.done + status.failed;
    server.credits = status.creditsCharged;
    if (server.recount === 'pending') {
      // Written again from the first result: the totals are counted again with them.
      job.totals = { ...server.base };
      server.cursor = null;
      server.recount = 'walking';
    }
    saveJob(deps.properties, job);
    while (deps.clock.now() <= deadline) {
      const page = deps.client.call('getJobResults', { jobId, limit: RESULTS_PER_PAGE, ...(server.cursor ? { cursor: server.cursor } : {}) });
      const byRow = new Map<number, RowResult>();
      for (const result of page.results) {
        const row = Number(result.itemId);
        byRow.set(
          row,
          // The credits are the server's for this item, whatever the answer says of itself.
          result.status === 'ok'
            ? { ...readResult(processor, result.output, job.options), credits: result.creditsCharged }
            : { status: `✗ ${result.error?.message ?? 'failed'}`, failed: true, credits: result.creditsCharged },
        );
      }
      writeRows(sheet, job, byRow);
      // The cursor is saved once its page is written: a page written twice costs nothing.
      server.cursor = page.nextCursor ?? server.cursor;
      if (page.nextCursor === null) {
        // Every result given is written: the job has ended (perhaps since getJob above said otherwise).
        const ended = deps.client.call('getJob', { jobId });
        server.finished = ended.done + ended.failed;
        server.credits = ended.creditsCharged;
        const t = job.totals;
        const written = t.done + t.failed + t.skipped - (server.base.done + server.base.failed + server.base.skipped);
        if (ended.status !== 'done' && (server.recount !== 'walking' || written < server.finished)) server.recount = 'pending';
        else {
          delete server.recount;
          job.state = ENDED[ended.status] ?? 'done';
          if (ended.status === 'stopped') job.error = 'the credit cap was reached';
          if (ended.status === 'failed') job.error = 'the job failed on the server';
        }
        saveJob(deps.properties, job);
        break;
      }
      saveJob(deps.properties, job);
      if (page.results.length === 0) break;
    }
  } catch (err) {
    stop(deps, job, err);
  }
}

/** Cancels a run: its server job stops, and the results it had finished (and charged) are still written. */
export function cancelJob(deps: Pick<JobDeps, 'client' | 'properties'>, id: string): Job | null {
  const job = loadJob(deps.properties, id);
  if (!job || job.state !== 'running') return job;
  if (job.server?.jobId) {
    try {
      deps.client.call('cancelJob', { jobId: job.server.jobId });
    } catch (err) {
      // A job that had just ended has its results to write all the same.
      if (!(err instanceof ApiCallError && err.code === 'job_finished')) throw err;
    }
    job.server.cancelling = true;
  } else job.state = 'cancelled';
  saveJob(deps.properties, job);
  return job;
}

/** The rows' results, each output column in one write over the rows' span, the status column last. */
function writeRows(sheet: SheetPort, job: Job, byRow: Map<number, RowResult>): void {
  if (byRow.size === 0) return;
  const rows = [...byRow.keys()];
  const first = Math.min(...rows);
  const cells = sheet.readRows(first, Math.max(...rows) - first + 1);
  const statusColumn = sheet.ensureColumn(STATUS_COLUMN);
  const results = [...byRow.values()];
  for (const label of new Set(results.flatMap((r) => Object.keys(r.values ?? {})))) {
    const column = sheet.ensureColumn(label);
    sheet.writeColumn(
      first,
      column,
      cells.map((c, i) => byRow.get(first + i)?.values?.[label] ?? c[column - 1] ?? ''),
    );
  }
  for (const [row, result] of byRow) if (result.note) sheet.setNote(row, sheet.ensureColumn(result.note.label), result.note.text);
  sheet.writeColumn(
    first,
    statusColumn,
    cells.map((c, i) => {
      const result = byRow.get(first + i);
      return result ? `${result.status} · ${marker(job)}` : (c[statusColumn - 1] ?? '');
    }),
  );
  for (const r of results) {
    job.totals.credits += r.credits ?? 0;
    if (r.failed) job.totals.failed++;
    else if (r.skipped) job.totals.skipped++;
    else job.totals.done++;
  }
}
