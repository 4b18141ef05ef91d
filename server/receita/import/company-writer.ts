/**
 * Where an import's establishment documents go, and how those it did not write are removed once
 * a release has been read whole.
 *
 * A store that would hold every document in the importing process (the embedded store, opened
 * by the CLI) is bulk loaded instead: documents go to its journal and leave memory at once, so a
 * million-establishment import needs memory for its staging, not for the registry; given the
 * built worker script, they are also built and encoded in worker threads. Anywhere else they
 * are upserted through the collection.
 */
import { availableParallelism } from 'node:os';
import type { BulkLoader, Collection, Store } from '../../store/port.ts';
import type { CompanyDoc } from '../../companies/company-record.ts';
import { DocumentThread, type CompanyRowsInto } from './document-thread.ts';
import { companyDocuments, type DocumentContext, type EstablishmentRow, type Joined } from './documents.ts';
import { Interner } from './interner.ts';
import { addUnknown, type UnknownCodes } from './records.ts';
import { basename, join } from 'node:path';
import { registryOf, type Registry } from '../../companies/registry/registry.ts';
import { ReleaseWriter, stagePath, type FinishOptions } from './release-writer.ts';
import { codecTables, RecordEncoder, withDictionary } from '../../companies/registry/record-codec.ts';
import { stagedRows } from '../../companies/registry/staged-row.ts';
import type { TaxRegimeDoc } from '../../companies/tax-regimes.ts';
import { FileStaging } from './staging.ts';
import type { MongoChangeRecorder } from '../../companies/changes/mongo-changes.ts';
import { rowsFiles, rowsPath } from './rows-files.ts';

export interface CompanyWriter {
  /**
   * Stores the rows' documents, each under its CNPJ, replacing what was there; resolves once
   * durable. `join` reads what they join, for a writer that does not read it itself.
   */
  write(rows: EstablishmentRow[], join: (rows: EstablishmentRow[]) => Promise<Joined>): Promise<void>;
  /** Per table, the establishments' codes it lacked, in the documents written so far. */
  readonly unknown: UnknownCodes;
  /** The worker threads building the documents, which also read the per-company files; none if built in this thread. */
  readonly threads: readonly DocumentThread[];
  /** Removes the documents the current run has not written; how many. */
  removeUnwritten(): Promise<number>;
  /**
   * Writing into a release file of its own (registry/): builds it and puts it in service, in
   * place of `removeUnwritten`; how many establishments of the replaced release it lacks.
   */
  readonly release?: ReleaseFileWriter;
  close(): Promise<void>;
}

const REMOVALS_PER_WRITE = 10_000;

/** What a release file stores of each document: its record, without the keys the file holds elsewhere. */
function* storedRecords(docs: Iterable<CompanyDoc>): Generator<object> {
  for (const { _id, search, importRun, ...record } of docs) yield record;
}
/**
 * Batches go to the threads in turn. On two cores two threads beat one (the establishments of a
 * 1M release in 24.9 s against 29.5 s): the scheduler fills the reading thread's waits. Capped
 * at four because one reading thread feeds them all (not measured beyond two cores).
 */
const DOCUMENT_THREADS = Math.min(4, Math.max(2, availableParallelism()));

/** `changes`: records what the documents replaced differ by (MongoDB, a newer release). */
export async function companyWriter(store: Store, context: DocumentContext, workerScript?: URL, changes?: MongoChangeRecorder | null): Promise<CompanyWriter> {
  const registry = registryOf(store);
  if (registry) return new ReleaseFileWriter(registry, context, workerScript);
  const companies = store.collection<CompanyDoc>('companies');
  if (!store.bulkLoader) return new UpsertWriter(companies, context, store.kind === 'embedded', changes ?? null);
  const loader = store.bulkLoader<CompanyDoc>('companies', ['importRun']);
  const unwritten = new Set<string>();
  for (const [id, { importRun }] of loader.stored) if (importRun !== context.run) unwritten.add(id);
  const threads = workerScript ? Array.from({ length: DOCUMENT_THREADS }, () => new DocumentThread(workerScript, context, loader.indexed)) : [];
  return new LoadWriter(loader, context, unwritten, threads);
}

