/**
 * Where an import's tax-regime rows go: the `tax_regimes` collection (bulk loaded where the
 * process would otherwise hold them, as the establishments are), and, for the establishments
 * written after them, each CNPJ's search keys (`lucro_presumido`, `lucro_presumido:2023`).
 *
 * Those keys are read back from where the rows went (the release file, or the collection with a
 * durable staging), so a resumed import need not read the files again; elsewhere they wait in
 * memory as one short string per CNPJ, like the other staged data. A row whose CNPJ no
 * establishment of the import has is kept all the same, and counted (not on MongoDB, where that
 * count would need a join over the whole registry).
 */
import type { BulkLoader, Collection, Store } from '../../store/port.ts';
import { regimeKeys, taxRegimeRow, type TaxRegimeDoc } from '../../companies/tax-regimes.ts';
import type { DocumentContext } from './documents.ts';
import type { Problem, Row } from './rows.ts';

const REMOVALS_PER_WRITE = 10_000;

/** What this writer needs of a release file being written (release-writer.ts). */
interface ReleaseFileRegimes {
  putTaxRegimes(docs: TaxRegimeDoc[]): void;
  taxRegimeKeysOf(cnpjs: string[]): Map<string, string[]>;
  taxRegimesWithoutEstablishment(): number;
}
/** Marks a CNPJ whose keys an establishment has taken. */
const JOINED = '*';

export class TaxRegimeWriter {
  rows = 0;
  private readonly collection: Collection<TaxRegimeDoc>;
  private loader: BulkLoader<TaxRegimeDoc> | undefined;
  /** Stored before this run and not written by it yet (bulk loads only). */
  private unwritten: Set<string> | undefined;
  /** In memory staging: per CNPJ, `rows|key,key…`, prefixed by `*` once joined. */
  private readonly keys: Map<string, string> | undefined;

  constructor(
    private readonly store: Store,
    private readonly context: DocumentContext,
    durableStaging: boolean,
    /** Where the rows go instead of the collection: the release file being written (registry/). */
    private readonly releaseFile?: ReleaseFileRegimes,
  ) {
    this.collection = store.collection<TaxRegimeDoc>('tax_regimes');
    // A bulk-loaded collection cannot be read back by the process loading it.
    this.keys = releaseFile || (durableStaging && !store.bulkLoader) ? undefined : new Map();
  }

  /** Whether the keys of rows already written survive the process (read back from the collection). */
  get durable(): boolean {
    return this.keys === undefined;
  }

  async write(file: string, batch: Row[], report: (problem: Problem) => void): Promise<void> {
    const docs: TaxRegimeDoc[] = [];
    for (const { fields, line } of batch) {
      const parsed = taxRegimeRow(fields);
      if (!parsed.ok) {
        report({ file, line, message: parsed.message });
        continue;
      }
      docs.push({ ...parsed.doc, release: this.context.release, importRun: this.context.run });
      if (this.keys) this.stage(parsed.doc.cnpj, regimeKeys(parsed.doc.form, parsed.doc.year));
    }
    this.rows += docs.length;
    if (docs.length === 0) return;
    if (this.releaseFile) return this.releaseFile.putTaxRegimes(docs);
    if (this.store.bulkLoader) {
      const loader = this.startLoad();
      for (const doc of docs) this.unwritten!.delete(doc._id);
      await loader.put(docs);
      return;
    }
    await this.collection.bulkWrite(
      docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } })),
      { ordered: false },
    );
  }

  private startLoad(): BulkLoader<TaxRegimeDoc> {
    if (this.loader) return this.loader;
    this.loader = this.store.bulkLoader!<TaxRegimeDoc>('tax_regimes', ['importRun']);
    this.unwritten = new Set();
    for (const [id, { importRun }] of this.loader.stored) if (importRun !== this.context.run) this.unwritten.add(id);
    return this.loader;
  }

  private stage(cnpj: string, keys: string[]): void {
    const staged = this.keys!.get(cnpj);
    if (staged === undefined) {
      this.keys!.set(cnpj, `1|${keys.join(',')}`);
      return;
    }
    const bar = staged.indexOf('|');
    const known = new Set(staged.slice(bar + 1).split(',').filter(Boolean));
    keys.forEach((key) => known.add(key));
    this.keys!.set(cnpj, `${Number(staged.slice(0, bar)) + 1}|${[...known].join(',')}`);
  }

  /** The search keys of these CNPJs (those with any), marking them joined. */
  async keysFor(cnpjs: string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    if (this.keys) {
      if (this.keys.size === 0) return found;
      for (const cnpj of cnpjs) {
        let staged = this.keys.get(cnpj);
        if (staged === undefined) continue;
        if (!staged.startsWith(JOINED)) this.keys.set(cnpj, JOINED + staged);
        else staged = staged.slice(1);
        const keys = staged.slice(staged.indexOf('|') + 1);
        found.set(cnpj, keys === '' ? [] : keys.split(','));
      }
      return found;
    }
    if (this.releaseFile) return this.releaseFile.taxRegimeKeysOf(cnpjs);
    const docs = await this.collection.find({ cnpj: { $in: cnpjs } }, { projection: { cnpj: 1, form: 1, year: 1 } }).toArray();
    for (const doc of docs) found.set(doc.cnpj, [...new Set([...(found.get(doc.cnpj) ?? []), ...regimeKeys(doc.form, doc.year)])]);
    return found;
  }

  /** Rows whose CNPJ no establishment took; null where not counted (durable staging). */
  withoutEstablishment(): number | null {
    if (this.releaseFile) return this.releaseFile.taxRegimesWithoutEstablishment();
    if (!this.keys) return null;
    let rows = 0;
    for (const staged of this.keys.values()) if (!staged.startsWith(JOINED)) rows += Number(staged.slice(0, staged.indexOf('|')));
    return rows;
  }

  /** After every tax-regime file was read whole: rows of earlier imports this one did not write are gone. */
  async removeUnwritten(): Promise<number> {
    // A release file holds this import's rows only.
    if (this.releaseFile) return 0;
    if (this.store.bulkLoader) {
      const loader = this.startLoad();
      const ids = [...this.unwritten!];
      for (let start = 0; start < ids.length; start += REMOVALS_PER_WRITE) await loader.remove(ids.slice(start, start + REMOVALS_PER_WRITE));
      this.unwritten!.clear();
      return ids.length;
    }
    return (await this.collection.deleteMany({ importRun: { $ne: this.context.run } })).deletedCount;
  }

  async close(): Promise<void> {
    this.keys?.clear();
  }
}
