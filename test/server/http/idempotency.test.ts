/**
 * Idempotent retries (issue 21, item 2): `Idempotency-Key` on every POST that charges or creates.
 * The first answer is stored per workspace and replayed for the same key and request; another
 * request under the key is 422, one still running 409; a retry is charged once, always, also when
 * the duplicates arrive at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type InputOf, type OperationId, type StreamEventOf } from '../../../shared/operations/index.ts';
import { takesIdempotencyKey, type Operation } from '../../../shared/operations/types.ts';
import type { HandlerContext } from '../../../server/pipeline/handler.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { latch, type Latch } from '../../helpers/latch.ts';
import { parseEvents } from '../../helpers/sse.ts';

let app: TestApp;
const acme = makeCnpj('11222333');
const other = makeCnpj('44555666');
const BATCH = '/v1/api/companies/cnpj/batch';
const STREAM_PEOPLE = '/v1/api/sourcing/people/stream';

/** The people stream is a test handler that charges a page, then waits for the test's `gate`. */
const people = { runs: 0, gate: latch() as Latch };
async function* gatedPages(_input: InputOf<'streamPeople'>, ctx: HandlerContext): AsyncGenerator<StreamEventOf<'streamPeople'>> {
  people.runs++;
  await ctx.charge(1, 'one person');
  yield { event: 'page', data: { source: 'lists', results: [{ name: 'Ana', emailStatus: 'unavailable', source: 'lists' }] } };
  await people.gate.promise;
  yield { event: 'done', data: { total: 1, sources: [{ source: 'lists', count: 1 }], creditsCharged: ctx.creditsCharged } };
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000' }, { handlers: { streamPeople: gatedPages } });
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [acme, other]) await companies.insertOne(companyDoc(cnpj));
});
afterAll(() => app.close());

const batch = (key: string, cnpjs: string[], idempotencyKey?: string) =>
  app.request('POST', BATCH, { key, body: { cnpjs }, headers: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey } });

async function debits(key: string): Promise<Array<{ amount: number; operation: string }>> {
  const credits = await app.request('GET', '/v1/api/credits', { key });
  return credits.body.movements.filter((m: { amount: number }) => m.amount < 0);
}

describe('which operations take an Idempotency-Key', () => {
  it('every POST that charges or creates, the agent chat, and not the key creation whose answer is a secret', () => {
    const taking = (Object.entries(operations) as Array<[OperationId, Operation]>).filter(([, op]) => takesIdempotencyKey(op)).map(([id]) => id);
    expect(taking.sort()).toEqual(
      [
        'addProspects',
        'agentChat',
        'aiColumn',
        'createCampaign',
        'createSheet',
        'createTemplate',
        'createWatch',
        'enrich',
        'exportCompanies',
        'hydratePeople',
        'lookupCnpjBatch',
        'research',
        'searchCompanies',
        'searchCompanyChanges',
        'searchPeople',
        'startJob',
        'streamCompanies',
        'streamPeople',
      ].sort(),
    );
  });

  it('is a header parameter of those operations in OpenAPI, with their 409 and 422', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    const batchOp = doc.paths['/api/companies/cnpj/batch'].post;
    expect(batchOp.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }));
    expect(Object.keys(batchOp.responses)).toEqual(expect.arrayContaining(['409', '422']));
    const credits = doc.paths['/api/credits'].get;
    expect(credits.parameters.map((p: { name: string }) => p.name)).not.toContain('Idempotency-Key');
    const stream = doc.paths['/api/companies/search/stream'].post;
    expect(stream.parameters).toContainEqual(expect.objectContaining({ name: 'Last-Event-ID', in: 'header' }));
    expect(stream.responses['204']).toBeDefined();
  });
});

