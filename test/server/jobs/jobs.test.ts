/**
 * Jobs over HTTP on the embedded store: the lifecycle, bad input, cancellation, maxCredits, the
 * limit of 2 running jobs per workspace, and another workspace refused everywhere. Items whose
 * timing matters run through a gated lookupCnpjBatch (the real handler, after the test opens it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationId } from '../../../shared/operations/index.ts';
import type { HandlerContext } from '../../../server/invocation/handler.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { latch, type Latch } from '../../helpers/latch.ts';

let app: TestApp;
const found = [makeCnpj('11222333'), makeCnpj('22333444'), makeCnpj('33444555'), makeCnpj('44555666')] as [string, string, string, string];
const absent = makeCnpj('55666777');
/** Items naming this CNPJ wait for the test's gate (and its signal) before looking up. */
const gated = makeCnpj('66777888');
let gate: Latch = latch();
let started = 0;
let aborted = 0;

beforeAll(async () => {
  app = await startTestApp(
    { JOBS_POLL_MS: '20' },
    {
      handlers: ({ lookupCnpjBatch }) => ({
        lookupCnpjBatch: async (input, ctx: HandlerContext) => {
          if (input.cnpjs.includes(gated)) {
            started++;
            // Leased just before its job was cancelled: its signal had fired before it got here.
            if (ctx.signal.aborted) {
              aborted++;
              throw ctx.signal.reason;
            }
            await new Promise<void>((resolve, reject) => {
              void gate.promise.then(resolve);
              ctx.signal.addEventListener('abort', () => (aborted++, reject(ctx.signal.reason)), { once: true });
            });
          }
          return lookupCnpjBatch(input, ctx);
        },
      }),
    },
  );
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [...found, gated]) await companies.insertOne(companyDoc(cnpj));
});
afterAll(() => app.close());

const start = (key: string, body: unknown, headers: Record<string, string> = {}) => app.request('POST', '/v1/api/jobs', { key, body, headers });
const job = (key: string, jobId: string) => app.request('GET', `/v1/api/jobs/${jobId}`, { key });
const ended = (key: string, jobId: string) =>
  eventually(async () => {
    const res = await job(key, jobId);
    return ['done', 'stopped', 'cancelled', 'failed'].includes(res.body.status) && res.body;
  });
