/**
 * The repository of Brazil's public registry: one document per establishment, keyed by its CNPJ,
 * written by the Receita Federal importer and read by the batch lookup and the search.
 */
import type { Collection, Filter, FindOptions, IndexDeclaration, Store } from '../store/port.ts';
import { ActivityMatcher, type CnaeDoc } from './activities.ts';
import type { CompanyDoc, CompanyRecord } from './company-record.ts';
import { planSearch, type CompanyFilters, type SearchPlan } from './search-plan.ts';

/**
 * What the search filters need: an index per field it can narrow on. The embedded store picks
 * the most selective of them per query; MongoDB's planner does the same.
 */
export const companyIndexes: IndexDeclaration[] = [
  'root',
  'address.state',
  'search.city',
  'search.activities',
  'search.name',
  'search.partners',
  'search.partnerDocuments',
  'legalNature.code',
  'capital',
  'openingDate',
].map((field) => ({ collection: 'companies', keys: { [field]: 1 } }));

/** What a stored company holds beyond its record, for search and import only: never read back. */
const INTERNAL_FIELDS = { _id: 0, search: 0, importRun: 0 } as const;

/** How long a process trusts its copy of the CNAE table when another process may import. */
const ACTIVITIES_TTL_MS = 5 * 60_000;

export class Companies {
  readonly collection: Collection<CompanyDoc>;
  private readonly cnaes: Collection<CnaeDoc>;
  private matcher: { value: Promise<ActivityMatcher>; at: number } | undefined;

  constructor(store: Store) {
    this.collection = store.collection<CompanyDoc>('companies');
    this.cnaes = store.collection<CnaeDoc>('cnaes');
  }

  /**
   * The registry records found among `cnpjs`, keyed by CNPJ: the caller's own copies (a 500-CNPJ
   * batch copies them at every request, so not the internal fields too).
   */
  async byCnpj(cnpjs: string[]): Promise<Map<string, CompanyRecord>> {
    if (cnpjs.length === 0) return new Map();
    const records = await this.records({ _id: { $in: cnpjs } });
    return new Map(records.map((record) => [record.cnpj, record]));
  }

  private async records(filter: Filter<CompanyDoc>, options: Omit<FindOptions, 'projection'> = {}): Promise<CompanyRecord[]> {
    return (await this.collection.find(filter, { ...options, projection: INTERNAL_FIELDS }).toArray()) as unknown as CompanyRecord[];
  }

  /**
   * The first `limit` companies matching the filters, in CNPJ order, so a query always answers the
   * same; `after` continues from the last CNPJ of a previous page.
   */
  async search(filters: CompanyFilters, limit: number, after?: string): Promise<SearchPlan & { companies: CompanyRecord[] }> {
    const plan = planSearch(filters, await this.activities());
    const filter = after === undefined ? plan.filter : { $and: [plan.filter, { _id: { $gt: after } }] };
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
  }
}