class UpsertWriter implements CompanyWriter {
  readonly unknown: UnknownCodes = {};
  readonly threads = [];
  /** Where the process keeps the documents, it keeps one copy of each repeated string. */
  private readonly interner: Interner | undefined;

  constructor(
    private readonly companies: Collection<CompanyDoc>,
    private readonly context: DocumentContext,
    keepsDocuments: boolean,
    private readonly changes: MongoChangeRecorder | null = null,
  ) {
    this.interner = keepsDocuments ? new Interner() : undefined;
  }

  async write(rows: EstablishmentRow[], join: (rows: EstablishmentRow[]) => Promise<Joined>): Promise<void> {
    const docs = Array.from(companyDocuments({ rows, ...(await join(rows)) }, this.context, this.unknown));
    // Recorded before the documents they compare are replaced: a kill between loses none.
    await this.changes?.before(docs);
    await this.companies.bulkWrite(
      docs.map((doc) => {
        const shared = this.interner?.shareStrings(doc) ?? doc;
        return { replaceOne: { filter: { _id: doc._id }, replacement: shared, upsert: true } };
      }),
      { ordered: false },
    );
  }

  async removeUnwritten(): Promise<number> {
    await this.changes?.beforeRemoving(this.context.run);
    return (await this.companies.deleteMany({ importRun: { $ne: this.context.run } })).deletedCount;
  }

  async close(): Promise<void> {}
}

class LoadWriter implements CompanyWriter {
  readonly unknown: UnknownCodes = {};

  constructor(
    private readonly loader: BulkLoader<CompanyDoc>,
    private readonly context: DocumentContext,
    /** Stored before this run and not written by it yet. */
    private readonly unwritten: Set<string>,
    readonly threads: DocumentThread[],
  ) {}

  private turn = 0;

  async write(rows: EstablishmentRow[], join: (rows: EstablishmentRow[]) => Promise<Joined>): Promise<void> {
    for (const { cnpj } of rows) this.unwritten.delete(cnpj);
    const batch = { rows, ...(await join(rows)) };
    if (this.threads.length === 0) return this.loader.put(companyDocuments(batch, this.context, this.unknown));
    const built = await this.threads[this.turn++ % this.threads.length]!.build(batch);
    addUnknown(this.unknown, built.unknown);
    if ('encoded' in built) await this.loader.putEncoded(built.encoded);
  }

  async removeUnwritten(): Promise<number> {
    const ids = [...this.unwritten];
    for (let start = 0; start < ids.length; start += REMOVALS_PER_WRITE) {
      await this.loader.remove(ids.slice(start, start + REMOVALS_PER_WRITE));
    }
    this.unwritten.clear();
    return ids.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}

/**
 * The embedded store's registry: a release file of its own (release-writer.ts), built
 * beside the one in service and switched to at the end. From the second batch on, the worker
 * threads, when there are any, join, build, encode and store the rows (thread-staging.ts); this
 * thread only hands them out.
 */
export class ReleaseFileWriter implements CompanyWriter {
  readonly unknown: UnknownCodes = {};
  readonly threads: DocumentThread[];
  readonly release = this;
  private readonly file: ReleaseWriter;
  private encoder: RecordEncoder | undefined;
  private turn = 0;
  /** The release's staging file, where the per-company rows wait (`staging`), unless the import keeps them elsewhere. */
  private staged: FileStaging | undefined;
  private threadsStaging: Promise<void> | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly context: DocumentContext,
    workerScript?: URL,
  ) {
    const path = registry.pathFor(context.release, context.run);
    // What an earlier import left (killed, or replaced) goes, except this run's own file and the one in service.
    registry.removeAllBut(basename(path));
    this.file = new ReleaseWriter(path);
    this.threads = workerScript ? Array.from({ length: DOCUMENT_THREADS }, () => new DocumentThread(workerScript, context, [])) : [];
  }

  /** The release file's staging was begun by an older version (ReleaseWriter's `stagedByOlderVersion`). */
  get stagedByOlderVersion(): boolean {
    return this.file.stagedByOlderVersion;
  }