const lookups = (...cnpjs: string[][]) => cnpjs.map((list) => ({ input: { cnpjs: list } }));
async function allResults(key: string, jobId: string, limit: number) {
  const results = [];
  let cursor: string | null = null;
  do {
    const res: TestResponse = await app.request('GET', `/v1/api/jobs/${jobId}/results?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { key });
    expect(res.status).toBe(200);
    results.push(...res.body.results);
    cursor = res.body.nextCursor;
  } while (cursor);
  return results;
}
async function ledger(key: string, operation: OperationId) {
  const res = await app.request('GET', `/v1/api/credits/ledger?operation=${operation}&limit=100`, { key });
  return res.body.movements as Array<{ amount: number }>;
}

describe('jobs', () => {
  it('runs every item once as its operation, charges each once, and pages the results in item order', async () => {
    const { apiKey } = await app.workspace();
    const res = await start(apiKey, {
      operation: 'lookupCnpjBatch',
      items: [{ itemId: 'first', input: { cnpjs: [found[0]] } }, ...lookups([found[1], absent], [absent], ['00000000000000x'], [found[2], found[3]])],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ jobId: expect.any(String), status: 'queued', total: 5, maxCredits: null });
    const done = await ended(apiKey, res.body.jobId);
    expect(done).toMatchObject({ operation: 'lookupCnpjBatch', status: 'done', total: 5, done: 4, failed: 1, creditsCharged: 4, finishedAt: expect.any(String) });

    const results = await allResults(apiKey, res.body.jobId, 2);
    expect(results.map((r) => [r.itemId, r.status, r.creditsCharged])).toEqual([
      ['first', 'ok', 1],
      ['1', 'ok', 1],
      ['2', 'ok', 0],
      ['3', 'error', 0],
      ['4', 'ok', 2],
    ]);
    // The operation's own answer, as the synchronous call gives it.
    const sync = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body: { cnpjs: [found[1], absent] } });
    expect(results[1].output).toEqual(sync.body);
    expect(results[3].error).toMatchObject({ error: 'invalid_cnpj' });
    // One ledger movement per charged item, each named by the operation (and the synchronous call's).
    expect((await ledger(apiKey, 'lookupCnpjBatch')).map((m) => m.amount).sort()).toEqual([-1, -1, -1, -2]);
    const list = await app.request('GET', '/v1/api/jobs', { key: apiKey });
    expect(list.body.jobs.map((j: { jobId: string }) => j.jobId)).toEqual([res.body.jobId]);
  });

  it('refuses bad jobs with a 400 naming the problem, before anything is queued', async () => {
    const { apiKey } = await app.workspace();
    const cases: Array<[unknown, RegExp]> = [
      [{ operation: 'searchPeople', items: lookups([found[0]]) }, /operation must be one of/],
      [{ operation: 'lookupCnpjBatch', items: [] }, /items must have at least 1 item/],
      [{ operation: 'lookupCnpjBatch', items: Array.from({ length: 10_001 }, () => ({ input: { cnpjs: ['1'] } })) }, /items must have at most 10000 items/],
      [{ operation: 'lookupCnpjBatch', items: [...lookups([found[0]]), { input: { cnpjs: [] } }] }, /items\[1\]\.input\.cnpjs must have at least 1 item/],
      [{ operation: 'enrich', items: [{ input: { email: 'a@b.co', nope: 1 } }] }, /unknown property items\[0\]\.input\.nope/],
      [{ operation: 'lookupCnpjBatch', items: [{ itemId: 'a', input: { cnpjs: ['1'] } }, { itemId: 'a', input: { cnpjs: ['1'] } }] }, /items\[1\]\.itemId/],
      [{ operation: 'lookupCnpjBatch', items: lookups([found[0]]), webhook: { url: 'https://example.com/hook', secret: 'short' } }, /secret must be at least 16 characters/],
    ];
    for (const [body, message] of cases) {
      const res = await start(apiKey, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.message).toMatch(message);
    }
    expect((await app.request('GET', '/v1/api/jobs', { key: apiKey })).body.jobs).toEqual([]);
  });

  it('a job of 10,000 items is accepted in one request', async () => {
    const { apiKey } = await app.workspace();
    const res = await start(apiKey, { operation: 'lookupCnpjBatch', items: Array.from({ length: 10_000 }, () => ({ input: { cnpjs: [absent] } })) });
    expect(res.status).toBe(202);
    expect(res.body.total).toBe(10_000);
    const cancelled = await app.request('POST', `/v1/api/jobs/${res.body.jobId}/cancel`, { key: apiKey });
    expect(cancelled.status).toBe(200);
  });

  it('cancel stops a running job: finished items stay, charged; a second cancel is 409 job_finished', async () => {
    gate = latch();
    started = 0;
    aborted = 0;
    const { apiKey } = await app.workspace();
    const res = await start(apiKey, { operation: 'lookupCnpjBatch', items: [...lookups([found[0]]), ...lookups(...Array.from({ length: 40 }, () => [gated]))] });
    await eventually(async () => started > 0 && (await job(apiKey, res.body.jobId)).body.done === 1);
    const cancelled = await app.request('POST', `/v1/api/jobs/${res.body.jobId}/cancel`, { key: apiKey });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    // The items in flight are stopped by the cancel, not finished by the gate opening first.
    await eventually(() => aborted >= started);
    gate.open();
    const again = await app.request('POST', `/v1/api/jobs/${res.body.jobId}/cancel`, { key: apiKey });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('job_finished');
    const results = await allResults(apiKey, res.body.jobId, 100);
    expect(results).toEqual([{ itemId: '0', status: 'ok', output: expect.any(Object), creditsCharged: 1 }]);
    expect(await ledger(apiKey, 'lookupCnpjBatch')).toHaveLength(1);
  });

  it('a job stops once the key that started it is revoked: no item starts after the revocation', async () => {
    gate = latch();
    started = 0;
    const { workspaceId, apiKey: owner } = await app.workspace();
    const { keyId, apiKey } = await app.services.keys.create(workspaceId);
    const res = await start(apiKey, { operation: 'lookupCnpjBatch', items: [...lookups([found[0]]), ...lookups(...Array.from({ length: 200 }, () => [gated]))] });
    expect(res.status).toBe(202);
    await eventually(async () => started > 0 && (await job(owner, res.body.jobId)).body.done === 1);
    await app.services.keys.revoke(workspaceId, keyId);
    const inFlight = started;
    gate.open();
    expect((await ended(owner, res.body.jobId)).status).toBe('failed');
    // Only the items already running when the key was revoked finished (and were charged); those
    // may still be writing their results when the job has ended, so each charge is matched once written.
    let results: Array<{ creditsCharged: number }> = [];
    await eventually(async () => {
      results = await allResults(owner, res.body.jobId, 500);
      expect(await ledger(owner, 'lookupCnpjBatch')).toHaveLength(results.length);
    });
    expect(results.length).toBeLessThanOrEqual(1 + inFlight);
    expect(results.length).toBeLessThan(201);
    expect((await job(apiKey, res.body.jobId)).status).toBe(401);
  });

  it('maxCredits stops the job before it would spend more (status stopped)', async () => {
    const { apiKey } = await app.workspace();
    const res = await start(apiKey, { operation: 'lookupCnpjBatch', items: lookups(...found.map((c) => [c]), [found[0], found[1]]), maxCredits: 3 });
    expect((await ended(apiKey, res.body.jobId)).status).toBe('stopped');
    const spent = (await ledger(apiKey, 'lookupCnpjBatch')).reduce((sum, m) => sum - m.amount, 0);
    expect(spent).toBeLessThanOrEqual(3);
    // The items that finished are counted once they have all written.
    await eventually(async () => expect((await job(apiKey, res.body.jobId)).body.creditsCharged).toBe(spent));
    const results = await allResults(apiKey, res.body.jobId, 100);
    expect(results.reduce((sum, r) => sum + r.creditsCharged, 0)).toBe(spent);
  });

  it('runs at most 2 jobs of a workspace at once; the third waits queued', async () => {
    gate = latch();
    started = 0;
    const { apiKey } = await app.workspace();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await start(apiKey, { operation: 'lookupCnpjBatch', items: lookups([gated]) })).body.jobId);
    await eventually(() => started === 2);
    const statuses = await Promise.all(ids.map(async (id) => (await job(apiKey, id)).body.status));
    expect(statuses.sort()).toEqual(['queued', 'running', 'running']);
    gate.open();
    for (const id of ids) expect((await ended(apiKey, id)).status).toBe('done');
  });

  it('an item whose first run answered before a crash is replayed, reporting what that run charged', async () => {
    gate = latch();
    started = 0;
    const { apiKey } = await app.workspace();
    // Two running jobs held at the gate keep the third queued, its items unrun.
    for (let i = 0; i < 2; i++) await start(apiKey, { operation: 'lookupCnpjBatch', items: lookups([gated]) });
    await eventually(() => started === 2);
    const { jobId } = (await start(apiKey, { operation: 'lookupCnpjBatch', items: lookups([found[0], found[1]], [found[2]]) })).body;
    // Item 0's first run, as a process that died before writing its result left it: answered and
    // charged under the item's key, its answer stored there.
    const first = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body: { cnpjs: [found[0], found[1]] }, headers: { 'Idempotency-Key': `job:${jobId}:0` } });
    expect(first.status).toBe(200);
    gate.open();
    expect(await ended(apiKey, jobId)).toMatchObject({ status: 'done', done: 2, creditsCharged: 3 });
    const results = await allResults(apiKey, jobId, 100);
    expect(results.map((r) => [r.itemId, r.creditsCharged])).toEqual([
      ['0', 2],
      ['1', 1],
    ]);
    expect(results[0].output).toEqual(first.body);
    // Charged once: the first run's 2 credits, item 1's 1 and the two gated jobs' 1 each.
    expect((await ledger(apiKey, 'lookupCnpjBatch')).map((m) => m.amount).sort()).toEqual([-1, -1, -1, -2]);
  });

  it("another workspace's job is not found, anywhere", async () => {
    const owner = await app.workspace();
    const other = await app.workspace();
    const { jobId } = (await start(owner.apiKey, { operation: 'lookupCnpjBatch', items: lookups([found[0]]) })).body;
    await ended(owner.apiKey, jobId);
    for (const [method, path] of [
      ['GET', `/v1/api/jobs/${jobId}`],
      ['GET', `/v1/api/jobs/${jobId}/results`],
      ['POST', `/v1/api/jobs/${jobId}/cancel`],
    ] as const) {
      const res = await app.request(method, path, { key: other.apiKey });
      expect(res.status, path).toBe(404);
    }
    expect((await app.request('GET', '/v1/api/jobs', { key: other.apiKey })).body.jobs).toEqual([]);
    const cursor = (await app.request('GET', `/v1/api/jobs/${jobId}/results?limit=1`, { key: owner.apiKey })).body.nextCursor;
    const { jobId: otherJob } = (await start(other.apiKey, { operation: 'lookupCnpjBatch', items: lookups([absent]) })).body;
    const stolen = await app.request('GET', `/v1/api/jobs/${otherJob}/results?cursor=${cursor ?? 'eA'}`, { key: other.apiKey });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_cursor');
  });

  it('needs a credential before reading the body, and the scope of the operation the job runs', async () => {
    const anonymous = await app.request('POST', '/v1/api/jobs', { body: { operation: 'lookupCnpjBatch', items: lookups([found[0]]) } });
    expect(anonymous.status).toBe(401);
    const { workspaceId } = await app.workspace();
    const { apiKey } = await app.services.keys.create(workspaceId, ['enrich:write']);
    const refused = await start(apiKey, { operation: 'lookupCnpjBatch', items: lookups([found[0]]) });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('insufficient_scope');
    const none = await app.workspace('none');
    const unpaid = await start(none.apiKey, { operation: 'lookupCnpjBatch', items: lookups([found[0]]) });
    expect(unpaid.status).toBe(402);
    expect(unpaid.body.error).toBe('plan_required');
  });

  it('Idempotency-Key: the same start twice makes one job', async () => {
    const { apiKey } = await app.workspace();
    const body = { operation: 'lookupCnpjBatch', items: lookups([absent]) };
    const first = await start(apiKey, body, { 'Idempotency-Key': 'job-1' });
    const second = await start(apiKey, body, { 'Idempotency-Key': 'job-1' });
    expect(second.body.jobId).toBe(first.body.jobId);
    expect(second.headers.get('Idempotent-Replayed')).toBe('true');
  });
});
