/**
 * Search into a sheet: people or company search with the main filters, results in a tab. The tab
 * is asked for only once the server answered, so a refused search (no credits, too many
 * requests) leaves no empty tab behind.
 */
import type { ProspectaClient } from '../api/client.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import type { Person } from '../../shared/types.ts';
import { CNPJ_COLUMNS } from './cnpj-fill.ts';
import type { SheetPort } from './ports.ts';

const PEOPLE_COLUMNS: Array<[string, keyof Person]> = [
  ['Name', 'name'], ['Title', 'title'], ['Seniority', 'seniority'], ['Company', 'company'], ['Domain', 'domain'],
  ['Email', 'email'], ['Email status', 'emailStatus'], ['LinkedIn', 'linkedinUrl'], ['Location', 'location'], ['CNPJ', 'cnpj'], ['Source', 'source'],
];

/** The CNPJ fill's company columns, after the CNPJ itself. */
const COMPANY_COLUMNS: typeof CNPJ_COLUMNS = [['CNPJ', (c) => c.cnpj], ...CNPJ_COLUMNS];

const cell = (v: unknown) => (v === null || v === undefined ? '' : String(v));

export function searchPeopleIntoSheet(client: ProspectaClient, filters: InputOf<'searchPeople'>, tab: () => SheetPort): number {
  const { results } = client.call('searchPeople', filters);
  tab().replaceAll([PEOPLE_COLUMNS.map(([label]) => label), ...results.map((p) => PEOPLE_COLUMNS.map(([, key]) => cell(p[key])))]);
  return results.length;
}

export function searchCompaniesIntoSheet(client: ProspectaClient, filters: InputOf<'searchCompanies'>, tab: () => SheetPort): number {
  const { results } = client.call('searchCompanies', filters);
  tab().replaceAll([COMPANY_COLUMNS.map(([label]) => label), ...results.map((c) => COMPANY_COLUMNS.map(([, read]) => cell(read(c))))]);
  return results.length;
}
