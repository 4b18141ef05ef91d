/**
 * Deliveries shared fairly (issue 39): one workspace's job leaves a backlog of `job.item` events
 * for a slow receiver (each answered after seconds), and another workspace's 1-item job then
 * starts: its `job.finished` reaches its receiver within 10 s, as decisions.md promises, however
 * long the backlog. Before, one shared queue sent 20 of the oldest at a time and waited for them,
 * so the small job's delivery waited for the whole backlog (976 s for 10,000 events). A backlog
 * of a few hundred to a receiver answering in 3 s shows it in a bounded test. Within one
 * workspace the same holds between its jobs: places freed one at a time go round its jobs, so a
 * second job is not left behind the first one's backlog (on the embedded store and on MongoDB,
 * FerretDB in CI; the first case is the embedded store's).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { MAX_IN_FLIGHT } from '../../../server/jobs/webhooks.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { deferCleanup } from '../../helpers/cleanup.ts';
import { eventually } from '../../helpers/eventually.ts';
import { dropDatabase, mongoForTests, throwawayDatabaseName } from '../store/mongo-server.ts';

const SECRET = 'a-webhook-secret-of-32-characters';
const cnpj = makeCnpj('11222333');
const BACKLOG = 300;
const SLOW_MS = 3_000;

let app: TestApp | undefined;
const servers: Server[] = [];
/** Deliveries a receiver still holds: answered before the server closes, which waits for its attempts. */
const holding: Array<() => void> = [];
afterEach(async () => {
  for (const releaseAll of holding.splice(0)) releaseAll();
  await app?.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A receiver answering 200 after `delayMs`, recording each delivery's body as it arrives. */
async function receiver(delayMs: number): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      setTimeout(() => res.writeHead(200).end('ok'), delayMs).unref();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

/** A receiver that holds every delivery unanswered until the test lets one go, oldest first. */
async function holdingReceiver(): Promise<{ url: string; arrivals: () => number; held: () => number; release(): void }> {
  const waiting: Array<() => void> = [];
  let arrived = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived++;
      waiting.push(() => res.writeHead(200).end('ok'));
    });
  });
  servers.push(server);
  holding.push(() => waiting.splice(0).forEach((answer) => answer()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals: () => arrived,
    held: () => waiting.length,
    release: () => waiting.shift()?.(),
  };
}

describe('webhook deliveries shared fairly between workspaces', () => {
  it("another workspace's first delivery arrives within 10 s behind a backlog to a slow receiver", { timeout: 120_000 }, async () => {
    app = await startTestApp({ JOBS_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '10000' });
    await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
    const slow = await receiver(SLOW_MS);
    const fast = await receiver(0);
    const busy = await app.workspace('active');
    const quiet = await app.workspace('active');
    await app.services.credits.credit(busy.workspaceId, BACKLOG, 'grant', 'backlog');
    await app.services.credits.credit(quiet.workspaceId, 1, 'grant', 'one');

    const items = Array.from({ length: BACKLOG }, () => ({ input: { cnpjs: [cnpj] } }));
    const big = await app.request('POST', '/v1/api/jobs', {
      key: busy.apiKey,
      body: { operation: 'lookupCnpjBatch', items, webhook: { url: slow.url, secret: SECRET, events: ['job.item'] } },
    });
    expect(big.status).toBe(202);
    // The big job has run: its events wait for the slow receiver, which holds every place it is given.
    await eventually(async () => (await app!.request('GET', `/v1/api/jobs/${big.body.jobId}`, { key: busy.apiKey })).body.status === 'done', {
      timeoutMs: 60_000,
      message: 'the big job to finish',
    });
    await eventually(() => slow.bodies.length >= 1, { message: 'the backlog to be delivering' });

    const small = await app.request('POST', '/v1/api/jobs', {
      key: quiet.apiKey,
      body: { operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [cnpj] } }], webhook: { url: fast.url, secret: SECRET } },
    });
    expect(small.status).toBe(202);
    await eventually(() => fast.bodies.length >= 1, { timeoutMs: 10_000, message: "the small job's job.finished within 10 s" });
    expect(JSON.parse(fast.bodies[0]!)).toMatchObject({ type: 'job.finished', jobId: small.body.jobId, job: { status: 'done', done: 1 } });
    // The backlog was still far from delivered: the small job did not wait for it.
    expect(slow.bodies.length).toBeLessThan(BACKLOG);
  });
});

const mongo = await mongoForTests();
if (!mongo.uri && 'reason' in mongo) console.warn(`webhook fairness on MongoDB: skipped, ${mongo.reason}`);
/** Each store the deliveries may live in, as the environment that puts the server on it. */
const stores: Array<[string, () => Record<string, string>]> = [['the embedded store', () => ({})]];
if (mongo.uri) {
  stores.push([
    'MongoDB',
    () => {
      const dbName = throwawayDatabaseName();
      const uri = new URL(mongo.uri!);
      uri.pathname = `/${dbName}`;
      deferCleanup(() => dropDatabase(mongo.uri!, dbName));
      return { MONGODB_URI: uri.toString() };
    },
  ]);
}

for (const [name, storeEnv] of stores) {
  describe(`webhook deliveries shared fairly between a workspace's jobs, on ${name}`, () => {
    it("another job of the same workspace gets the next free place, not the end of the first job's backlog", { timeout: 120_000 }, async () => {
      // Held deliveries never time out during the test: a place frees only when the test lets one go.
      app = await startTestApp({ ...storeEnv(), JOBS_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '60000' });
      await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
      const slow = await holdingReceiver();
      const fast = await receiver(0);
      const { workspaceId, apiKey } = await app.workspace('active');
      await app.services.credits.credit(workspaceId, 100, 'grant', 'two jobs');
      const job = (body: Record<string, unknown>) => app!.request('POST', '/v1/api/jobs', { key: apiKey, body });
      const status = async (jobId: string) => (await app!.request('GET', `/v1/api/jobs/${jobId}`, { key: apiKey })).body.status;

      // More events than the workspace's share of places (16) and the 6 the test frees: a backlog behind them.
      const items = Array.from({ length: 30 }, () => ({ input: { cnpjs: [cnpj] } }));
      const big = await job({ operation: 'lookupCnpjBatch', items, webhook: { url: slow.url, secret: SECRET, events: ['job.item'] } });
      expect(big.status).toBe(202);
      await eventually(async () => (await status(big.body.jobId)) === 'done', { timeoutMs: 60_000, message: 'the big job to finish' });
      // The workspace holds its whole share of places, all with the big job's events.
      await eventually(() => slow.held() === MAX_IN_FLIGHT / 2, { message: "the workspace's share taken by the backlog" });

      const small = await job({ operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [cnpj] } }], webhook: { url: fast.url, secret: SECRET } });
      expect(small.status).toBe(202);
      await eventually(async () => (await status(small.body.jobId)) === 'done', { message: 'the small job to finish' });

      // Places free one at a time; each is refilled before the next frees. The round of the
      // workspace's jobs gives the small job one of the first two, whichever job the list names first.
      let freed = 0;
      while (fast.bodies.length === 0 && freed < 6) {
        const before = slow.arrivals();
        slow.release();
        freed++;
        await eventually(() => fast.bodies.length > 0 || slow.arrivals() > before, { message: 'the freed place to be refilled' });
      }
      expect(fast.bodies.length, `the small job's job.finished after ${freed} places freed`).toBe(1);
      expect(freed).toBeLessThanOrEqual(2);
      expect(JSON.parse(fast.bodies[0]!)).toMatchObject({ type: 'job.finished', jobId: small.body.jobId });
    });
  });
}
