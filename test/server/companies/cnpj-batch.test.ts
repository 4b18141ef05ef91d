import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import type { TaxRegimeDoc } from '../../../server/companies/tax-regimes.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { startFakeBrasilApi, type FakeBrasilApi } from '../../helpers/fake-brasilapi.ts';

let app: TestApp;
const acme = makeCnpj('11222333');
const acmeBranch = makeCnpj('11222333', '0002');
const alnum = '12ABC34501DE35';
const absent = makeCnpj('44555666');

beforeAll(async () => {
  app = await startTestApp();
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [acme, acmeBranch, alnum]) await companies.insertOne(companyDoc(cnpj));
});
afterAll(() => app.close());

const lookup = (key: string, cnpjs: unknown) => app.request('POST', '/v1/api/companies/cnpj/batch', { key, body: { cnpjs } });

describe('POST /api/companies/cnpj/batch', () => {
  it('splits results, notFound and invalid; keeps the first of duplicates; accepts punctuation', async () => {
    const { apiKey } = await app.workspace();
    const res = await lookup(apiKey, [
      '11.222.333/0001-81',
      absent,
      '11222333000182',
      acme,
      '12.abc.345/01de-35',
      acmeBranch,
      '00.000.000/0000-00',
    ]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((c: { cnpj: string }) => c.cnpj)).toEqual([acme, alnum, acmeBranch]);
    expect(res.body.results[0]).toMatchObject({
      cnpj: acme,
      name: expect.any(String),
      source: 'receita_federal',
      registrationStatus: 'ATIVA',
      address: { state: 'SP' },
    });
    // Exactly the registry record and its source: nothing the store keeps for search or import.
    for (const internal of ['_id', 'search', 'importRun']) expect(res.body.results[0]).not.toHaveProperty(internal);
    expect(Object.keys(res.body.results[0]).at(-1)).toBe('source');
    expect(res.body.notFound).toEqual([absent]);
    expect(res.body.invalid).toEqual(['11222333000182', '00000000000000']);
  });

  it('charges 1 credit per company found, and nothing when none is found', async () => {
    const { apiKey } = await app.workspace();
    await lookup(apiKey, [acme, alnum, absent]);
    await lookup(apiKey, [absent]);
    const credits = (await app.request('GET', '/v1/api/credits', { key: apiKey })).body;
    expect(credits.balance).toBe(498);
    expect(credits.movements[0]).toMatchObject({ amount: -2, operation: 'lookupCnpjBatch' });
    expect(credits.movements).toHaveLength(2);
  });

  it('a malformed identifier is 400 invalid_cnpj naming it, never notFound, and charges nothing', async () => {
    const { apiKey } = await app.workspace();
    const res = await lookup(apiKey, [acme, '1122233300018', 'not-a-cnpj']);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_cnpj');
    expect(res.body.message).toContain('cnpjs[1] "1122233300018"');
    expect(res.body.message).toContain('cnpjs[2] "not-a-cnpj"');
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).body.balance).toBe(500);
  });

  it('answers 402 and changes nothing when the balance cannot pay for what was found', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    await app.services.credits.debit(workspaceId, 499, 'test', 'leave one credit');
    const res = await lookup(apiKey, [acme, acmeBranch]);
    expect(res.status).toBe(402);
    expect(res.body.error).toBe('insufficient_credits');
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).body.balance).toBe(1);
  });

  it('takes 500 identifiers, refuses 501 or none', async () => {
    const { apiKey } = await app.workspace('active');
    const many = Array.from({ length: 500 }, (_, i) => makeCnpj(String(10_000_000 + i)));
    const ok = await lookup(apiKey, many);
    expect(ok.status).toBe(200);
    expect(ok.body.notFound).toHaveLength(500);
    expect((await lookup(apiKey, [...many, acme])).status).toBe(400);
    expect((await lookup(apiKey, [])).status).toBe(400);
  });

  it('over HTTP passes the stored JSON through: the same bytes as the answer written from objects (under an Idempotency-Key)', async () => {
    const { apiKey } = await app.workspace();
    const withRegime = makeCnpj('22333444');
    const older = makeCnpj('33444555');
    await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(withRegime, { name: 'AÇÃO "ASPAS" \\ {[,]} LTDA' }));
    await app.services.store.collection<TaxRegimeDoc>('tax_regimes').insertOne({
      _id: `${withRegime}:2023:0:lucro_real`, cnpj: withRegime, year: 2023, form: 'LUCRO REAL', scpCnpj: null, bookkeepingEntries: 2, release: '2026-10', importRun: 'test',
    });
    // Imported before issue 22: without its newer fields, which the answer gives as null.
    const { size: _size, simples: _simples, ...beforeIssue22 } = companyDoc(older);
    await app.services.store.collection<Partial<CompanyDoc> & { _id: string }>('companies').insertOne(beforeIssue22);
    const send = (headers: Record<string, string>) =>
      fetch(`${app.url}/v1/api/companies/cnpj/batch`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ cnpjs: [acme, withRegime, absent, older, alnum] }),
      });
    const raw = await send({});
    const objects = await send({ 'Idempotency-Key': randomUUID() });
    for (const header of ['content-type', 'content-length']) expect(raw.headers.get(header)).toBe(objects.headers.get(header));
    const text = await raw.text();
    expect(raw.status, text).toBe(200);
    expect(text).toBe(await objects.text());
    const answer = JSON.parse(text);
    expect(answer.results.map((c: { cnpj: string }) => c.cnpj)).toEqual([acme, withRegime, older, alnum]);
    expect(answer.results[1]).toMatchObject({ name: 'AÇÃO "ASPAS" \\ {[,]} LTDA', taxRegimes: [{ year: 2023, form: 'LUCRO REAL', scpCnpj: null, bookkeepingEntries: 2 }] });
    expect(answer.results[2]).toMatchObject({ size: null, simples: null, taxRegimes: [], source: 'receita_federal' });
    for (const company of answer.results) expect(Object.keys(company).slice(-2)).toEqual(['taxRegimes', 'source']);
  });

  it('needs a plan', async () => {
    const { apiKey } = await app.workspace('none');
    expect((await lookup(apiKey, [acme])).body.error).toBe('plan_required');
  });
});

