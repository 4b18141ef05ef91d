/**
 * The Changes tab: the CNPJ column of the selected rows checked against the registry's history
 * (`searchCompanyChanges`, `since` a release), one line per row saying what changed, e.g.
 * `status: ATIVA → BAIXADA (2026-11)`. The server offers no job for it, so the CNPJs go in
 * batches of the operation's most (500): the first page of every batch in one fetchAll, then the
 * next pages of the batches that have more, each request with its own `Idempotency-Key` (sent
 * again with its retries after a 429, so a retry is never charged twice).
 */
import { ApiCallError, limitOf, type ProspectaClient } from '../api/client.ts';
import { sending, type HttpPort } from '../api/http.ts';
import type { OutputOf } from '../../shared/operations/index.ts';
import { CHANGE_FIELDS } from '../../shared/schemas/changes.ts';
import { checkCnpj } from '../../shared/cnpj.ts';
import { columnsOf, type ColumnChoice } from './columns.ts';
import { plainError, PlainError } from './errors.ts';
import { STATUS_COLUMN } from './job.ts';
import type { Clock, SheetPort } from './ports.ts';

export const CHANGES_COLUMN = 'Registry changes';
/** Of Apps Script's 6 minutes, what asking may take before the rows answered are written. */
const BUDGET_MS = 4.5 * 60_000;
const MAX_429_RETRIES = 3;

type Change = OutputOf<'searchCompanyChanges'>['changes'][number];

export interface ChangesOptions {
  /** The header of the CNPJ column, as the analyst confirmed it; detected when absent. */
  columns?: Pick<ColumnChoice, 'cnpj'>;
  /** `YYYY-MM`: the changes of the releases after it; absent, the latest release's. */
  since?: string;
}

export interface ChangesOutcome {
  changed: number;
  unchanged: number;
  failed: number;
  skipped: number;
  credits: number;
  /** Why it stopped before every row was answered (credits, key, time). */
  stoppedBy?: string;
}

/** A value of the company record in a few words: an address, an activity, a list. */
function display(value: unknown): string {
  if (value === null || value === undefined || value === '') return '–';
  if (Array.isArray(value)) return value.length ? value.map(display).join(', ') : '–';
  if (typeof value !== 'object') return String(value);
  const record = value as Record<string, unknown>;
  if ('code' in record && 'description' in record) return `${record.code} ${record.description ?? ''}`.trim();
  const parts = Object.values(record).filter((v) => v !== null && v !== undefined && v !== '' && typeof v !== 'object');
  return parts.length ? parts.join(', ') : '–';
}

const partnerNames = (partners: Array<{ name: string }>, sign: string) => partners.map((p) => `${sign}${p.name}`);

/** One change in words: `status: ATIVA → BAIXADA (2026-11)`, `partners: +ANA, −JOÃO (2026-11)`, `opened (2026-11)`. */
export function describeChange(change: Change): string {
  const when = ` (${change.release})`;
  if (change.kind === 'opened' || change.kind === 'removed') return `${change.kind}${when}`;
  const fields = change.fields as Record<string, { from?: unknown; to?: unknown; added?: Array<{ name: string }>; removed?: Array<{ name: string }> }>;
  if (change.kind === 'partners') {
    const { added = [], removed = [] } = fields.partners ?? {};
    return `partners: ${[...partnerNames(added, '+'), ...partnerNames(removed, '−')].join(', ')}${when}`;
  }
  // The kind's first field that changed speaks for it (the status, not its date); another is named.
  const order: readonly string[] = CHANGE_FIELDS[change.kind];
  const field = order.find((f) => f in fields) ?? Object.keys(fields)[0];
  if (!field) return `${change.kind}${when}`;
  const label = field === order[0] ? change.kind : `${change.kind} (${field})`;
  return `${label}: ${display(fields[field]!.from)} → ${display(fields[field]!.to)}${when}`;
}

interface Batch {
  cnpjs: string[];
  cursor?: string;
  key: string;
  tries: number;
  error?: string;
  done: boolean;
}

