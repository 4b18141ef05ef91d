/**
 * The repository of Brazil's public registry: one document per establishment, keyed by its CNPJ,
 * written by the Receita Federal importer and read by the batch lookup and the search.
 *
 * On MongoDB it is the `companies` collection (with `tax_regimes`). On the embedded store it is
 * the release file in service (registry/): on disk, read page by page, never held in memory; the
 * collections answer only until the first import into files (a store imported before them), and
 * that import empties them.
 */
import type { Collection, Filter, FindOptions, IndexDeclaration, Store } from '../store/port.ts';
import { ActivityMatcher, type CnaeDoc } from './activities.ts';
import { RawJson } from '../lib/raw-json.ts';
import { REGISTRY_SOURCE, type CompanyDoc, type CompanyRecord, type CompanyView, type Partner } from './company-record.ts';
import { planSearch, type CompanyFilters, type SearchPlan } from './search-plan.ts';
import { TaxRegimes, taxRegimeIndexes } from './tax-regimes.ts';
import { Releases } from './releases.ts';
import { registryOf, type Registry } from './registry/registry.ts';

/**
 * What the search filters need: an index per field it can narrow on. The embedded store picks
 * the most selective of them per query; MongoDB's planner does the same.
 */
export const companyIndexes: IndexDeclaration[] = [
  'address.state',
  'search.city',
  'search.activities',
  'search.name',
  'search.partners',
  'search.partnerDocuments',
  'legalNature.code',
  'capital',
  'openingDate',
  // Issue 22's selective filters (size and age band hold a few values each: a scan in CNPJ order finds them soon).
  'search.federativeEntity',
  'search.taxRegimes',
]
  .map((field): IndexDeclaration => ({ collection: 'companies', keys: { [field]: 1 } }))
  .concat(taxRegimeIndexes);

/** What a stored company holds beyond its record, for search and import only: never read back. */
const INTERNAL_FIELDS = { _id: 0, search: 0, importRun: 0 } as const;
const INTERNAL_FIELD_NAMES = Object.keys(INTERNAL_FIELDS);
const SIZE_MEMBER = Buffer.from('"size":');

/** How long a process trusts its copy of the CNAE table when another process may import. */
const ACTIVITIES_TTL_MS = 5 * 60_000;

export class Companies {
  readonly collection: Collection<CompanyDoc>;
  readonly taxRegimes: TaxRegimes;
  /** Which release is loaded (health, the provider catalog). */
  readonly releases: Releases;
  private readonly cnaes: Collection<CnaeDoc>;
  private matcher: { value: Promise<ActivityMatcher>; at: number } | undefined;

  /** The embedded store's release files; none on MongoDB. */
  readonly registry: Registry | undefined;

  constructor(private readonly store: Store) {
    this.collection = store.collection<CompanyDoc>('companies');
    this.cnaes = store.collection<CnaeDoc>('cnaes');
    this.taxRegimes = new TaxRegimes(store);
    this.registry = registryOf(store);
    this.releases = new Releases(store, this.registry);
  }

  /** Whether no establishment is held (the demo seeds an empty registry only). */
  async isEmpty(): Promise<boolean> {
    const file = this.registry?.current();
    if (file) return file.meta.establishments === 0;
    return (await this.collection.findOne({})) === null;
  }

  /**
   * The registry records found among `cnpjs`, keyed by CNPJ: the caller's own copies (a 500-CNPJ
   * batch copies them at every request, so not the internal fields too).
   */
  async byCnpj(cnpjs: string[]): Promise<Map<string, CompanyRecord>> {
    if (cnpjs.length === 0) return new Map();
    const file = this.registry?.current();
    if (file) return new Map(file.records(cnpjs).map((record) => [record.cnpj, record]));
    const records = await this.records({ _id: { $in: cnpjs } });
    return new Map(records.map((record) => [record.cnpj, record]));
  }