describe('POST /api/companies/cnpj/batch with BrasilAPI enabled', () => {
  let remoteApp: TestApp;
  let fake: FakeBrasilApi;
  const remoteOnly = makeCnpj('55666777');
  const nowhere = makeCnpj('88999000');
  const alsoNowhere = makeCnpj('88999001');

  beforeAll(async () => {
    fake = await startFakeBrasilApi();
    fake.add({ cnpj: remoteOnly, razao_social: 'REMOTA COMERCIO LTDA' });
    remoteApp = await startTestApp({
      BRASILAPI_ENABLED: 'true',
      BRASILAPI_URL: fake.url,
      BRASILAPI_LOOKUPS_PER_REQUEST: '2',
    });
    await remoteApp.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(acme));
  });
  afterAll(async () => {
    await remoteApp.close();
    await fake.close();
  });

  it('asks BrasilAPI for the first CNPJs the registry lacks, and charges for what it finds', async () => {
    const { apiKey } = await remoteApp.workspace();
    const res = await remoteApp.request('POST', '/v1/api/companies/cnpj/batch', {
      key: apiKey,
      body: { cnpjs: [nowhere, remoteOnly, acme, alsoNowhere] },
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((c: { cnpj: string; source: string }) => [c.cnpj, c.source])).toEqual([
      [remoteOnly, 'brasilapi'],
      [acme, 'receita_federal'],
    ]);
    expect(res.body.results[0]).toMatchObject({ name: 'REMOTA COMERCIO LTDA', release: null });
    expect(res.body.notFound).toEqual([nowhere, alsoNowhere]);
    expect(res.body.sources).toEqual([
      { source: 'receita_federal', count: 1 },
      { source: 'brasilapi', count: 1, checked: 2 },
    ]);
    // Only the first two missing CNPJs were asked for, with a real User-Agent.
    expect(fake.requests.map((r) => r.path).sort()).toEqual([`/api/cnpj/v1/${nowhere}`, `/api/cnpj/v1/${remoteOnly}`].sort());
    expect(fake.requests[0]!.headers['user-agent']).toMatch(/^prospecta\//);
    expect((await remoteApp.request('GET', '/v1/api/credits', { key: apiKey })).body.balance).toBe(498);
  });

  it('lists BrasilAPI as configured in the catalog only when enabled', async () => {
    const on = await remoteApp.request('GET', '/v1/api/providers');
    expect(on.body.providers).toContainEqual(expect.objectContaining({ id: 'brasilapi', configured: true, cost: 1 }));
    const off = await app.request('GET', '/v1/api/providers');
    expect(off.body.providers).toContainEqual(expect.objectContaining({ id: 'brasilapi', configured: false }));
  });
});
