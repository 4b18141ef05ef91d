/**
 * Webhooks of jobs: a loopback receiver that checks every signature answers 500 once, then stays
 * silent past the (shortened) timeout once, then 200; the delivery is retried on the schedule
 * (moved by the test's clock, not waited for), with one `Prospecta-Delivery` id throughout.
 * Redirects count as failures. The URL rules hold when WEBHOOK_ALLOW_PRIVATE is off.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const SECRET = 'a-webhook-secret-of-32-characters';
const cnpj = makeCnpj('11222333');

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  valid: boolean;
}

/** Verifies as docs/api.md tells a receiver to. */
function verify(secret: string, header: string | undefined, body: string): boolean {
  const { t, v1 } = Object.fromEntries((header ?? '').split(',').map((part) => part.split('=') as [string, string]));
  if (!t || !v1) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  const given = Buffer.from(v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

let app: TestApp;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** What the receiver does with each next request, in order; then 200. */
let script: Array<(res: ServerResponse) => void> = [];
let clock = Date.now();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body, valid: verify(SECRET, req.headers['prospecta-signature'] as string, body) });
      const act = script.shift();
      if (act) act(res);
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  app = await startTestApp({ JOBS_POLL_MS: '20', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '300' });
  app.services.webhooks.options.now = () => clock;
  await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
});
afterAll(async () => {
  await app.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

const start = (key: string, webhook: object) =>
  app.request('POST', '/v1/api/jobs', { key, body: { operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [cnpj] } }, { itemId: 'b', input: { cnpjs: [cnpj] } }], webhook } });

describe('job webhooks', () => {
  it('retries a delivery that failed (500, then no answer in time) on its schedule, same delivery id, signed each time', async () => {
    received.length = 0;
    let hung: ServerResponse | undefined;
    script = [(res) => res.writeHead(500).end('down'), (res) => (hung = res)];
    const { apiKey } = await app.workspace();
    const { jobId } = (await start(apiKey, { url: receiverUrl, secret: SECRET })).body;

    // The receiver records a request before the sender has read its answer and stored the failure
    // (and the retry's time, read from the clock): the clock moves only once that is stored.
    await eventually(async () => received.length === 1 && (await app.services.webhooks.deliveries.findOne({ jobId }))?.lastError?.includes('HTTP 500') === true);
    const first = JSON.parse(received[0]!.body);
    expect(first).toMatchObject({ type: 'job.finished', jobId, job: { jobId, status: 'done', done: 2, creditsCharged: 2 }, at: expect.any(String) });
    // The first retry comes within 5 s.
    clock += 5_000;
    // Woken at each check: a wake that lands while the runner is mid-pass (it read the time before
    // the clock moved) would otherwise wait for the next poll.
    await eventually(() => (app.services.jobRunner.wake(), received.length === 2));
    // No answer within the timeout: a failure, retried after the next wait (30 s), not before.
    await eventually(async () => (await app.services.webhooks.deliveries.findOne({ jobId }))?.lastError?.includes('no answer') === true);
    hung?.end();
    clock += 29_000;
    app.services.jobRunner.wake();
    clock += 1_000;
    await eventually(() => (app.services.jobRunner.wake(), received.length === 3));
    await eventually(async () => (await app.services.webhooks.deliveries.findOne({ jobId }))?.status === 'delivered');

    expect(received.map((r) => r.valid)).toEqual([true, true, true]);
    expect(new Set(received.map((r) => r.headers['prospecta-delivery'])).size).toBe(1);
    expect(received.every((r) => r.body === received[0]!.body)).toBe(true);
  });

  it('job.item events, when asked for, deliver each result; a redirect is a failure, not followed', async () => {
    received.length = 0;
    script = [(res) => res.writeHead(302, { Location: 'http://127.0.0.1:1/elsewhere' }).end()];
    const { apiKey } = await app.workspace();
    const { jobId } = (await start(apiKey, { url: receiverUrl, secret: SECRET, events: ['job.item'] })).body;
    await eventually(() => received.length === 2);
    // Moved once the redirect's failure is stored, not while its retry time is being read.
    await eventually(async () => (await app.services.webhooks.deliveries.find({ jobId }).toArray()).some((d) => d.lastError?.includes('HTTP 302')));
    clock += 5_000;
    await eventually(() => (app.services.jobRunner.wake(), received.length === 3));
    const items = received.map((r) => JSON.parse(r.body));
    expect(items.every((event) => event.type === 'job.item' && event.jobId === jobId)).toBe(true);
    expect(items.map((event) => event.item.itemId).sort()).toEqual(['0', 'b', expect.any(String)].sort());
    expect(items[0].item).toMatchObject({ status: 'ok', output: { results: [{ cnpj }] }, creditsCharged: 1 });
    expect(received.map((r) => r.valid)).toEqual([true, true, true]);
  });
});