/** Every change of the CNPJs, asked batch by batch; what could not be asked is named per batch. */
function askChanges(client: ProspectaClient, http: HttpPort, clock: Clock, cnpjs: string[], since: string | undefined) {
  const size = limitOf('searchCompanyChanges', 'cnpjs', 'maxItems');
  const pageSize = limitOf('searchCompanyChanges', 'limit', 'maximum');
  const batches: Batch[] = [];
  for (let i = 0; i < cnpjs.length; i += size) batches.push({ cnpjs: cnpjs.slice(i, i + size), key: client.idempotencyKey(), tries: 0, done: false });
  const found = new Map<string, Change[]>();
  const deadline = clock.now() + BUDGET_MS;
  let credits = 0;
  let answered = false;
  let stoppedBy: string | undefined;
  let pending = batches;
  while (pending.length > 0 && !stoppedBy) {
    if (clock.now() > deadline) {
      stoppedBy = 'time ran out; run it again on the rows left';
      break;
    }
    const requests = pending.map((b) => client.request('searchCompanyChanges', { cnpjs: b.cnpjs, limit: pageSize, ...(since ? { since } : {}), ...(b.cursor ? { cursor: b.cursor } : {}) }, b.key));
    const responses = sending(() => http.fetchAll(requests));
    const next: Batch[] = [];
    let wait = 0;
    responses.forEach((response, k) => {
      const batch = pending[k]!;
      try {
        const page = client.parse('searchCompanyChanges', response);
        credits += page.creditsCharged;
        answered = true;
        for (const change of page.changes) found.set(change.cnpj, [...(found.get(change.cnpj) ?? []), change]);
        if (page.nextCursor === null) batch.done = true;
        else next.push(Object.assign(batch, { cursor: page.nextCursor, key: client.idempotencyKey(), tries: 0 }));
      } catch (err) {
        if (!(err instanceof ApiCallError)) throw err;
        if (err.status === 429 && batch.tries++ < MAX_429_RETRIES) {
          wait = Math.max(wait, Math.min(err.retryAfter ?? 5, 60));
          return void next.push(batch);
        }
        batch.error = plainError(err);
        // A refused key, balance or request (a release never imported) refuses every other batch
        // too: nothing more is sent. The CNPJs were checked here, so no batch is refused for its own.
        if (err.status < 500) stoppedBy = batch.error;
      }
    });
    if (wait > 0) clock.sleep(wait * 1000);
    pending = next;
  }
  const unanswered = new Map<string, string>();
  for (const batch of batches) if (!batch.done) for (const cnpj of batch.cnpjs) unanswered.set(cnpj, batch.error ?? stoppedBy ?? 'not asked');
  // Refused before anything was answered (no credits, a release never imported): the sheet is left as it was.
  if (stoppedBy && !answered) throw new PlainError(stoppedBy);
  return { found, unanswered, credits, ...(stoppedBy ? { stoppedBy } : {}) };
}

/**
 * Checks rows `first`…`last` of `sheet`: the `Registry changes` column gets one line per row, the
 * status column what it cost or why it was not checked.
 */
export function checkChanges(client: ProspectaClient, http: HttpPort, clock: Clock, sheet: SheetPort, first: number, last: number, options: ChangesOptions): ChangesOutcome {
  const column = columnsOf(sheet.headers(), options.columns).cnpj;
  if (!column) throw new PlainError('No CNPJ column: name a column "CNPJ", or choose it under Reads.');
  if (options.since !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(options.since)) throw new PlainError('The release is a month, YYYY-MM (e.g. 2026-10).');
  const cells = sheet.readRows(first, last - first + 1);
  const checks = cells.map((row) => {
    const raw = (row[column - 1] ?? '').trim();
    return raw ? checkCnpj(raw) : null;
  });
  const cnpjs = [...new Set(checks.flatMap((c) => (c?.status === 'valid' ? [c.cnpj] : [])))];
  const { found, unanswered, credits, stoppedBy } = askChanges(client, http, clock, cnpjs, options.since);
  const outcome: ChangesOutcome = { changed: 0, unchanged: 0, failed: 0, skipped: 0, credits, ...(stoppedBy ? { stoppedBy } : {}) };
  const since = options.since ? `since ${options.since}` : 'in the latest release';
  const results = checks.map((check): [string | null, string] => {
    if (!check) return outcome.skipped++, [null, '– no CNPJ'];
    if (check.status === 'malformed') return outcome.failed++, [null, '✗ not a CNPJ'];
    if (check.status === 'invalid') return outcome.failed++, [null, '✗ invalid check digits'];
    const changes = found.get(check.cnpj) ?? [];
    const line = changes.map(describeChange).join('; ');
    const missing = unanswered.get(check.cnpj);
    // Changes paid for before a batch stopped are written, marked as possibly not all of them.
    if (missing) return outcome.failed++, [changes.length ? line : null, `✗ ${changes.length ? `incomplete: ${missing}` : missing}`];
    if (changes.length === 0) return outcome.unchanged++, [`no change ${since}`, '✓ no change · 0 credits'];
    outcome.changed++;
    return [line, `✓ ${changes.length} change${changes.length === 1 ? '' : 's'} · ${changes.length} credit${changes.length === 1 ? '' : 's'}`];
  });
  const changesColumn = sheet.ensureColumn(CHANGES_COLUMN);
  const statusColumn = sheet.ensureColumn(STATUS_COLUMN);
  sheet.writeColumn(first, changesColumn, results.map(([line]) => line ?? ''));
  sheet.writeColumn(first, statusColumn, results.map(([, status]) => status));
  return outcome;
}
