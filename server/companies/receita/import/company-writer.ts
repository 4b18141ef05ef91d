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
import type { BulkLoader, Collection, Store } from '../../../store/port.ts';
import type { CompanyDoc } from '../../company-record.ts';
import { DocumentThread } from './document-thread.ts';
import { companyDocuments, type DocumentContext, type EstablishmentBatch } from './documents.ts';
import { Interner } from './interner.ts';
import { addUnknown, type UnknownCodes } from './records.ts';

export interface CompanyWriter {
  /** Stores the batch's documents, each under its CNPJ, replacing what was there; resolves once durable. */
  write(batch: EstablishmentBatch): Promise<void>;
  /** Per table, the establishments' codes it lacked, in the documents written so far. */
  readonly unknown: UnknownCodes;
  /** The worker threads building the documents, which also read the per-company files; none if built in this thread. */
  readonly threads: readonly DocumentThread[];
  /** Removes the documents the current run has not written; how many. */
  removeUnwritten(): Promise<number>;
  close(): Promise<void>;
}

const REMOVALS_PER_WRITE = 10_000;
/**
 * Batches go to the threads in turn. On two cores two threads beat one (the establishments of a
 * 1M release in 24.9 s against 29.5 s): the scheduler fills the reading thread's waits. Capped
 * at four because one reading thread feeds them all (not measured beyond two cores).
 */
const DOCUMENT_THREADS = Math.min(4, Math.max(2, availableParallelism()));

export async function companyWriter(store: Store, context: DocumentContext, workerScript?: URL): Promise<CompanyWriter> {
  const companies = store.collection<CompanyDoc>('companies');
  if (!store.bulkLoader) return new UpsertWriter(companies, context, store.kind === 'embedded');
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
  ) {
    this.interner = keepsDocuments ? new Interner() : undefined;
  }

  async write(batch: EstablishmentBatch): Promise<void> {
    await this.companies.bulkWrite(
      Array.from(companyDocuments(batch, this.context, this.unknown), (doc) => {
        const shared = this.interner?.shareStrings(doc) ?? doc;
        return { replaceOne: { filter: { _id: doc._id }, replacement: shared, upsert: true } };
      }),
      { ordered: false },
    );
  }

  async removeUnwritten(): Promise<number> {
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

  async write(batch: EstablishmentBatch): Promise<void> {
    for (const { cnpj } of batch.rows) this.unwritten.delete(cnpj);
    if (this.threads.length === 0) return this.loader.put(companyDocuments(batch, this.context, this.unknown));
    const built = await this.threads[this.turn++ % this.threads.length]!.build(batch);
    addUnknown(this.unknown, built.unknown);
    await this.loader.putEncoded(built.encoded);
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
