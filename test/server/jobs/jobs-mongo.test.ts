/**
 * Jobs on MongoDB (FerretDB in CI): the lifecycle, and two server instances sharing one job's
 * items, each item run once and charged once.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandlerContext, Handlers } from '../../../server/invocation/handler.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { mongoForTests } from '../store/mongo-server.ts';

const mongo = await mongoForTests();
if (!mongo.uri) {
  const reason = 'reason' in mongo ? mongo.reason : '';
  if (process.env.CI === 'true') throw new Error(`jobs on MongoDB: ${reason}`);
  console.log(`jobs on MongoDB skipped: ${reason}`);
}

describe.skipIf(!mongo.uri)('jobs on MongoDB', () => {
  const dbName = `prospecta_jobs_${randomUUID().replaceAll('-', '')}`;
  const cnpj = makeCnpj('11222333');
  const calls = [0, 0];
  let apps: TestApp[] = [];

  beforeAll(async () => {
    const base = new URL(mongo.uri!);
    base.pathname = `/${dbName}`;
    const counted = (n: number) => (built: Handlers) => ({
      lookupCnpjBatch: (input: { cnpjs: string[] }, ctx: HandlerContext) => {
        calls[n]!++;
        return built.lookupCnpjBatch(input, ctx);
      },
    });
    apps = [
      await startTestApp({ MONGODB_URI: base.toString(), JOBS_POLL_MS: '20' }, { handlers: counted(0) }),
      await startTestApp({ MONGODB_URI: base.toString(), JOBS_POLL_MS: '20' }, { handlers: counted(1) }),
    ];
    await apps[0]!.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    const client = await MongoClient.connect(mongo.uri!);
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  it('two instances share one job: every item runs once and is charged once, and the results are all there', async () => {
    const [a, b] = apps as [TestApp, TestApp];
    const { apiKey } = await a.workspace();
    // FerretDB takes a lock document per conditional update, a dozen round trips an item: 20 items
    // show the sharing, and stay within the deadline beside the rest of the suite on the same server.
    const total = 20;
    const items = Array.from({ length: total }, (_, i) => ({ input: { cnpjs: i % 2 === 0 ? [cnpj] : [makeCnpj('99888777')] } }));
    const started = await a.request('POST', '/v1/api/jobs', { key: apiKey, body: { operation: 'lookupCnpjBatch', items } });
    expect(started.status).toBe(202);
    const { jobId } = started.body;
    const job = await eventually(
      async () => {
        const res = await b.request('GET', `/v1/api/jobs/${jobId}`, { key: apiKey });
        return res.body.status === 'done' && res.body.done === total && res.body;
      },
      { timeoutMs: 150_000 },
    );
    expect(job).toMatchObject({ total, done: total, failed: 0, creditsCharged: total / 2 });
    expect(calls[0]! + calls[1]!).toBe(total);
    expect(calls[0]).toBeGreaterThan(0);
    expect(calls[1]).toBeGreaterThan(0);

    const results = [];
    let cursor: string | null = null;
    do {
      const res: { body: { results: unknown[]; nextCursor: string | null } } = await a.request('GET', `/v1/api/jobs/${jobId}/results?limit=64${cursor ? `&cursor=${cursor}` : ''}`, { key: apiKey });
      results.push(...res.body.results);
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(results.map((r) => (r as { itemId: string }).itemId)).toEqual(items.map((_, i) => String(i)));
    const ledger = await a.request('GET', '/v1/api/credits/ledger?operation=lookupCnpjBatch&limit=200', { key: apiKey });
    expect(ledger.body.movements).toHaveLength(total / 2);
    expect((await a.request('GET', '/v1/api/credits', { key: apiKey })).body.balance).toBe(500 - total / 2);
  }, 180_000);

  it('cancel and the workspace boundary hold on MongoDB too', async () => {
    const [a, b] = apps as [TestApp, TestApp];
    const owner = await a.workspace();
    const other = await b.workspace();
    const { jobId } = (await a.request('POST', '/v1/api/jobs', { key: owner.apiKey, body: { operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [cnpj] } }] } })).body;
    expect((await b.request('GET', `/v1/api/jobs/${jobId}`, { key: other.apiKey })).status).toBe(404);
    await eventually(async () => (await b.request('GET', `/v1/api/jobs/${jobId}`, { key: owner.apiKey })).body.status === 'done');
    const again = await b.request('POST', `/v1/api/jobs/${jobId}/cancel`, { key: owner.apiKey });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('job_finished');
  });
});
