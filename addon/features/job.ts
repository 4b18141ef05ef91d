/**
 * Long runs over many rows. Apps Script stops an execution after 6 minutes, so work is done in
 * chunks; before the budget runs out the job saves its place in the document's properties and a
 * time-driven trigger continues it in a new execution. Each processed row's status cell carries
 * the job's id, written together with its results, so a row is never processed (or charged)
 * twice, even when an execution dies between writing a chunk and saving its place.
 */
import { ApiCallError } from '../api/client.ts';
import { NetworkError } from '../api/http.ts';
import { plainError } from './errors.ts';
import type { Clock, LockPort, PropertiesPort, SheetPort, TriggerPort } from './ports.ts';

export const STATUS_COLUMN = 'prospecta status';
export const CONTINUE_HANDLER = 'continueJobs';
/** Of the 6 minutes an execution may run, what the job spends before handing over. */
export const DEFAULT_BUDGET_MS = 4.5 * 60_000;
const JOBS_KEY = 'prospecta.jobs';

/** A run over rows; `O` is what its kind of run was asked to do (RunOptions in runs.ts). */
export interface Job<O extends object = object> {
  id: string;
  kind: string;
  sheet: string;
  first: number;
  last: number;
  next: number;
  options: O;
  state: 'running' | 'done' | 'stopped' | 'cancelled';
  error?: string;
  totals: { done: number; failed: number; skipped: number; credits: number };
  executions: number;
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

export interface Processor<O extends object = object> {
  /** Rows handled per chunk (per `fetchAll`). */
  chunkRows: number;
  run(rows: InputRow[], headers: string[], job: Job<O>): RowResult[];
}

/** The job cannot go on (bad key, no credits): it stops with this message. */
export class StopJob extends Error {}

export interface JobDeps {
  sheet(name: string): SheetPort | null;
  properties: PropertiesPort;
  triggers: TriggerPort;
  lock: LockPort;
  clock: Clock;
  processors: Record<string, Processor>;
  budgetMs?: number;
}

const marker = (job: Job) => `job ${job.id}`;

export function loadJob(props: PropertiesPort, id: string): Job | null {
  const raw = props.get(`prospecta.job.${id}`);
  return raw ? (JSON.parse(raw) as Job) : null;
}

function saveJob(props: PropertiesPort, job: Job): void {
  props.set(`prospecta.job.${job.id}`, JSON.stringify(job));
  const ids = new Set<string>(JSON.parse(props.get(JOBS_KEY) ?? '[]'));
  if (job.state === 'running') ids.add(job.id);
  else ids.delete(job.id);
  props.set(JOBS_KEY, JSON.stringify([...ids]));
}

export function activeJobs(props: PropertiesPort): string[] {
  return JSON.parse(props.get(JOBS_KEY) ?? '[]');
}

export function newJob<O extends object>(props: PropertiesPort, fields: Pick<Job<O>, 'kind' | 'sheet' | 'first' | 'last' | 'options'>, clock: Clock): Job<O> {
  const id = (clock.now().toString(36) + Math.random().toString(36).slice(2, 6)).slice(-8);
  const job: Job<O> = { id, ...fields, next: fields.first, state: 'running', totals: { done: 0, failed: 0, skipped: 0, credits: 0 }, executions: 0 };
  saveJob(props, job);
  return job;
}

export function cancelJob(props: PropertiesPort, id: string): Job | null {
  const job = loadJob(props, id);
  if (job && job.state === 'running') {
    job.state = 'cancelled';
    saveJob(props, job);
  }
  return job;
}

/** Runs every active job until done or out of budget; the last one out schedules the next execution. */
export function runJobs(deps: JobDeps): Job[] {
  if (!deps.lock.tryLock(10_000)) return [];
  try {
    const started = deps.clock.now();
    const budget = deps.budgetMs ?? DEFAULT_BUDGET_MS;
    const jobs = activeJobs(deps.properties).flatMap((id) => loadJob(deps.properties, id) ?? []);
    let outOfTime = false;
    for (const job of jobs) {
      if (outOfTime) break;
      job.executions++;
      outOfTime = !runOne(job, deps, started + budget);
    }
    deps.triggers.clear(CONTINUE_HANDLER);
    if (activeJobs(deps.properties).length > 0) deps.triggers.continueLater(CONTINUE_HANDLER);
    return jobs.map((job) => loadJob(deps.properties, job.id)!);
  } finally {
    deps.lock.release();
  }
}

/** Works on one job until it ends or the deadline is near; false when time ran out. */
function runOne(job: Job, deps: JobDeps, deadline: number): boolean {
  const processor = deps.processors[job.kind];
  const sheet = deps.sheet(job.sheet);
  if (!processor || !sheet) {
    job.state = 'stopped';
    job.error = sheet ? `unknown job kind ${job.kind}` : `the sheet "${job.sheet}" no longer exists`;
    saveJob(deps.properties, job);
    return true;
  }
  let slowest = 0;
  let chunks = 0;
  while (job.next <= job.last) {
    const current = loadJob(deps.properties, job.id);
    if (current?.state === 'cancelled') return true;
    // Every execution does at least one chunk, then stops while the slowest one still fits.
    if (chunks > 0 && deps.clock.now() + slowest > deadline) {
      saveJob(deps.properties, job);
      return false;
    }
    const began = deps.clock.now();
    const count = Math.min(processor.chunkRows, job.last - job.next + 1);
    const statusColumn = sheet.ensureColumn(STATUS_COLUMN);
    const headers = sheet.headers();
    const cells = sheet.readRows(job.next, count);
    const todo = cells.map((c, i) => ({ row: job.next + i, cells: c })).filter((r) => !(r.cells[statusColumn - 1] ?? '').includes(marker(job)));
    let results: RowResult[];
    try {
      results = todo.length > 0 ? processor.run(todo, headers, job) : [];
    } catch (err) {
      if (!(err instanceof StopJob || err instanceof ApiCallError || err instanceof NetworkError)) throw err;
      job.state = 'stopped';
      job.error = err instanceof StopJob ? err.message : plainError(err);
      saveJob(deps.properties, job);
      return true;
    }
    write(sheet, job, todo, results, cells, statusColumn);
    for (const r of results) {
      job.totals.credits += r.credits ?? 0;
      if (r.failed) job.totals.failed++;
      else if (r.skipped) job.totals.skipped++;
      else job.totals.done++;
    }
    job.next += count;
    saveJob(deps.properties, job);
    slowest = Math.max(slowest, deps.clock.now() - began);
    chunks++;
  }
  job.state = 'done';
  saveJob(deps.properties, job);
  return true;
}

/** Each output column of the chunk in one write, the status column last (it marks the rows done). */
function write(sheet: SheetPort, job: Job, todo: InputRow[], results: RowResult[], cells: string[][], statusColumn: number): void {
  const first = job.next;
  const byRow = new Map(todo.map((r, i) => [r.row, results[i]!]));
  const labels = [...new Set(results.flatMap((r) => Object.keys(r.values ?? {})))];
  for (const label of labels) {
    const column = sheet.ensureColumn(label);
    sheet.writeColumn(
      first,
      column,
      cells.map((c, i) => {
        const value = byRow.get(first + i)?.values?.[label];
        return value !== undefined ? value : (c[column - 1] ?? '');
      }),
    );
  }
  for (const [row, result] of byRow) {
    if (result.note) sheet.setNote(row, sheet.ensureColumn(result.note.label), result.note.text);
  }
  sheet.writeColumn(
    first,
    statusColumn,
    cells.map((c, i) => {
      const result = byRow.get(first + i);
      return result ? `${result.status} · ${marker(job)}` : (c[statusColumn - 1] ?? '');
    }),
  );
}
