/**
 * "Export all matching rows" of a company search: an export job on the server (`exportCompanies`,
 * CSV), followed from the sidebar, whose file is written to a new tab up to what the spreadsheet
 * can take; the whole file stays downloadable by a link. One export a document at a time: its
 * state (the `Idempotency-Key` it was started with, saved before it is sent, and the job's id)
 * lives in the document's properties, so a lost answer or a reopened sidebar follows the same job
 * and never pays for a second one.
 */
import { ApiCallError, randomKey, type ProspectaClient } from '../api/client.ts';
import { NetworkError } from '../api/http.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import { parseCsv } from './csv.ts';
import { PlainError } from './errors.ts';
import type { LockPort, PropertiesPort, SheetPort } from './ports.ts';

const KEY = 'prospecta.export';
/** Google Sheets' cells in one spreadsheet, every tab together. */
export const SPREADSHEET_CELLS = 10_000_000;
/** Characters a cell holds. */
const CELL_CHARS = 50_000;
/** The grid a new tab is made with (1,000 rows of 26 columns), counted before it is resized. */
const NEW_TAB_CELLS = 26_000;

export type ExportFilters = Omit<InputOf<'exportCompanies'>, 'format' | 'maxRows' | 'webhook'>;

interface ExportRun {
  /** Sent with each start, so a start whose answer was lost is answered with the same job. */
  key: string;
  jobId: string | null;
  tab: string;
  filters: ExportFilters;
  maxRows: number;
  state: 'running' | 'ended';
  text: string;
  /** The whole file, for a browser signed in to the dashboard. */
  link?: string;
}

/** What the sidebar shows of the document's export. */
export interface ExportView {
  running: boolean;
  text: string;
  link?: string;
}

export interface ExportDeps {
  client: ProspectaClient;
  properties: PropertiesPort;
  lock: LockPort;
  /** The tab with this name, created (or emptied) when it is written. */
  tab(name: string): SheetPort;
  /** Cells the spreadsheet has left, of its 10 million. */
  cellsLeft(): number;
  /** The server's address, for the file's link. */
  baseUrl: string;
}

const load = (props: PropertiesPort): ExportRun | null => JSON.parse(props.get(KEY) ?? 'null');
const save = (props: PropertiesPort, run: ExportRun) => props.set(KEY, JSON.stringify(run));
const view = (run: ExportRun | null): ExportView | null => run && { running: run.state === 'running', text: run.text, ...(run.link ? { link: run.link } : {}) };

/** The document's export, as last saved, without asking the server. */
export function exportView(props: PropertiesPort): ExportView | null {
  return view(load(props));
}

/** Starts an export of every row matching `filters`, up to `maxRows`, into the tab `tab`. */
export function startExport(deps: ExportDeps, filters: ExportFilters, maxRows: number, tab: string): ExportView {
  if (load(deps.properties)?.state === 'running') throw new PlainError('An export is still running in this document; wait for it to end.');
  const run: ExportRun = { key: randomKey(), jobId: null, tab, filters, maxRows, state: 'running', text: 'Starting the export…' };
  save(deps.properties, run);
  try {
    send(deps, run);
  } catch (err) {
    // Refused (no credits, no plan, a bad filter): nothing was started, so nothing is followed.
    if (err instanceof ApiCallError && err.status < 500 && err.status !== 429) deps.properties.delete(KEY);
    throw err;
  }
  return view(run)!;
}

function send(deps: ExportDeps, run: ExportRun): void {
  run.jobId = deps.client.call('exportCompanies', { ...run.filters, format: 'csv', maxRows: run.maxRows }, run.key).jobId;
  run.text = 'Export queued on the server…';
  save(deps.properties, run);
}

const ENDED = new Set(['done', 'stopped', 'cancelled', 'failed']);

/**
 * Asks the server how the export goes; once its job has ended, writes the file to the tab. A
 * passing failure (no answer, 429, 5xx) leaves it running for the next poll.
 */
export function pollExport(deps: ExportDeps): ExportView | null {
  const run = load(deps.properties);
  if (!run || run.state === 'ended') return view(run);
  // Another execution (an earlier poll) is writing it.
  if (!deps.lock.tryLock(1000)) return view(run);
  try {
    if (!run.jobId) send(deps, run);
    const job = deps.client.call('getJob', { jobId: run.jobId! });
    if (!ENDED.has(job.status)) {
      run.text = `Exporting: ${job.done.toLocaleString('en')} of at most ${run.maxRows.toLocaleString('en')} rows written, ${job.creditsCharged} credits so far.`;
    } else if (job.status === 'failed') {
      Object.assign(run, { state: 'ended', text: 'The export failed on the server; nothing more was charged.' });
    } else {
      const why = job.status === 'stopped' ? ' (stopped: the credits ran out)' : job.status === 'cancelled' ? ' (cancelled)' : '';
      Object.assign(run, { state: 'ended', ...writeFile(deps, run, `${job.done.toLocaleString('en')} rows exported for ${job.creditsCharged} credits${why}`) });
    }
    save(deps.properties, run);
    return view(run);
  } catch (err) {
    if (err instanceof NetworkError || (err instanceof ApiCallError && (err.status === 429 || err.status >= 500))) return view(run);
    Object.assign(run, { state: 'ended', text: `The export stopped: ${err instanceof Error ? err.message : String(err)}` });
    save(deps.properties, run);
    throw err;
  } finally {
    deps.lock.release();
  }
}

/**
 * A cell as Sheets should keep it. Sheets reads a written value as typed input, so an identifier of
 * digits would become a number: `00000000000191` losing its zeros, a 14-digit CNPJ shown as
 * 1.1E+13. Such a cell gets the leading `'` that keeps it text (as the file's formula guard does).
 */
function asText(cell: string): string {
  const text = cell.slice(0, CELL_CHARS);
  return /^\d+$/.test(text) && (text.startsWith('0') || text.length > 11) ? `'${text}` : text;
}

/** The export's file into its tab, as many rows as the spreadsheet takes; the link for the whole file. */
function writeFile(deps: ExportDeps, run: ExportRun, done: string): Pick<ExportRun, 'text' | 'link'> {
  const link = `${deps.baseUrl.replace(/\/+$/, '')}/dashboard/api/jobs/${encodeURIComponent(run.jobId!)}/export`;
  let text: string;
  try {
    text = deps.client.file('getJobExport', { jobId: run.jobId! });
  } catch (err) {
    // UrlFetchApp reads at most 50 MB an answer: a larger file is only downloadable.
    if (err instanceof NetworkError && /too large/i.test(err.message)) return { text: `${done}; the file is larger than Apps Script can read (50 MB): download it.`, link };
    throw err;
  }
  const [header = [], ...rows] = parseCsv(text);
  const width = Math.max(header.length, 1);
  const fits = Math.max(0, Math.floor((deps.cellsLeft() - NEW_TAB_CELLS) / width) - 1);
  const written = rows.slice(0, fits).map((row) => row.map(asText));
  const tab = deps.tab(run.tab);
  tab.replaceAll([header, ...written]);
  if (written.length === rows.length) return { text: `${done}; all written to the tab "${run.tab}".`, link };
  const rest = `Rows 2–${written.length + 1} of the export; the spreadsheet has no room for the other ${(rows.length - written.length).toLocaleString('en')}. The whole file: ${link}`;
  tab.setNote(1, 1, rest);
  return { text: `${done}; the first ${written.length.toLocaleString('en')} written to the tab "${run.tab}" (the spreadsheet's 10 million cells), the whole file by the link.`, link };
}
