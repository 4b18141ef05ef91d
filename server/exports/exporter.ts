/**
 * Writes an export job's file: every establishment matching its filters, in CNPJ order, a page at
 * a time through the companies repository's keyset search (`after` the last CNPJ written), so
 * memory holds one page whatever the size of the export, and no search cap applies.
 *
 * Each page is paid for before it is written (1 credit per row, the registry's price): the rows
 * about to be paid for are recorded first (`billed`), then debited, then written and synced, then
 * checkpointed with the job's progress. A balance that cannot pay a whole page pays for the rows
 * it can; those are written and the export stops. A run cut anywhere (kill -9, a lease lost)
 * resumes from its checkpoint: the file is cut back to the checkpoint's length, and rows recorded
 * as billed are written again without charging, so no row is paid twice. A crash between `billed`
 * and its debit leaves those rows unpaid: the error is the customer's gain, never their loss.
 *
 * The file lives under DATA_DIR/exports, named by the job. Several instances on one MongoDB must
 * share DATA_DIR (a shared volume) for any of them to serve or resume another's export.
 */
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { operations } from '../../shared/operations/index.ts';
import { priceOf } from '../../shared/operations/types.ts';
import type { ExportFormat } from '../../shared/schemas/exports.ts';
import type { Companies } from '../companies/companies.ts';
import { companyView } from '../companies/company-record.ts';
import type { CompanyFilters } from '../companies/search-plan.ts';
import type { Credits } from '../credits/ledger.ts';
import type { ExportState, JobDoc, Jobs } from '../jobs/jobs.ts';
import { fileLine, fileStart } from './export-file.ts';

/** Rows read, paid for and written at a time: a page's records are all the memory an export holds. */
export const EXPORT_PAGE_ROWS = 1000;
/** How long a runner holds an export between checkpoints before another may take it over. */
export const EXPORT_LEASE_MS = 2 * 60_000;

const EXTENSIONS: Record<ExportFormat, string> = { csv: 'csv', ndjson: 'ndjson' };

export interface ExporterDeps {
  jobs: Pick<Jobs, 'saveExport' | 'now'>;
  companies: Pick<Companies, 'search'>;
  credits: Pick<Credits, 'debit' | 'refund'>;
  dataDir: string;
  log: Logger;
}

/** How a run ended: all written, or stopped by the balance; null when it was stopped from outside (the job ended, the server stops). */
export type ExportEnd = 'done' | 'stopped' | null;

export class Exporter {
  private readonly dir: string;

  constructor(private readonly deps: ExporterDeps) {
    this.dir = join(deps.dataDir, 'exports');
  }

  /** Where a job's file is. */
  fileOf(job: Pick<JobDoc, '_id' | 'export'>): string {
    return join(this.dir, `${job._id}.${EXTENSIONS[job.export!.format]}`);
  }

  /** Removes a job's file, if it has one (the jobs' sweep, 7 days after the job ended). */
  async remove(job: JobDoc): Promise<void> {
    if (job.export) await rm(this.fileOf(job), { force: true });
  }

