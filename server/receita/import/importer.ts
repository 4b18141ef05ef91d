/**
 * `prospecta import cnpj --dir DIR`: one Receita Federal release into the `companies` collection,
 * one document per establishment, joined with its company, Simples option and partners.
 *
 * Order: the code tables, then the per-company files into staging (see staging.ts), then the
 * establishments in batches, each batch one write of whole documents keyed by CNPJ (where they
 * go: company-writer.ts). Because every write replaces a document by its key, running a release
 * again, or a newer one, never duplicates; a checkpoint after each batch lets a killed import resume where it stopped.
 * Establishments the release no longer holds are removed only when every file was read whole,
 * so a damaged download never deletes good data.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Store } from '../../store/port.ts';
import { checkCnpj } from '../../../shared/cnpj.ts';
import { findReleaseFiles, LOOKUP_KINDS, missingFiles, ReleaseRefused, releaseMonthOf, type FileKind, type LookupKind, type ReleaseFile } from './release-files.ts';
import * as records from './records.ts';
import { cutShort, openReleaseEntries, openReleaseFile, readRowBatches, type Problem, type Row } from './rows.ts';
import { TaxRegimeWriter } from './tax-regime-writer.ts';
import { rowLayoutOf } from './row-layout.ts';
import { loadedRelease } from '../../companies/releases.ts';
import { companyWriter, type CompanyWriter } from './company-writer.ts';
import { addUnknown } from './records.ts';
import { MemoryStaging, StoreStaging, type Staging } from './staging.ts';
import type { CnaeDoc } from '../../companies/activities.ts';
import type { EstablishmentRow, Joined } from './documents.ts';
import { stagedPos } from '../../companies/registry/staged-row.ts';
import { importStarted } from '../../lib/metrics.ts';
import type { StagedRead } from './document-thread.ts';
import { closeComparison } from '../../companies/changes/change-history.ts';
import type { ChangeCounts } from '../../companies/changes/change-diff.ts';
import { MongoChangeRecorder } from '../../companies/changes/mongo-changes.ts';
import { COMPANY_FILE_KINDS, stageRows, type CompanyFileKind, type StagedRows } from './staged-rows.ts';

export interface ImportProgress {
  phase: 'codes' | 'companies' | 'tax regimes' | 'establishments' | 'finishing';
  file: string;
  /** Files finished so far, of `files`. */
  filesDone: number;
  files: number;
  /** Rows read in this run, all files together. */
  rows: number;
  establishments: number;
  /** In the phase 'finishing' of an import into a release file: the step of the end begun last. */
  step?: string;
  /** Changes recorded since the release replaced, by kind: given once the release is in service. */
  changes?: ChangeCounts;
}

export interface ImportOptions {
  dir: string;
  /** `YYYY-MM`; by default read from the folder's name or the files' names or extraction date. */
  release?: string;
  /** Import even when an older release than the one loaded (which is otherwise refused). */
  force?: boolean;
  /** Marks a synthetic release (the demo data), which a real one of any month may replace. */
  synthetic?: boolean;
  /** What "this month" is for the release month's check: the clock's by default (tests give another). */
  now?: Date;
  onProgress?: (progress: ImportProgress) => void;
  onProblem?: (problem: Problem) => void;
  /**
   * Stops the import between blocks of rows (its command line went away): what was written stays,
   * and the next import of the same release resumes from there.
   */
  signal?: AbortSignal;
  batchSize?: number;
  /** Where per-company data waits; by default the release file's staging file, a collection on MongoDB, memory elsewhere. */
  staging?: 'memory' | 'store' | 'file';
  /**
   * The built document-worker.mjs, to build a bulk load's documents in worker threads (see
   * company-writer.ts); without it they are built in this one.
   */
  documentWorker?: URL;
}

