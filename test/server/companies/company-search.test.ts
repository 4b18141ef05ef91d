import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj, partner } from '../../helpers/companies.ts';

let app: TestApp;
let key: string;

const software = { code: '6201501', description: 'Desenvolvimento de programas de computador sob encomenda' };
const bakery = { code: '4721102', description: 'Padaria e confeitaria com predominância de revenda' };
const dentist = { code: '8630504', description: 'Atividade odontológica' };

const acme = makeCnpj('11222333');
const acmeBranch = makeCnpj('11222333', '0002');
const padaria = makeCnpj('44555666');
const sorriso = makeCnpj('77888999');
const closed = makeCnpj('10101010');

beforeAll(async () => {
  app = await startTestApp();
  await app.services.store
    .collection('cnaes')
    .bulkWrite([software, bakery, dentist].map((a) => ({ insertOne: { document: { _id: a.code, description: a.description } } })));
  const docs: CompanyDoc[] = [
    companyDoc(acme, {
      name: 'ACME SOFTWARE HOUSE LTDA',
      capital: 150000,
      email: 'contato@acme.com.br',
      fiscalSize: '03',
      partners: [partner({ name: 'MARIA DE SOUZA', document: '***123456**', qualification: 'Sócio-Administrador', since: null })],
      openingDate: '2012-05-01',
    }),
    companyDoc(acmeBranch, {
      name: 'ACME SOFTWARE HOUSE LTDA',
      capital: 150000,
      address: { street: null, number: null, complement: null, district: null, zipCode: null, city: 'CURITIBA', cityCode: '7535', state: 'PR', country: null },
    }),
    companyDoc(padaria, {
      name: 'PADARIA SAO JOAO LTDA',
      mainActivity: bakery,
      capital: 20000,
      simplesOption: true,
      phones: [],
      partners: [partner({ name: 'JOAO DA SILVA', document: '***987654**', qualification: null, since: null })],
      legalNature: { code: '2135', description: 'Empresário (Individual)' },
    }),
    companyDoc(sorriso, { name: 'CLINICA SORRISO LTDA', mainActivity: dentist, capital: 5000, simplesOption: false, openingDate: '2021-01-10' }),
    companyDoc(closed, { name: 'ANTIGA SOFTWARE LTDA', registrationStatus: 'BAIXADA' }),
  ];
  await app.services.store.collection<CompanyDoc>('companies').bulkWrite(docs.map((document) => ({ insertOne: { document } })));
  ({ apiKey: key } = await app.workspace());
});
afterAll(() => app.close());

const search = (body: unknown, apiKey = key) => app.request('POST', '/v1/api/companies/search', { key: apiKey, body });
const cnpjs = async (body: unknown) => {
  const res = await search(body);
  expect(res.status).toBe(200);
  return res.body.results.map((c: { cnpj: string }) => c.cnpj);
};

