/**
 * Exports on MongoDB (FerretDB in CI): the file holds what paging the same search gives, charged
 * per row; a balance that runs out stops it with the paid rows readable; another workspace's
 * export is not found.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { mongoForTests } from '../store/mongo-server.ts';
import { parseCsv } from './csv.ts';

const mongo = await mongoForTests();
if (!mongo.uri) {
  const reason = 'reason' in mongo ? mongo.reason : '';
  if (process.env.CI === 'true') throw new Error(`exports on MongoDB: ${reason}`);
  console.log(`exports on MongoDB skipped: ${reason}`);
}

describe.skipIf(!mongo.uri)('exports on MongoDB', () => {
  const dbName = `prospecta_exports_${randomUUID().replaceAll('-', '')}`;
  // A few dozen rows keep FerretDB's round trips within the deadline beside the rest of the suite.
  const matching = Array.from({ length: 30 }, (_, i) => makeCnpj(String(20_000_000 + i * 13))).sort();
  let app: TestApp;

  beforeAll(async () => {
    const base = new URL(mongo.uri!);
    base.pathname = `/${dbName}`;
    app = await startTestApp({ MONGODB_URI: base.toString(), JOBS_POLL_MS: '20' });
    const docs = matching.map((cnpj) => companyDoc(cnpj, { address: { ...companyDoc(cnpj).address, state: 'RS' }, name: `=EMPRESA ${cnpj}` }));
    docs.push(companyDoc(makeCnpj('88000001')));
    await app.services.store.collection<CompanyDoc>('companies').bulkWrite(docs.reverse().map((document) => ({ insertOne: { document } })));
  });
  afterAll(async () => {
    await app?.close();
    const client = await MongoClient.connect(mongo.uri!);
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  async function run(key: string, body: Record<string, unknown>) {
    const started = await app.request('POST', '/v1/api/companies/export', { key, body });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const job = await eventually(
      async () => {
        const res = await app.request('GET', `/v1/api/jobs/${started.body.jobId}`, { key });
        return ['done', 'stopped', 'cancelled', 'failed'].includes(res.body.status) && res.body;
      },
      { timeoutMs: 60_000 },
    );
    return { job, res: await app.request('GET', `/v1/api/jobs/${started.body.jobId}/export`, { key }) };
  }

  it('exports what paging the search gives, charged per row, and hides it from another workspace', async () => {
    const { apiKey } = await app.workspace();
    const { job, res } = await run(apiKey, { state: 'RS', format: 'ndjson' });
    expect(job).toMatchObject({ status: 'done', done: matching.length, creditsCharged: matching.length });
    const rows = (res.body as string).trim().split('\n').map((line) => JSON.parse(line));
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { results: unknown[]; nextCursor: string | null } } = await app.request('POST', '/v1/api/companies/search', {
        key: apiKey,
        body: { state: 'RS', limit: 20, ...(cursor ? { cursor } : {}) },
      });
      paged.push(...page.body.results);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(rows).toEqual(paged);
    expect(rows.map((row) => row.cnpj)).toEqual(matching);

    const other = await app.workspace();
    expect((await app.request('GET', `/v1/api/jobs/${job.jobId}/export`, { key: other.apiKey })).status).toBe(404);
  });

  it('stops when the balance runs out, the paid rows readable as CSV', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    // 500 trial credits, 488 spent elsewhere: 12 rows can be paid for.
    expect((await app.services.credits.debit(workspaceId, 488, 'searchCompanies', 'spent before the export')).ok).toBe(true);
    const { job, res } = await run(apiKey, { state: 'RS', format: 'csv' });
    expect(job).toMatchObject({ status: 'stopped', done: 12, creditsCharged: 12 });
    const [header, ...rows] = parseCsv(res.body as string);
    expect(rows.map((row) => row[0])).toEqual(matching.slice(0, 12));
    expect(rows[0]![header!.indexOf('name')]).toBe(`'=EMPRESA ${matching[0]}`);
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).body.balance).toBe(0);
  });
});