export interface ImportSummary {
  release: string;
  /** Where the release month was read: `--release`, or a folder or file name. */
  releaseFrom: string;
  resumed: boolean;
  complete: boolean;
  files: number;
  establishments: number;
  companies: number;
  partners: number;
  removed: number;
  /** Changes recorded since the release it replaced, by kind; empty when it replaced none older (changes/). */
  changes: ChangeCounts;
  /** Tax-regime rows imported, and how many of them name a CNPJ no establishment of this import has (kept for later joins). */
  taxRegimes: { rows: number; withoutEstablishment: number | null };
  /** Per code table, the rows that carried a code the table lacks (kept with a null description). */
  unknownCodes: records.UnknownCodes;
  problems: { count: number; first: Problem[] };
}

/** The release is older than the one loaded: importing it needs `force`. */
export class OlderReleaseError extends ReleaseRefused {}

interface FileState {
  done: boolean;
  /** Records of the file already written (establishments) or staged. */
  records: number;
}

export interface ImportDoc {
  _id: string;
  /** Stamped on every establishment this import writes; a resumed import keeps it. */
  run: string;
  status: 'running' | 'complete' | 'incomplete';
  /** A synthetic release (the demo data). */
  synthetic?: boolean;
  startedAt: Date;
  finishedAt: Date | null;
  files: Record<string, FileState>;
  summary: ImportSummary | null;
}

const KEPT_PROBLEMS = 100;
const BATCHES_IN_FLIGHT = 4;
/**
 * Per-company files each worker thread reads ahead of the one being staged: two, so that a
 * thread done with a small file (a Sócios part) has the next while the other reads a large one
 * (Simples). Each holds at most a few blocks (document-worker.ts), so memory stays small.
 */
const FILES_AHEAD_PER_THREAD = 2;
const TAX_REGIME_BATCH = 20_000;
const KIND_ORDER: FileKind[] = [...LOOKUP_KINDS, 'empresas', 'simples', 'socios', 'regimes', 'estabelecimentos'];

/** Checkpoint keys cannot hold dots (they are field paths). */
const stateKey = (file: ReleaseFile) => file.name.replaceAll('.', '_');

