/**
 * The company search over its sources, shared by the plain and the streamed operation: each
 * source in `companyOrder` adds rows until `limit` is reached, and each adds them as one page.
 * Only the imported registry can search; BrasilAPI answers lookups by CNPJ, so naming it here
 * is accepted and reported as a source that returned nothing.
 */
import type { InputOf } from '../../shared/operations/index.ts';
import { COMPANY_SOURCES } from '../../shared/schemas/companies.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Activity } from '../../shared/types.ts';
import type { Companies } from './companies.ts';
import { companyView, REGISTRY_SOURCE, type CompanyView } from './company-record.ts';

export { COMPANY_SOURCES };

type FilterName = Exclude<keyof InputOf<'searchCompanies'>, 'limit' | 'companyOrder' | 'cursor'>;

/**
 * The filters each source can apply. A source never ignores one it cannot: it answers nothing
 * and names the filter (as the people sources do), so no row comes back that the filters would
 * have excluded. The registry applies every filter; BrasilAPI none (it answers lookups by CNPJ).
 */
const APPLIES: Record<(typeof COMPANY_SOURCES)[number], (name: FilterName) => boolean> = {
  [REGISTRY_SOURCE]: () => true,
  brasilapi: () => false,
};

/** The first filter set in the request that `source` cannot apply (empty strings and lists do not count). */
export function refusedFilter(source: (typeof COMPANY_SOURCES)[number], filters: Partial<Record<FilterName, unknown>>): FilterName | undefined {
  return (Object.keys(filters) as FilterName[]).find((name) => {
    const value = filters[name];
    const set = Array.isArray(value) ? value.length > 0 : typeof value === 'string' ? value.trim() !== '' : value !== undefined;
    return set && !APPLIES[source](name);
  });
}
const DEFAULT_LIMIT = 10;

export interface CompanyPage {
  source: string;
  results: CompanyView[];
  error?: string;
}

export interface CompanySearchRun {
  activities: Activity[];
  nameTerms: string[];
  pages: AsyncGenerator<CompanyPage>;
  /** The last CNPJ given, when more companies match after it (where the next page starts); else null. */
  more: string | null;
}

/** Where a page of the plain search starts, and how many rows it may still give (search pages). */
export interface CompanyPageStart {
  after?: string | undefined;
  room: number;
}

function sourcesOf(order: string[] | undefined): string[] {
  if (!order || order.length === 0) return [REGISTRY_SOURCE];
  const sources: string[] = [];
  order.forEach((source, i) => {
    if (!(COMPANY_SOURCES as readonly string[]).includes(source)) {
      throw new ServiceError('invalid_request', `companyOrder[${i}] must be one of: ${COMPANY_SOURCES.join(', ')}`);
    }
    if (!sources.includes(source)) sources.push(source);
  });
  return sources;
}

/**
 * Plans the query (a filter it refuses throws 400 before anything runs), then yields a page per
 * source. Each page is charged before it is yielded: 1 credit per row.
 */
export async function startCompanySearch(
  input: InputOf<'searchCompanies'> | InputOf<'streamCompanies'>,
  { companies: registry, charge }: { companies: Pick<Companies, 'search'>; charge: (units: number, detail: string) => Promise<number> },
  page: CompanyPageStart = { room: Infinity },
): Promise<CompanySearchRun> {
  const { limit: asked = DEFAULT_LIMIT, companyOrder, ...rest } = input;
  const { cursor: _cursor, ...filters } = rest as typeof rest & { cursor?: unknown };
  const sources = sourcesOf(companyOrder);
  const limit = Math.min(asked, page.room);
  // Keyset pages in CNPJ order (unique, so no tie can repeat or skip a row); one row more says whether another page follows.
  const { companies: matched, ...plan } = await registry.search(filters, limit + 1, page.after);
  const companies = matched.slice(0, limit);
  const more = matched.length > limit && companies.length > 0 ? companies[companies.length - 1]!.cnpj : null;

  async function* pages(): AsyncGenerator<CompanyPage> {
    for (const source of sources) {
      if (source !== REGISTRY_SOURCE) {
        const refused = refusedFilter(source as (typeof COMPANY_SOURCES)[number], filters);
        yield {
          source,
          results: [],
          error: refused
            ? `BrasilAPI cannot filter companies by ${refused}: it answers lookups by CNPJ only`
            : 'BrasilAPI answers lookups by CNPJ only; it cannot search',
        };
        continue;
      }
      const results = companies.map((doc) => companyView(doc));
      await charge(results.length, `${results.length} companies from ${source}`);
      yield { source, results };
    }
  }
  return { activities: plan.activities, nameTerms: plan.nameTerms, pages: pages(), more };
}
