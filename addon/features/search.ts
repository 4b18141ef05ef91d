/**
 * Search into a sheet: people or company search with the filters analysts use, page after page
 * (`cursor`/`nextCursor`) until the rows asked for, at most the server's 1,000 a search. The tab
 * is asked for only once the server answered, so a refused search (no credits, too many
 * requests) leaves no empty tab behind; a search stopped midway still writes the pages it paid for.
 */
import type { ProspectaClient } from '../api/client.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import { MAX_ROWS_PER_SEARCH } from '../../shared/schemas/search.ts';
import type { Company, Person } from '../../shared/types.ts';
import { CNPJ_COLUMNS } from './cnpj-fill.ts';
import { plainError } from './errors.ts';
import type { Clock, SheetPort } from './ports.ts';
import { searchLimits } from './rules.ts';

export { MAX_ROWS_PER_SEARCH };

const PEOPLE_COLUMNS: Array<[string, keyof Person]> = [
  ['Name', 'name'], ['Title', 'title'], ['Seniority', 'seniority'], ['Company', 'company'], ['Domain', 'domain'],
  ['Email', 'email'], ['Email status', 'emailStatus'], ['LinkedIn', 'linkedinUrl'], ['Location', 'location'], ['CNPJ', 'cnpj'], ['Source', 'source'],
];

/** The CNPJ fill's company columns, after the CNPJ itself. */
const COMPANY_COLUMNS: typeof CNPJ_COLUMNS = [['CNPJ', (c) => c.cnpj], ...CNPJ_COLUMNS];

const cell = (v: unknown) => (v === null || v === undefined ? '' : String(v));

export type SearchKind = 'people' | 'companies';
type Filters<K extends SearchKind> = Omit<InputOf<K extends 'people' ? 'searchPeople' : 'searchCompanies'>, 'limit' | 'cursor'>;

export interface SearchOutcome {
  found: number;
  /** Why it stopped before the rows asked for with more to find: a refusal midway, or time. */
  stoppedBy?: string;
  /** More rows match than were written (the search had a next page): an export can write them all. */
  more: boolean;
}

/** Execution time a search may use before writing what it has (of Apps Script's 6 minutes). */
const SEARCH_BUDGET_MS = 4.5 * 60_000;

/**
 * Pages of one search until `rows` (at most 1,000) or its last page; each page asks for no more
 * than is still wanted, so no row is paid for and left out.
 */
function pages<T>(rows: number, pageMax: number, clock: Clock, page: (limit: number, cursor: string | undefined) => { results: T[]; nextCursor: string | null }): { found: T[]; stoppedBy?: string; more: boolean } {
  const wanted = Math.min(Math.max(1, Math.trunc(rows)), MAX_ROWS_PER_SEARCH);
  const deadline = clock.now() + SEARCH_BUDGET_MS;
  const found: T[] = [];
  let cursor: string | undefined;
  do {
    if (found.length > 0 && clock.now() > deadline) return { found, stoppedBy: 'time ran out; search again for more', more: true };
    let answer;
    try {
      answer = page(Math.min(pageMax, wanted - found.length), cursor);
    } catch (err) {
      // The first page's refusal is the search's; a later one stops it with what was paid for.
      if (found.length === 0) throw err;
      return { found, stoppedBy: plainError(err), more: true };
    }
    found.push(...answer.results);
    cursor = answer.nextCursor ?? undefined;
  } while (cursor && found.length < wanted);
  return { found, more: cursor !== undefined };
}

export function searchPeopleIntoSheet(client: ProspectaClient, filters: Filters<'people'>, rows: number, tab: () => SheetPort, clock: Clock): SearchOutcome {
  const { found, stoppedBy, more } = pages<Person>(rows, searchLimits().people, clock, (limit, cursor) => client.call('searchPeople', { ...filters, limit, ...(cursor ? { cursor } : {}) }));
  tab().replaceAll([PEOPLE_COLUMNS.map(([label]) => label), ...found.map((p) => PEOPLE_COLUMNS.map(([, key]) => cell(p[key])))]);
  return { found: found.length, more, ...(stoppedBy ? { stoppedBy } : {}) };
}

export function searchCompaniesIntoSheet(client: ProspectaClient, filters: Filters<'companies'>, rows: number, tab: () => SheetPort, clock: Clock): SearchOutcome {
  const { found, stoppedBy, more } = pages<Company>(rows, searchLimits().companies, clock, (limit, cursor) => client.call('searchCompanies', { ...filters, limit, ...(cursor ? { cursor } : {}) }));
  tab().replaceAll([COMPANY_COLUMNS.map(([label]) => label), ...found.map((c) => COMPANY_COLUMNS.map(([, read]) => cell(read(c))))]);
  return { found: found.length, more, ...(stoppedBy ? { stoppedBy } : {}) };
}

/** A tab name from the search's words: "Companies: padaria, SP, since 2020-01-01" ("Export: …" for its export). */
export function searchTabName(kind: SearchKind | 'export', filters: Record<string, unknown>): string {
  const words = Object.entries(filters).flatMap(([key, value]) => {
    if (typeof value === 'string') return [key === 'openingDateMin' ? `since ${value}` : value];
    if (value === true) return [{ simpleOption: 'Simples', hasPhone: 'with phone', hasEmail: 'with email' }[key] ?? key];
    return [];
  });
  return `${{ people: 'People', companies: 'Companies', export: 'Export' }[kind]}: ${words.join(', ')}`.slice(0, 90);
}