describe('a receiver that answers 2xx and keeps its body coming', () => {
  it('has answered: the delivery is delivered with its status, not failed and sent again when the body outlasts the timeout', async () => {
    received.length = 0;
    let trickling: ServerResponse | undefined;
    script = [
      (res) => {
        trickling = res;
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('still answering');
      },
    ];
    try {
      const { apiKey } = await app.workspace();
      const { jobId } = (await start(apiKey, { url: receiverUrl, secret: SECRET })).body;
      await eventually(async () => (await app.services.webhooks.deliveries.findOne({ jobId }))?.status === 'delivered', { timeoutMs: 10_000 });
      const delivery = await app.services.webhooks.deliveries.findOne({ jobId });
      expect(delivery).toMatchObject({ attempts: 1, lastError: null });
      expect(received).toHaveLength(1);
    } finally {
      trickling?.end();
    }
  });
});

describe('a server closing with a delivery out', () => {
  it('does not wait for a receiver holding it: the attempt is dropped and sent again, same id, at the next start', async () => {
    const dataDir = await tempDir('webhook-close');
    const env = { JOBS_POLL_MS: '20', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '60000' };
    const first = await startTestApp(env, { dataDir });
    let second: TestApp | undefined;
    try {
      await first.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
      received.length = 0;
      script = [() => {}]; // held: never answered
      const { workspaceId, apiKey } = await first.workspace();
      await first.services.credits.credit(workspaceId, 5, 'grant', 'one job');
      const job = await first.request('POST', '/v1/api/jobs', { key: apiKey, body: { operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [cnpj] } }], webhook: { url: receiverUrl, secret: SECRET } } });
      expect(job.status).toBe(202);
      await eventually(() => received.length === 1, { message: 'the delivery to reach the receiver' });

      // Before, closing waited for the attempt until its timeout (60 s here).
      const closed = await Promise.race([first.close().then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 15_000).unref())]);
      expect(closed, 'the server closed while the receiver held its delivery').toBe(true);

      second = await startTestApp(env, { dataDir });
      await eventually(() => received.length === 2, { message: 'the delivery sent again by the next start' });
      await eventually(async () => (await second!.services.webhooks.deliveries.findOne({ jobId: job.body.jobId }))?.status === 'delivered');
      expect(received[1]!.headers['prospecta-delivery']).toBe(received[0]!.headers['prospecta-delivery']);
      expect(received[1]!.body).toBe(received[0]!.body);
    } finally {
      await second?.close();
      await first.close().catch(() => {});
    }
  });
});

describe('webhook URLs without WEBHOOK_ALLOW_PRIVATE', () => {
  it('are https: on public addresses only (400 naming the problem)', async () => {
    const strict = await startTestApp({});
    try {
      const { apiKey } = await strict.workspace();
      for (const [url, message] of [
        ['http://example.com/hook', /https.*WEBHOOK_ALLOW_PRIVATE/],
        ['https://127.0.0.1/hook', /not a public address.*WEBHOOK_ALLOW_PRIVATE/],
        ['https://10.1.2.3/hook', /not a public address.*WEBHOOK_ALLOW_PRIVATE/],
        ['https://[::1]/hook', /not a public address.*WEBHOOK_ALLOW_PRIVATE/],
        ['https://localhost/hook', /not a public address.*WEBHOOK_ALLOW_PRIVATE/],
        ['not a url', /not a URL/],
      ] as const) {
        const res = await strict.request('POST', '/v1/api/jobs', {
          key: apiKey,
          body: { operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [cnpj] } }], webhook: { url, secret: SECRET } },
        });
        expect(res.status, url).toBe(400);
        expect(res.body.message).toMatch(message);
      }
    } finally {
      await strict.close();
    }
  });
});