  async write(rows: EstablishmentRow[], joinHere: (rows: EstablishmentRow[]) => Promise<Joined>): Promise<void> {
    if (!this.encoder || this.threads.length === 0) {
      const batch = { rows, ...(await joinHere(rows)) };
      if (!this.file.codec) {
        // The compression's dictionary is made of the first batch's documents: built once for it,
        // then again to be stored, so that the batch is never held whole (its codes counted once).
        this.file.codec = withDictionary(this.tables(), storedRecords(companyDocuments(batch, this.context)));
      }
      const docs = companyDocuments(batch, this.context, this.unknown);
      return this.file.put(stagedRows(docs, (this.encoder ??= new RecordEncoder(this.file.codec)), rows));
    }
    await (this.threadsStaging ??= this.stageInThreads());
    // Joined in the thread, from the staging file; here only where the staged data waits elsewhere (an import's `staging` option).
    const joined = this.staged ? undefined : await joinHere(rows);
    const staged = await this.file.guard(this.threads[this.turn++ % this.threads.length]!.stageBatch(rows, joined));
    addUnknown(this.unknown, staged.unknown);
  }

  /**
   * From the second batch on, each is joined, built and staged by a worker thread, in a rows file
   * of its own (thread-staging.ts): once the per-company rows are gathered, and this thread has
   * let go of its locks on what the threads read.
   */
  private async stageInThreads(): Promise<void> {
    await this.staged?.prepared();
    this.file.shareWithThreads();
    const { path } = this.file;
    await Promise.all(this.threads.map((thread, i) => this.file.guard(thread.openStaging({ path, stagePath: stagePath(path), rowsPath: rowsPath(path, i), codec: this.file.codec! }))));
  }

  putTaxRegimes(docs: TaxRegimeDoc[]): void {
    this.file.putTaxRegimes(docs);
  }

  taxRegimeKeysOf(cnpjs: string[]) {
    return this.file.taxRegimeKeysOf(cnpjs);
  }

  taxRegimesWithoutEstablishment(): number {
    return this.file.taxRegimesWithoutEstablishment();
  }

  /**
   * Where the per-company files wait: the release's staging file. A worker thread, idle once they
   * are staged, gathers them while this one reads the tax-regime files.
   */
  staging(): FileStaging {
    const { db, transaction, path, beside } = this.file.stage;
    const thread = this.threads[0];
    const gatherBeside = thread ? () => beside(() => thread.gatherStaged(path, rowsFiles(this.file.path))) : undefined;
    return (this.staged = new FileStaging(db, transaction, () => this.file.attachRows(), gatherBeside));
  }

  /**
   * Where worker thread `thread` stores the rows of the per-company file at `place` among the
   * release's that it reads: its rows file, when they wait in the release's staging (`staging`).
   */
  companyRowsInto(thread: number, place: number): CompanyRowsInto | undefined {
    return this.staged ? { rowsPath: rowsPath(this.file.path, thread), place } : undefined;
  }

  /** A worker thread's error on this file's behalf, a full disk named as the file's own writes name it. */
  named(err: unknown): unknown {
    return this.file.named(err);
  }

  /**
   * Builds the file and puts it in service; how many establishments of the replaced release it
   * lacks. A worker thread, idle by then, builds the search tables meanwhile.
   */
  async finish(options: Omit<FinishOptions, 'previous' | 'codec' | 'buildSearchTables'>): Promise<number> {
    const inService = this.registry.inService();
    const previous = inService && inService !== basename(this.file.path) ? join(this.registry.dir, inService) : null;
    const thread = this.threads[0];
    // A gathering begun beside holds the staging file, which the end writes: an import that read no
    // establishment (its files unreadable) had nothing else wait for it.
    await this.staged?.settled();
    // The threads' rows files are read from here on: their connections close first (each held its file's lock).
    if (this.threadsStaging) await Promise.all(this.threads.map((thread) => this.file.guard(thread.closeStaging())));
    const { removed } = await this.file.finish({
      ...options,
      previous,
      codec: () => this.tables(),
      ...(thread ? { buildSearchTables: (path: string, stagePath: string, rows: string[]) => thread.buildSearchTables(path, stagePath, rows) } : {}),
    });
    if (inService !== basename(this.file.path)) this.registry.switchTo(this.file.path);
    return removed;
  }

  async removeUnwritten(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
    this.file.close();
  }

  private tables() {
    return codecTables(this.context.lookups, this.context.release);
  }
}