export async function importRelease(store: Store, options: ImportOptions): Promise<ImportSummary> {
  const files = (await findReleaseFiles(options.dir)).sort(
    (a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || a.name.localeCompare(b.name),
  );
  const month = options.release
    ? { release: options.release, readFrom: '--release' }
    : releaseMonthOf(
        options.dir,
        await innerNames(files),
        files.filter((f) => f.kind !== 'regimes').map((f) => f.name),
      );
  if (!month) throw new ReleaseRefused(`cannot tell the release month of ${options.dir} from the folder or file names; pass --release YYYY-MM`);
  // A month not published yet (a mistyped folder name) would make every real release after it "older", needing --force and recording no changes.
  const thisMonth = (options.now ?? new Date()).toISOString().slice(0, 7);
  if (month.release > thisMonth && !options.synthetic) {
    throw new ReleaseRefused(`release ${month.release} (read from ${month.readFrom}) is after this month, ${thisMonth}: no such release is published yet; pass --release YYYY-MM`);
  }
  const loaded = await loadedRelease(store);
  if (loaded && !loaded.synthetic && month.release < loaded.release && !options.force) {
    throw new OlderReleaseError(
      `release ${month.release} (read from ${month.readFrom}) is older than the loaded release ${loaded.release}; pass --force to import it over it`,
    );
  }
  // Progress, as the importer reports it, also feeds the metrics (running, files done, rows, establishments).
  const metered = importStarted();
  const onProgress = (progress: ImportProgress) => {
    metered.progress(progress);
    options.onProgress?.(progress);
  };
  try {
    return await new Run(store, files, month.release, month.readFrom, { ...options, onProgress }).run();
  } finally {
    metered.end();
  }
}

async function innerNames(files: ReleaseFile[]): Promise<string[]> {
  const opened = await openReleaseFile(files[0]!, () => undefined);
  opened?.stream.destroy();
  return opened ? [opened.innerName] : [];
}

class Run {
  private readonly imports: Collection<ImportDoc>;
  private companies!: CompanyWriter;
  private staging!: Staging;
  private readonly lookups = Object.fromEntries(LOOKUP_KINDS.map((k) => [k, new Map<string, string>()])) as records.Lookups;
  private readonly problems: Problem[] = [];
  private problemCount = 0;
  private readonly progress: ImportProgress;
  private readonly summary: ImportSummary;
  private state: ImportDoc | null = null;
  private readonly batchSize: number;
  private readonly unknown: records.UnknownCodes = {};
  /** Codes of the per-company files, counted when they are staged. */
  private readonly codes = new records.Codes(this.lookups, this.unknown);
  private regimes!: TaxRegimeWriter;
  private regimesWhole = true;
  /** MongoDB, a newer release: records changes as documents are replaced. */
  private changeRecorder: MongoChangeRecorder | null = null;
  /** Per-company files being read by the worker threads, ahead of their turn. */
  private readonly staged = new Map<ReleaseFile, StagedRead>();

  constructor(
    private readonly store: Store,
    private readonly files: ReleaseFile[],
    private readonly release: string,
    releaseFrom: string,
    private readonly options: ImportOptions,
  ) {
    this.imports = store.collection<ImportDoc>('registry_imports');
    this.batchSize = options.batchSize ?? 2000;
    this.progress = { phase: 'codes', file: '', filesDone: 0, files: files.length, rows: 0, establishments: 0 };
    this.summary = {
      release,
      releaseFrom,
      resumed: false,
      complete: false,
      files: files.length,
      establishments: 0,
      companies: 0,
      partners: 0,
      removed: 0,
      changes: {},
      taxRegimes: { rows: 0, withoutEstablishment: null },
      unknownCodes: this.unknown,
      problems: { count: 0, first: this.problems },
    };
  }

  async run(): Promise<ImportSummary> {
    await this.begin();
    try {
      return await this.readAll();
    } finally {
      await this.companies.close();
    }
  }

  private phaseOf(file: ReleaseFile): ImportProgress['phase'] {
    if (file.kind === 'estabelecimentos') return 'establishments';
    if (file.kind === 'regimes') return 'tax regimes';
    return LOOKUP_KINDS.includes(file.kind as LookupKind) ? 'codes' : 'companies';
  }

  private async readAll(): Promise<ImportSummary> {
    // A file that did not arrive is read as one cut at its start: what the older release had from it stays.
    const missing = missingFiles(this.files);
    for (const file of missing) this.report({ file, message: 'missing from the release folder: the release is incomplete, and nothing it would hold is removed' });
    let whole = missing.length === 0;
    for (const [index, file] of this.files.entries()) {
      this.options.signal?.throwIfAborted();
      this.progress.phase = this.phaseOf(file);
      this.progress.file = file.name;
      this.options.onProgress?.(this.progress);
      this.readAhead(index);
      const read = await this.importFile(file);
      // The last per-company file: what the first establishment's join needs may be prepared beside the tax-regime files.
      if (COMPANY_FILE_KINDS.has(file.kind) && !COMPANY_FILE_KINDS.has(this.files[index + 1]?.kind ?? '')) this.staging.staged?.();
      whole = read && whole;
      if (file.kind === 'regimes') this.regimesWhole = read && this.regimesWhole;
      this.progress.filesDone++;
    }
    this.progress.phase = 'finishing';
    this.options.onProgress?.(this.progress);
    // Tax regimes are replaced only by a release that has them, read whole.
    const regimesReplaced = this.regimesWhole && this.files.some((f) => f.kind === 'regimes');
    const { release } = this.companies;
    if (release) {
      // A release file of its own: built from what was written, then put in service in one step.
      this.summary.removed = await release.finish({
        meta: { release: this.release, complete: whole, synthetic: this.options.synthetic === true },
        keepUnwritten: !whole,
        keepTaxRegimes: !regimesReplaced,
        onChanges: (changes) => {
          this.progress.changes = changes;
          this.options.onProgress?.(this.progress);
        },
        onStep: (step) => {
          this.progress.step = step;
          this.options.onProgress?.(this.progress);
        },
      });
      await this.clearCollectionsBeforeFiles();
    } else if (whole) {
      // Whatever this import did not write is no longer published (or came from another source).
      this.summary.removed = await this.companies.removeUnwritten();
    }
    const changes = await closeComparison(this.store, this.release, this.changeRecorder?.previous ?? null);
    await this.changeRecorder?.prune();
    if (changes) {
      this.summary.changes = changes;
      this.progress.changes = changes;
      this.options.onProgress?.(this.progress);
    }
    if (regimesReplaced) await this.regimes.removeUnwritten();
    this.summary.taxRegimes = { rows: this.regimes.rows, withoutEstablishment: this.regimes.withoutEstablishment() };
    await this.regimes.close();
    addUnknown(this.unknown, this.companies.unknown);
    await this.staging.clear();
    this.summary.complete = whole;
    this.summary.problems.count = this.problemCount;
    await this.imports.updateOne(
      { _id: this.release },
      {
        $set: {
          status: whole ? 'complete' : 'incomplete',
          finishedAt: new Date(),
          summary: this.summary,
          // Always written: a real import of the demo's month must not stay marked synthetic.
          synthetic: this.options.synthetic === true,
        },
      },
    );
    return this.summary;
  }

  /** Picks up an interrupted import of the same release, or starts afresh. */
  private async begin(): Promise<void> {
    // Against the release loaded before this import marks itself running (the same release again compares with nothing).
    if (this.store.kind === 'mongodb') this.changeRecorder = await MongoChangeRecorder.of(this.store, this.release, this.options.synthetic === true);
    await this.resumeOrStart();
    this.companies = await companyWriter(this.store, this.context(), this.options.documentWorker, this.changeRecorder);
    if (this.summary.resumed && this.companies.release?.stagedByOlderVersion) {
      // Left by an older version, in a form this one does not read: the import starts again, in a file of its own.
      await this.companies.close();
      await this.start();
      this.companies = await companyWriter(this.store, this.context(), this.options.documentWorker, this.changeRecorder);
    }
    const context = this.context();
    this.staging = this.stagingFor(this.companies);
    if (!this.summary.resumed) await this.staging.clear();
    this.regimes = new TaxRegimeWriter(this.store, context, this.staging.durable, this.companies.release);
  }

  /** The option's staging, or by default: the release file's own, a collection on MongoDB, memory elsewhere. */
  private stagingFor(companies: CompanyWriter): Staging {
    const staging = this.options.staging ?? (companies.release ? 'file' : this.store.kind === 'mongodb' ? 'store' : 'memory');
    if (staging === 'file' && companies.release) return companies.release.staging();
    return staging === 'store' ? new StoreStaging(this.store, this.release) : new MemoryStaging();
  }

  /**
   * A store that held the registry in its collections (before release files) has it in its
   * files now: the collections are emptied, so that the store stops holding them in memory.
   */
  private async clearCollectionsBeforeFiles(): Promise<void> {
    for (const name of ['companies', 'tax_regimes']) {
      const collection = this.store.collection(name);
      if ((await collection.findOne({})) !== null) await collection.deleteMany({});
    }
  }

  private context() {
    return { lookups: this.lookups, release: this.release, run: this.state!.run };
  }

  private async resumeOrStart(): Promise<void> {
    const previous = await this.imports.findOne({ _id: this.release });
    if (previous?.status === 'running') {
      this.state = previous;
      this.summary.resumed = true;
      return;
    }
    await this.start();
  }

  /** A new run of the import, from the first file. */
  private async start(): Promise<void> {
    this.summary.resumed = false;
    const { _id, ...fresh } = (this.state = {
      _id: this.release,
      run: randomUUID(),
      status: 'running',
      startedAt: new Date(),
      finishedAt: null,
      files: {},
      summary: null,
    });
    await this.imports.updateOne({ _id }, { $set: fresh }, { upsert: true });
  }

  private report = (problem: Problem): void => {
    this.problemCount++;
    if (this.problems.length < KEPT_PROBLEMS) this.problems.push(problem);
    this.options.onProblem?.(problem);
  };

  /** Where to start reading a file: from the top, from a row, or not at all (it is already written or durably staged). */
  private startOf(file: ReleaseFile): number | 'done' {
    const saved = this.state!.files[stateKey(file)];
    const isLookup = LOOKUP_KINDS.includes(file.kind as LookupKind);
    // Code tables are always read (they are small and live in memory); staged data only survives in a durable staging.
    const durable = file.kind === 'regimes' ? this.regimes.durable : this.staging.durable;
    if (isLookup) return 0;
    if (saved?.done && (file.kind === 'estabelecimentos' || durable)) return 'done';
    return file.kind === 'estabelecimentos' || durable ? (saved?.records ?? 0) : 0;
  }

  /**
   * The per-company files are read by the worker threads, when there are any, a few files ahead
   * of the one being staged here, and staged in the files' order (a later row of a root replaces an
   * earlier one, and partners keep their order). Not before the first of them is reached: the
   * threads take the code tables, read before them, with their first request.
   */
  private readAhead(from: number): void {
    if (!COMPANY_FILE_KINDS.has(this.files[from]!.kind)) return;
    const threads = this.companies.threads;
    for (let i = from; i < this.files.length && i < from + threads.length * FILES_AHEAD_PER_THREAD; i++) {
      const file = this.files[i]!;
      if (!COMPANY_FILE_KINDS.has(file.kind) || this.staged.has(file)) continue;
      const start = this.startOf(file);
      const thread = i % threads.length;
      if (start !== 'done') this.staged.set(file, threads[thread]!.stage(file, start, this.companies.release?.companyRowsInto(thread, i)));
    }
  }

  /** Whether the file was read to its end. */
  private async importFile(file: ReleaseFile): Promise<boolean> {
    const skip = this.startOf(file);
    if (skip === 'done') return true;
    if (file.kind === 'regimes') return this.importTaxRegimes(file);
    const staged = this.staged.get(file);
    if (staged) {
      this.staged.delete(file);
      return this.importStaged(file, staged);
    }
    const opened = await openReleaseFile(file, this.report);
    if (!opened) return false;
    let ended = !opened.damaged;
    const countEnd = (problem: Problem) => {
      if (cutShort(problem)) ended = false;
      this.report(problem);
    };
    const { columns, layout } = rowLayoutOf(file.kind);
    const blocks = readRowBatches(opened.stream, file, columns, countEnd, layout);
    const writer = this.writerFor(file);
    const written = this.written(file);
    let batch: Row[] = [];
    let seen = 0;
    try {
      for await (const rows of blocks) {
        this.options.signal?.throwIfAborted();
        for (const row of rows) {
          this.progress.rows++;
          if (++seen <= skip) continue;
          batch.push(row);
          if (batch.length >= this.batchSize) {
            await written.add(writer(batch), seen);
            batch = [];
          }
        }
      }
      if (batch.length > 0) await written.add(writer(batch), seen);
      await written.all();
    } finally {
      await written.settled();
    }
    await this.checkpoint(file, seen, ended);
    return ended;
  }

  /** A per-company file its worker thread read: each block staged here, checkpointed as the importer's own reading is. */
  private async importStaged(file: ReleaseFile, staged: StagedRead): Promise<boolean> {
    const written = this.written(file);
    let seen = 0;
    try {
      for await (const block of staged) {
        this.options.signal?.throwIfAborted();
        block.problems.forEach(this.report);
        addUnknown(this.unknown, block.unknown);
        this.progress.rows += block.rows;
        seen += block.rows;
        await written.add(this.stage(file, block), seen);
      }
      await written.all();
    } catch (err) {
      // The worker thread may have stored the rows itself, into a release file: a full disk is named as the file's own writes name it.
      throw this.companies.release?.named(err) ?? err;
    } finally {
      await written.settled();
    }
    const { opened, ended, problems } = staged.ended;
    problems.forEach(this.report);
    if (!opened) return false;
    await this.checkpoint(file, seen, ended);
    return ended;
  }

  /**
   * Writes of a file's batches, a few in flight: reading goes on while earlier batches wait for
   * their fsync. Each checkpoint follows its own batch and every checkpoint before it, so a
   * checkpoint never counts a row that is not durable yet.
   */
  private written(file: ReleaseFile) {
    const inFlight: Array<Promise<void>> = [];
    let checkpointed: Promise<void> = Promise.resolve();
    // Where a resumed import starts again from the top (code tables, staging in memory), a
    // checkpoint per batch would be a disk flush no one reads: the file's last one is enough.
    const resumable = file.kind === 'estabelecimentos' || (COMPANY_FILE_KINDS.has(file.kind) && this.staging.durable);
    return {
      /** Resolves when there is room for another batch. */
      add: async (write: Promise<void>, records: number): Promise<void> => {
        checkpointed = Promise.all([checkpointed, write]).then(() => (resumable ? this.checkpoint(file, records, false) : this.options.onProgress?.(this.progress)));
        inFlight.push(checkpointed);
        if (inFlight.length >= BATCHES_IN_FLIGHT) await inFlight.shift();
      },
      all: () => checkpointed,
      // A failed batch fails the import; let the others settle first, so none is left writing.
      settled: () => Promise.allSettled(inFlight),
    };
  }

  /**
   * A tax-regime file, each of its CSVs in turn (with their header row); read whole again on a
   * resume, since its keys wait in memory (writing a row twice keeps one: ids are the row's key).
   */
  private async importTaxRegimes(file: ReleaseFile): Promise<boolean> {
    let ended = true;
    let entries = 0;
    const report = (problem: Problem) => {
      if (cutShort(problem)) ended = false;
      this.report(problem);
    };
    for await (const opened of openReleaseEntries(file, report)) {
      entries++;
      if (opened.damaged) ended = false;
      const name = opened.innerName === file.name ? file.name : `${file.name}/${opened.innerName}`;
      const { columns, layout } = rowLayoutOf('regimes');
      const blocks = readRowBatches(opened.stream, { name }, columns, report, layout);
      // Rows are small: large batches, a few in flight, so parsing goes on while earlier ones await their fsync.
      const inFlight: Array<Promise<void>> = [];
      let batch: Row[] = [];
      try {
        for await (const rows of blocks) {
          this.options.signal?.throwIfAborted();
          for (const row of rows) {
            this.progress.rows++;
            batch.push(row);
            if (batch.length >= TAX_REGIME_BATCH) {
              inFlight.push(this.regimes.write(name, batch, this.report));
              batch = [];
              this.options.onProgress?.(this.progress);
              if (inFlight.length >= BATCHES_IN_FLIGHT) await inFlight.shift();
            }
          }
        }
        if (batch.length > 0) inFlight.push(this.regimes.write(name, batch, this.report));
        await Promise.all(inFlight);
      } finally {
        await Promise.allSettled(inFlight);
      }
    }
    const done = ended && entries > 0;
    await this.checkpoint(file, 0, done);
    return done;
  }

  private async checkpoint(file: ReleaseFile, records: number, done: boolean): Promise<void> {
    this.state!.files[stateKey(file)] = { done, records };
    this.options.onProgress?.(this.progress);
    await this.imports.updateOne({ _id: this.release }, { $set: { [`files.${stateKey(file)}`]: { done, records } } });
  }

  private writerFor(file: ReleaseFile): (batch: Row[]) => Promise<void> {
    if (COMPANY_FILE_KINDS.has(file.kind)) {
      const kind = file.kind as CompanyFileKind;
      return (batch) => this.stage(file, stageRows(kind, file.name, batch, this.codes, this.report));
    }
    if (file.kind === 'estabelecimentos') return (batch) => this.writeEstablishments(file, batch);
    return (batch) => this.readLookup(file.kind as LookupKind, batch);
  }

  /**
   * A per-company file's rows, read here or by a worker thread (staged-rows.ts), into staging;
   * or only counted, when the worker thread stored them itself (into a release file).
   */
  private async stage(file: ReleaseFile, block: StagedRows | { stored: number }): Promise<void> {
    const kind = file.kind as CompanyFileKind;
    const count = 'stored' in block ? block.stored : block.roots.length;
    if (kind === 'socios') this.summary.partners += count;
    if (kind === 'empresas') this.summary.companies += count;
    if ('stored' in block) return;
    const { roots, texts, lines } = block;
    const place = this.files.indexOf(file);
    const pos = (i: number) => stagedPos(place, lines[i]!);
    if (kind === 'socios') {
      const key = stateKey(file);
      return this.staging.addPartners(roots.map((root, i) => ({ root, key: `${key}_${lines[i]}`, partner: texts[i]!, pos: pos(i) })));
    }
    return this.staging.put(roots.map((root, i) => ({ root, data: kind === 'empresas' ? { company: texts[i]! } : { simples: texts[i]! }, pos: pos(i) })));
  }

  private async readLookup(kind: LookupKind, batch: Row[]): Promise<void> {
    for (const { fields } of batch) {
      const code = fields[0]!.trim();
      const description = fields[1]!.trim();
      if (code !== '') this.lookups[kind].set(code, description);
    }
    if (kind === 'cnaes') {
      await this.store.collection<CnaeDoc>('cnaes').bulkWrite(
        batch.map(({ fields }) => ({
          replaceOne: {
            filter: { _id: fields[0]!.trim().padStart(7, '0') },
            replacement: { _id: fields[0]!.trim().padStart(7, '0'), description: fields[1]!.trim() },
            upsert: true,
          },
        })),
        { ordered: false },
      );
    }
  }

  private async writeEstablishments(file: ReleaseFile, batch: Row[]): Promise<void> {
    const valid: EstablishmentRow[] = [];
    const place = this.files.indexOf(file);
    for (const { fields, line, quoted } of batch) {
      const given = fields[0]!.trim() + fields[1]!.trim() + fields[2]!.trim();
      const check = checkCnpj(given);
      if (check.status !== 'valid') {
        const reason = check.status === 'invalid' ? 'wrong check digits' : 'not 14 letters and digits';
        this.report({ file: file.name, line, message: `CNPJ ${JSON.stringify(given)}: ${reason}` });
        continue;
      }
      const pos = stagedPos(place, line);
      // A quoted row's split fields go no further: the quoted text holds them all.
      valid.push(quoted === undefined ? { cnpj: check.cnpj, fields, pos } : { cnpj: check.cnpj, quoted, pos });
    }
    if (valid.length === 0) return;
    await this.companies.write(valid, this.join);
    this.summary.establishments += valid.length;
    this.progress.establishments += valid.length;
  }

  /** What establishment rows join, read here: by writers that do not join them themselves (CompanyWriter's `write`). */
  private readonly join = async (rows: EstablishmentRow[]): Promise<Joined> => ({
    roots: await this.staging.get([...new Set(rows.map((row) => row.cnpj.slice(0, 8)))]),
    taxRegimes: await this.regimes.keysFor(rows.map((row) => row.cnpj)),
  });
}