  /**
   * The companies found among `cnpjs` as the registry answers them, keyed by CNPJ. With `rawJson`
   * (see raw-json.ts), each is its stored JSON with its tax regimes and source added,
   * never parsed: the batch's 500 documents cost a pass over their bytes instead of a parse and a
   * write. A document imported before issue 22 is completed as an object (see `completeRecord`).
   */
  async views(cnpjs: string[], rawJson: boolean): Promise<Map<string, CompanyView>> {
    if (!rawJson) {
      const records = await this.byCnpj(cnpjs);
      for (const record of records.values()) (record as CompanyView).source = REGISTRY_SOURCE;
      return records as Map<string, CompanyView>;
    }
    if (cnpjs.length === 0) return new Map();
    const file = this.registry?.current();
    if (file) {
      // One release for the whole answer: a switch during it does not reach a file already taken.
      const regimes = file.taxRegimes(cnpjs);
      const views = new Map<string, CompanyView>();
      for (const [cnpj, json] of file.json(cnpjs)) {
        views.set(cnpj, RawJson.withFields(json, { taxRegimes: regimes.get(cnpj) ?? [], source: REGISTRY_SOURCE }) as unknown as CompanyView);
      }
      return views;
    }
    const [docs, regimes] = await Promise.all([
      this.store.jsonByIds('companies', cnpjs, INTERNAL_FIELD_NAMES),
      this.taxRegimes.byCnpj(cnpjs),
    ]);
    const views = new Map<string, CompanyView>();
    for (const [cnpj, json] of docs) {
      const added = { taxRegimes: regimes.get(cnpj) ?? [], source: REGISTRY_SOURCE };
      // `size` is a top-level field only, so its name anywhere means the newer fields are there.
      if (json.includes(SIZE_MEMBER)) {
        // Typed as the view it stands for: only the binding that asked for it ever reads it.
        views.set(cnpj, RawJson.withFields(json, added) as unknown as CompanyView);
      } else {
        const record = JSON.parse(json.toString('utf8')) as CompanyRecord;
        completeRecord(record);
        views.set(cnpj, Object.assign(record, added));
      }
    }
    return views;
  }

  /** The records, each with its tax regimes by year (from their own collection). */
  private async records(filter: Filter<CompanyDoc>, options: Omit<FindOptions, 'projection'> = {}): Promise<CompanyRecord[]> {
    // The projection leaves out the internal fields; what is left, with its tax regimes, is the record.
    const docs = await this.collection.find(filter, { ...options, projection: INTERNAL_FIELDS }).toArray();
    const regimes = await this.taxRegimes.byCnpj(docs.map((d) => d.cnpj));
    return docs.map((doc) => {
      // Completed first: the tax regimes come after the stored fields, as the stored JSON passed through has them.
      completeRecord(doc);
      const record: CompanyRecord = Object.assign(doc, { taxRegimes: regimes.get(doc.cnpj) ?? [] });
      return record;
    });
  }

  /**
   * The first `limit` companies matching the filters, in CNPJ order, so a query always answers the
   * same; `after` continues from the last CNPJ of a previous page (from it, when `inclusive`).
   */
  async search(filters: CompanyFilters, limit: number, after?: string, inclusive = false): Promise<SearchPlan & { companies: CompanyRecord[] }> {
    const plan = planSearch(filters, await this.activities());
    const file = this.registry?.current();
    if (file) return { ...plan, companies: file.records(file.search(plan.filter, limit, after, inclusive)) };
    const filter = after === undefined ? plan.filter : { $and: [plan.filter, { _id: inclusive ? { $gte: after } : { $gt: after } }] };
    return { ...plan, companies: await this.records(filter, { sort: { _id: 1 }, limit }) };
  }

  /** The CNAE table of the imported release, read once and kept until an import changes it. */
  activities(): Promise<ActivityMatcher> {
    if (!this.matcher || Date.now() - this.matcher.at > ACTIVITIES_TTL_MS) {
      const value = this.cnaes
        .find({})
        .toArray()
        .then((docs) => new ActivityMatcher(docs.map((d) => ({ code: d._id, description: d.description }))));
      value.catch(() => (this.matcher = undefined));
      this.matcher = { value, at: Date.now() };
    }
    return this.matcher.value;
  }

  /** Called after an import in this process, so the next search sees its CNAE table at once. */
  changed(): void {
    this.matcher = undefined;
    this.releases.changed();
  }
}

/**
 * A document imported before issue 22 lacks its newer fields: they are given as unknown (null),
 * so every answer keeps the record's shape until the next import writes them.
 */
function completeRecord(record: Omit<CompanyRecord, 'taxRegimes'>): void {
  if (record.size !== undefined) return;
  nullWhereMissing(record, NEWER_FIELDS);
  for (const partner of record.partners) nullWhereMissing(partner, NEWER_PARTNER_FIELDS);
}

/** Each of `fields` that `target` lacks, given as null (unknown). */
function nullWhereMissing<T extends object>(target: T, fields: ReadonlyArray<keyof T>): void {
  for (const field of fields) if (target[field] == null) Object.assign(target, { [field]: null });
}

const NEWER_FIELDS = [
  'size', 'responsibleQualification', 'federativeEntity', 'specialSituation', 'specialSituationDate', 'phone1', 'phone2',
  'fax', 'foreignCity', 'country', 'simples', 'mei',
] as const satisfies ReadonlyArray<keyof CompanyRecord>;
const NEWER_PARTNER_FIELDS = ['type', 'qualificationCode', 'country', 'ageBand', 'legalRepresentative'] as const satisfies ReadonlyArray<keyof Partner>;
