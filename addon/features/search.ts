/** Search into a sheet: people or company search with the main filters, results in a new tab. */
import type { ProspectaClient } from '../api/client.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import type { SheetPort } from './ports.ts';

const PEOPLE_COLUMNS: Array<[string, string]> = [
  ['Name', 'name'], ['Title', 'title'], ['Seniority', 'seniority'], ['Company', 'company'], ['Domain', 'domain'],
  ['Email', 'email'], ['Email status', 'emailStatus'], ['LinkedIn', 'linkedinUrl'], ['Location', 'location'], ['CNPJ', 'cnpj'], ['Source', 'source'],
];

const COMPANY_COLUMNS: Array<[string, (c: Record<string, any>) => unknown]> = [
  ['CNPJ', (c) => c.cnpj], ['Razão social', (c) => c.name], ['Nome fantasia', (c) => c.tradeName], ['Situação cadastral', (c) => c.registrationStatus],
  ['Atividade principal', (c) => (c.mainActivity ? `${c.mainActivity.code} ${c.mainActivity.description}` : '')],
  ['Cidade/UF', (c) => [c.address?.city, c.address?.state].filter(Boolean).join('/')], ['Telefone', (c) => (c.phones ?? []).join(', ')],
  ['Email', (c) => c.email], ['Capital social', (c) => c.capital], ['Sócios', (c) => (c.partners ?? []).map((p: { name: string }) => p.name).join('; ')],
];

const cell = (v: unknown) => (v === null || v === undefined ? '' : String(v));

export function searchPeopleIntoSheet(client: ProspectaClient, filters: InputOf<'searchPeople'>, tab: SheetPort): number {
  const { results } = client.call('searchPeople', filters);
  tab.replaceAll([PEOPLE_COLUMNS.map(([label]) => label), ...results.map((p) => PEOPLE_COLUMNS.map(([, key]) => cell((p as Record<string, unknown>)[key])))]);
  return results.length;
}

export function searchCompaniesIntoSheet(client: ProspectaClient, filters: InputOf<'searchCompanies'>, tab: SheetPort): number {
  const { results } = client.call('searchCompanies', filters);
  tab.replaceAll([COMPANY_COLUMNS.map(([label]) => label), ...results.map((c) => COMPANY_COLUMNS.map(([, read]) => cell(read(c as Record<string, any>))))]);
  return results.length;
}