  /**
   * Runs an export claimed by `owner` (`Jobs.claimExport`) from its checkpoint to its end.
   * `stillActing` is asked before each page: a credential revoked meanwhile stops it (it throws).
   */
  async run(job: JobDoc, owner: string, signal: AbortSignal, beforePage: () => Promise<void>): Promise<ExportEnd> {
    const { jobs, companies } = this.deps;
    const filters = job.export!.filters as CompanyFilters;
    await mkdir(this.dir, { recursive: true });
    const file = await openForWriting(this.fileOf(job));
    try {
      let state: ExportState = { ...job.export!, owner };
      let charged = job.creditsCharged;
      const size = (await file.stat()).size;
      // The file is not the one checkpointed (another instance's DATA_DIR, a lost disk): written again from the start, the rows already paid for free.
      if (size < state.bytes) state = { ...state, rows: 0, bytes: 0, lastCnpj: null };
      await file.truncate(state.bytes);
      if (state.bytes === 0) state.bytes += await write(file, fileStart(state.format), 0);
      while (state.rows < state.maxRows) {
        if (signal.aborted) return null;
        await beforePage();
        const want = Math.min(EXPORT_PAGE_ROWS, state.maxRows - state.rows);
        const { companies: page } = await companies.search(filters, want, state.lastCnpj ?? undefined);
        if (page.length === 0) break;
        const alreadyPaid = Math.min(page.length, Math.max(0, state.billed - state.rows));
        let paid = alreadyPaid;
        if (paid < page.length) {
          const lease = new Date(jobs.now() + EXPORT_LEASE_MS);
          state = { ...state, billed: state.rows + page.length, leaseUntil: lease };
          await jobs.saveExport(job._id, state, charged);
          const bought = await this.pay(job, state.rows + paid, page.length - paid);
          charged += bought.credits;
          paid += bought.rows;
          if (paid < page.length) state = { ...state, billed: state.rows + paid };
        }
        const lines = page.slice(0, paid).map((record) => fileLine(state.format, companyView(record))).join('');
        const bytes = await write(file, lines, state.bytes);
        await file.datasync();
        state = {
          ...state,
          rows: state.rows + paid,
          bytes: state.bytes + bytes,
          lastCnpj: paid > 0 ? page[paid - 1]!.cnpj : state.lastCnpj,
          leaseUntil: new Date(jobs.now() + EXPORT_LEASE_MS),
        };
        await jobs.saveExport(job._id, state, charged);
        if (paid < page.length) return 'stopped';
        if (page.length < want) break;
      }
      await file.datasync();
      return 'done';
    } finally {
      await file.close();
    }
  }

  /**
   * Gives back, when an export has failed for good, the rows recorded as paid for (`billed`) that
   * it never wrote: it is charged per row written. (A crash between recording and debiting left
   * them unpaid: refunded all the same, the error is the customer's gain, as everywhere here.)
   */
  async refundUnwritten(job: JobDoc): Promise<void> {
    const state = job.export;
    if (!state || state.billed <= state.rows) return;
    const price = priceOf(operations.exportCompanies.credits, state.billed - state.rows, null);
    const detail = `export ${job._id} rows ${state.rows + 1} to ${state.billed}: paid for, never written (the export failed)`;
    if (price > 0) await this.deps.credits.refund(job.workspaceId, price, 'exportCompanies', detail);
  }

  /**
   * Debits up to `rows` rows from row `from`: all of them, or as many as the balance pays for
   * (each debit is the ledger's conditional update, so the balance is never overdrawn).
   */
  private async pay(job: JobDoc, from: number, rows: number): Promise<{ rows: number; credits: number }> {
    const rule = operations.exportCompanies.credits;
    const unit = priceOf(rule, 1, null);
    let want = rows;
    while (want > 0) {
      const price = priceOf(rule, want, null);
      const debit = await this.deps.credits.debit(job.workspaceId, price, 'exportCompanies', `export ${job._id} rows ${from + 1} to ${from + want}`);
      if (debit.ok) return { rows: want, credits: price };
      want = Math.min(want - 1, unit > 0 ? Math.floor(debit.balance / unit) : want - 1);
    }
    return { rows: 0, credits: 0 };
  }
}

async function openForWriting(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return open(path, 'w+');
  }
}

/** Writes `text` at `position`; resolves with its length in bytes. */
async function write(file: FileHandle, text: string, position: number): Promise<number> {
  if (text === '') return 0;
  const buffer = Buffer.from(text, 'utf8');
  let written = 0;
  while (written < buffer.length) {
    const { bytesWritten } = await file.write(buffer, written, buffer.length - written, position + written);
    written += bytesWritten;
  }
  return buffer.length;
}