describe('POST /api/companies/search', () => {
  it('turns plain-language activities into CNAE codes and says which', async () => {
    const res = await search({ industry: 'padarias' });
    expect(res.body.activities).toEqual([bakery]);
    expect(res.body.results.map((c: { cnpj: string }) => c.cnpj)).toEqual([padaria]);
    expect(res.body.results[0]).toMatchObject({ cnpj: padaria, name: 'PADARIA SAO JOAO LTDA', source: 'receita_federal' });
    expect(res.body.results[0].search).toBeUndefined();
    expect((await search({ keywords: ['dentist'] })).body.activities).toEqual([dentist]);
    expect((await search({ industry: 'Software House' })).body.activities).toEqual([software]);
    expect(await cnpjs({ keywords: ['dentist', 'padaria'] })).toEqual([sorriso, padaria].sort());
  });

  it('matches a term that names no activity against company names', async () => {
    const res = await search({ keywords: ['sorriso'] });
    expect(res.body).toMatchObject({ activities: [], nameTerms: ['sorriso'] });
    expect(res.body.results.map((c: { cnpj: string }) => c.cnpj)).toEqual([sorriso]);
  });

  it('applies every registry filter', async () => {
    expect(await cnpjs({ cnaes: ['6201-5/01'], registrationStatuses: ['ATIVA'] })).toEqual([acmeBranch, acme].sort());
    expect(await cnpjs({ cnaes: ['62'] })).toEqual([closed, acme, acmeBranch].sort());
    expect(await cnpjs({ establishmentTypes: ['FILIAL'] })).toEqual([acmeBranch]);
    expect(await cnpjs({ state: 'pr' })).toEqual([acmeBranch]);
    expect(await cnpjs({ city: 'Curitiba' })).toEqual([acmeBranch]);
    expect(await cnpjs({ location: 'São Paulo, SP', name: 'acme' })).toEqual([acme]);
    expect(await cnpjs({ capitalMin: 10000, capitalMax: 100000 })).toEqual([padaria, closed].sort());
    expect(await cnpjs({ hasEmail: true })).toEqual([acme]);
    expect(await cnpjs({ hasPhone: false })).toEqual([padaria]);
    expect(await cnpjs({ simpleOption: false })).toEqual([sorriso]);
    expect(await cnpjs({ fiscalSizes: ['03'] })).toEqual([acme]);
    expect(await cnpjs({ sizes: ['EPP'] })).toEqual([acme]);
    expect(await cnpjs({ openingDateMin: '2020-01-01' })).toEqual([sorriso]);
    expect(await cnpjs({ openingDateMax: '2014-12-31' })).toEqual([acme]);
    expect(await cnpjs({ partnerName: 'maria souza' })).toEqual([acme]);
    expect(await cnpjs({ partnerName: 'Souza Maria' })).toEqual([acme]);
    expect(await cnpjs({ partnerDocument: '123.987.654-00' })).toEqual([padaria]);
    expect(await cnpjs({ partnerDocument: '***123456**' })).toEqual([acme]);
    expect(await cnpjs({ legalNatureCodes: ['213-5'] })).toEqual([padaria]);
    expect(await cnpjs({ name: 'joão' })).toEqual([padaria]);
    expect(await cnpjs({ cnaes: ['9999999'] })).toEqual([]);
  });

  it('answers the same rows in CNPJ order for the same query, up to the limit', async () => {
    const all = [acme, acmeBranch, padaria, sorriso, closed].sort();
    expect(await cnpjs({})).toEqual(all);
    expect(await cnpjs({ limit: 2 })).toEqual(all.slice(0, 2));
    expect(await cnpjs({ limit: 2 })).toEqual(all.slice(0, 2));
  });

  it('charges 1 credit per row returned, nothing for no rows', async () => {
    const { apiKey } = await app.workspace();
    const before = (await app.request('GET', '/v1/api/credits', { key: apiKey })).body.balance;
    await search({ industry: 'padaria' }, apiKey);
    await search({ name: 'nothing matches this' }, apiKey);
    const after = (await app.request('GET', '/v1/api/credits', { key: apiKey })).body;
    expect(after.balance).toBe(before - 1);
    expect(after.movements[0]).toMatchObject({ amount: -1, operation: 'searchCompanies' });
  });

  it.each([
    [{ limit: 21 }, 'limit must be <= 20'],
    [{ state: 'SPP' }, 'state'],
    [{ state: 'XX' }, 'state must be a Brazilian state'],
    [{ registrationStatuses: ['OPEN'] }, 'registrationStatuses[0]'],
    [{ fiscalSizes: ['04'] }, 'fiscalSizes[0]'],
    [{ capitalMin: -1 }, 'capitalMin'],
    [{ capitalMin: 10, capitalMax: 5 }, 'capitalMin must not be greater than capitalMax'],
    [{ openingDateMin: '2020-13-01' }, 'openingDateMin'],
    [{ openingDateMin: '2021-01-01', openingDateMax: '2020-01-01' }, 'openingDateMin must not be after'],
    [{ cnaes: ['62015'], keywords: ['x'] }, null],
    [{ cnaes: ['abc'] }, 'cnaes[0]'],
    [{ legalNatureCodes: ['2062', '20'] }, 'legalNatureCodes[1]'],
    [{ sizes: ['huge'] }, 'sizes[0]'],
    [{ partnerDocument: '12' }, 'partnerDocument'],
    [{ companyOrder: ['linkedin'] }, 'companyOrder[0]'],
    [{ hasEmail: 'yes' }, 'hasEmail'],
    [{ unknown: 1 }, 'unknown'],
  ])('refuses %j with a 400 naming the field', async (body, field) => {
    const res = await search(body);
    if (field === null) return expect(res.status).toBe(200);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining(field) });
  });

  it('reports a source that cannot search instead of failing', async () => {
    const res = await search({ industry: 'padaria', companyOrder: ['brasilapi', 'receita_federal'] });
    expect(res.body.sources).toEqual([
      { source: 'brasilapi', count: 0, error: expect.stringContaining('CNPJ only') },
      { source: 'receita_federal', count: 1 },
    ]);
  });
});

describe('POST /api/companies/search/stream', () => {
  it('sends a page per source, then one done with the totals', async () => {
    const res = await app.request('POST', '/v1/api/companies/search/stream', { key, body: { cnaes: ['6201501'], limit: 25 } });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = res.events!;
    expect(events.map((e) => e.event)).toEqual(['page', 'done']);
    expect(events[0]!.data).toMatchObject({ source: 'receita_federal', results: expect.any(Array) });
    expect((events[0]!.data as { results: unknown[] }).results).toHaveLength(3);
    expect(events[1]!.data).toMatchObject({ total: 3, sources: [{ source: 'receita_federal', count: 3 }] });
  });

  it('answers a refused filter, or a first page it cannot pay for, as a plain HTTP error', async () => {
    const bad = await app.request('POST', '/v1/api/companies/search/stream', { key, body: { cnaes: ['x'] } });
    expect(bad.status).toBe(400);
    const { apiKey, workspaceId } = await app.workspace();
    const balance = (await app.services.credits.view(workspaceId))!.balance;
    await app.services.credits.debit(workspaceId, balance, 'searchCompanies', 'spend it all');
    const poor = await app.request('POST', '/v1/api/companies/search/stream', { key: apiKey, body: {} });
    expect(poor.status).toBe(402);
    expect(poor.body.error).toBe('insufficient_credits');
  });
});