describe('Idempotency-Key', () => {
  it('charges once under ten identical requests at once: one runs, the others get its answer or 409', async () => {
    const { apiKey } = await app.workspace();
    const answers = await Promise.all(Array.from({ length: 10 }, () => batch(apiKey, [acme, other], 'batch-0001')));
    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 409);
    expect(ok.length + busy.length).toBe(10);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of busy) {
      expect(a.body.error).toBe('idempotency_key_in_use');
      expect(a.headers.get('retry-after')).toBe('1');
    }
    for (const a of ok) expect(a.body).toEqual(ok[0]!.body);
    expect(await debits(apiKey)).toEqual([expect.objectContaining({ amount: -2, operation: 'lookupCnpjBatch' })]);

    // Once answered, a retry gets the stored answer, marked as replayed, and is not charged.
    const retry = await batch(apiKey, [acme, other], 'batch-0001');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(ok[0]!.body);
    expect(await debits(apiKey)).toHaveLength(1);
  });

  it('compares the request, not its spelling: the same body in another key order and the quoted key form replay', async () => {
    const { apiKey } = await app.workspace();
    const first = await app.request('POST', '/v1/api/companies/search', {
      key: apiKey,
      body: { state: 'SP', limit: 5 },
      headers: { 'Idempotency-Key': 'search-1' },
    });
    expect(first.status).toBe(200);
    const again = await app.request('POST', '/v1/api/companies/search', {
      key: apiKey,
      raw: '{"limit":5,"state":"SP"}',
      headers: { 'Idempotency-Key': '"search-1"', 'Content-Type': 'application/json' },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await debits(apiKey)).toHaveLength(1);
  });

  it('refuses the same key with another body, or for another operation: 422 idempotency_key_reused', async () => {
    const { apiKey } = await app.workspace();
    expect((await batch(apiKey, [acme], 'k-reused')).status).toBe(200);
    const changed = await batch(apiKey, [other], 'k-reused');
    expect(changed.status).toBe(422);
    expect(changed.body.error).toBe('idempotency_key_reused');
    const elsewhere = await app.request('POST', '/v1/api/companies/search', { key: apiKey, body: {}, headers: { 'Idempotency-Key': 'k-reused' } });
    expect(elsewhere.status).toBe(422);
    expect(await debits(apiKey)).toHaveLength(1);
  });

  it('is per workspace: the same key in another workspace is another request', async () => {
    const a = await app.workspace();
    const b = await app.workspace();
    expect((await batch(a.apiKey, [acme], 'shared-key')).status).toBe(200);
    const theirs = await batch(b.apiKey, [acme, other], 'shared-key');
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.results).toHaveLength(2);
    expect(await debits(b.apiKey)).toHaveLength(1);
  });

  it('lets a failure that charged nothing go: a retry after it runs afresh', async () => {
    const { apiKey, workspaceId } = await app.workspace();
    const balance = (await app.services.credits.view(workspaceId))!.balance;
    await app.services.credits.debit(workspaceId, balance, 'lookupCnpjBatch', 'spend it all');
    const poor = await batch(apiKey, [acme], 'after-402');
    expect(poor.status).toBe(402);
    await app.services.credits.credit(workspaceId, 10, 'grant', 'top up');
    const paid = await batch(apiKey, [acme], 'after-402');
    expect(paid.status).toBe(200);
    expect(paid.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a malformed key with 400, before running anything', async () => {
    const { apiKey } = await app.workspace();
    for (const key of ['', ' ', 'x'.repeat(256), 'two words', 'caf\u00e9', '""']) {
      const res = await batch(apiKey, [acme], key);
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect(res.body.message).toContain('Idempotency-Key');
    }
    expect((await batch(apiKey, [acme], 'x'.repeat(255))).status).toBe(200);
    expect(await debits(apiKey)).toHaveLength(1);
  });

  it('is ignored by an operation that takes none', async () => {
    const { apiKey } = await app.workspace();
    const res = await app.request('GET', '/v1/api/credits', { key: apiKey, headers: { 'Idempotency-Key': '' } });
    expect(res.status).toBe(200);
  });

  it('on a stream: 409 while it runs, then its finished events replayed with their ids, charged once', async () => {
    const { apiKey } = await app.workspace();
    Object.assign(people, { runs: 0, gate: latch() });
    const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'stream-1' };
    const first = await fetch(app.url + STREAM_PEOPLE, { method: 'POST', headers, body: '{}' });
    const reader = first.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: page')) text += (await reader.read()).value ?? '';

    const during = await app.request('POST', STREAM_PEOPLE, { key: apiKey, body: {}, headers: { 'Idempotency-Key': 'stream-1' } });
    expect(during.status).toBe(409);
    expect(during.body.error).toBe('idempotency_key_in_use');

    people.gate.open();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    const replay = await fetch(app.url + STREAM_PEOPLE, { method: 'POST', headers, body: '{}' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const replayed = await replay.text();
    const ids = (body: string) => [...body.matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
    expect(ids(replayed)).toEqual(ids(text));
    expect(parseEvents(replayed)).toEqual(parseEvents(text));
    expect(people.runs).toBe(1);
    expect(await debits(apiKey)).toHaveLength(1);
  });
});
