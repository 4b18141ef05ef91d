/**
 * Issue 42: watches on both stores. Two watches wait while the first release is in service; the
 * second release's import records its changes, and the server sends each watch its matching ones
 * as a signed `registry.changes` delivery, charged per change before it is sent; a workspace that
 * cannot pay has its watch paused, and resuming it (once it can) sends what it missed. Bad input
 * is a 400 naming the problem, another workspace's watch a 404.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRelease } from '../../../server/receita/import/importer.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { seedChanges } from '../../helpers/changes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { cnpj, writeReleasePair } from '../companies/change-releases.ts';
import { mongoForTests } from '../store/mongo-server.ts';

const SECRET = 'a-watch-secret-of-32-characters!';
const mongo = await mongoForTests();
if (!mongo.uri) console.log(`watches on MongoDB skipped: ${'reason' in mongo ? mongo.reason : ''}`);
const dbName = `prospecta_watches_${randomUUID().replaceAll('-', '')}`;
function dbUri(): string {
  const base = new URL(mongo.uri!);
  base.pathname = `/${dbName}`;
  return base.toString();
}

interface Received {
  headers: IncomingMessage['headers'];
  body: any;
  valid: boolean;
}

function verify(header: string | undefined, body: string): boolean {
  const { t, v1 } = Object.fromEntries((header ?? '').split(',').map((part) => part.split('=') as [string, string]));
  if (!t || !v1) return false;
  const expected = createHmac('sha256', SECRET).update(`${t}.${body}`).digest();
  const given = Buffer.from(v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const stores = [{ store: 'embedded', env: () => ({}) }, ...(mongo.uri ? [{ store: 'mongodb', env: () => ({ MONGODB_URI: dbUri() }) }] : [])];

describe.each(stores)('watches on the $store store', ({ store, env }) => {
  let app: TestApp;
  let receiver: Server;
  let url: string;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(body), valid: verify(req.headers['prospecta-signature'] as string, body) });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    app = await startTestApp({ ...env(), JOBS_POLL_MS: '20', WEBHOOK_ALLOW_PRIVATE: 'true' });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    if (store === 'mongodb') {
      const client = await MongoClient.connect(mongo.uri!);
      await client.db(dbName).dropDatabase();
      await client.close();
    }
  });

  const create = (key: string, body: Record<string, unknown>) => app.request('POST', '/v1/api/watches', { key, body: { webhook: { url, secret: SECRET }, ...body } });
  const balance = async (key: string) => (await app.request('GET', '/v1/api/credits', { key })).body.balance as number;

  it('refuses bad watches with a 400 naming the problem, and hides a watch from another workspace', async () => {
    const { apiKey } = await app.workspace();
    const tooMany = await create(apiKey, { name: 'too many', cnpjs: Array.from({ length: 10_001 }, (_, i) => makeCnpj(String(10_000_000 + i))) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toMatch(/cnpjs/);
    const invalid = await create(apiKey, { name: 'bad', cnpjs: [cnpj.closed, '11111111000100'] });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ error: 'invalid_cnpj', message: expect.stringContaining('cnpjs[1]') });
    const neither = await create(apiKey, { name: 'nothing' });
    expect(neither.status).toBe(400);
    expect(neither.body.message).toMatch(/cnpjs, filters/);
    const shortSecret = await app.request('POST', '/v1/api/watches', { key: apiKey, body: { name: 'short', cnpjs: [cnpj.closed], webhook: { url, secret: 'too-short' } } });
    expect(shortSecret.status).toBe(400);
    expect(shortSecret.body.message).toMatch(/secret/);

    // What only the server can judge (check digits, a CNAE code, the webhook's address) is named all at once.
    const allWrong = await app.request('POST', '/v1/api/watches', {
      key: apiKey,
      body: { name: 'all wrong', cnpjs: [cnpj.closed, '11111111000100'], filters: { partnerDocument: 'abc' }, webhook: { url: 'ftp://example.com/hook', secret: SECRET } },
    });
    expect(allWrong.status).toBe(400);
    expect(allWrong.body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('cnpjs[1]') });
    expect(allWrong.body.message).toContain('partnerDocument');
    expect(allWrong.body.message).toContain('webhook.url');
    // A name as every other name of the service: not blank, stored trimmed.
    const blank = await create(apiKey, { name: '   ', cnpjs: [cnpj.closed] });
    expect(blank.status).toBe(400);
    expect(blank.body.message).toMatch(/^name /);
    // Empty filters are no filters: they would watch every change of the whole registry.
    const noFilters = await create(apiKey, { name: 'everything', filters: {} });
    expect(noFilters.status).toBe(400);
    expect(noFilters.body.message).toMatch(/filters/);

    const made = await create(apiKey, { name: '  mine ', cnpjs: [cnpj.closed] });
    expect(made.status).toBe(201);
    expect(made.body.name).toBe('mine');
    expect((await app.request('GET', '/v1/api/watches', { key: apiKey })).body.watches.map((w: { name: string }) => w.name)).toEqual(['mine']);
    const other = await app.workspace();
    const path = `/v1/api/watches/${made.body.watchId}`;
    expect((await app.request('GET', path, { key: other.apiKey })).status).toBe(404);
    expect((await app.request('POST', `${path}/resume`, { key: other.apiKey, body: {} })).status).toBe(404);
    expect((await app.request('DELETE', path, { key: other.apiKey })).status).toBe(404);
    expect((await app.request('GET', '/v1/api/watches', { key: other.apiKey })).body.watches).toEqual([]);
    expect((await app.request('DELETE', path, { key: apiKey })).body).toEqual({ deleted: true });
    expect((await app.request('GET', path, { key: apiKey })).status).toBe(404);
  });

  it('delivers each new release\'s matching changes signed and charged, pauses a watch its balance cannot pay, and resumes it', async () => {
    const dirs = await writeReleasePair(await tempDir('watches'));
    await importRelease(app.services.store, { dir: dirs.first });
    app.services.companies.changed();

    const rich = await app.workspace();
    const byCnpj = await create(rich.apiKey, { name: 'customers', cnpjs: [cnpj.closed, cnpj.moved, cnpj.same] });
    expect(byCnpj.status, JSON.stringify(byCnpj.body)).toBe(201);
    expect(byCnpj.body).toMatchObject({ name: 'customers', cnpjs: 3, status: 'active', kinds: expect.arrayContaining(['opened', 'status']) });
    expect(byCnpj.body).not.toHaveProperty('webhook');
    const poor = await app.workspace();
    const openings = await create(poor.apiKey, { name: 'openings in RJ', filters: { state: 'RJ', cnaes: ['5611201'] }, kinds: ['opened'] });
    expect(openings.status).toBe(201);
    // The poor workspace spends all it has first.
    await app.services.credits.debit(poor.workspaceId, await balance(poor.apiKey), 'test', 'spent elsewhere');
    const richBefore = await balance(rich.apiKey);

    await importRelease(app.services.store, { dir: dirs.second });
    app.services.companies.changed();

    const delivery = await eventually(() => received.find((r) => r.body.watchId === byCnpj.body.watchId) ?? false, { timeoutMs: 30_000 });
    expect(delivery.valid).toBe(true);
    expect(delivery.headers['prospecta-delivery']).toEqual(expect.any(String));
    expect(delivery.body).toMatchObject({ type: 'registry.changes', release: '2026-11', previousRelease: '2026-10', part: 1, parts: 1, at: expect.any(String) });
    expect(delivery.body).not.toHaveProperty('jobId');
    const kinds = delivery.body.changes.map((c: { cnpj: string; kind: string }) => `${c.cnpj} ${c.kind}`);
    expect(kinds).toEqual([`${cnpj.closed} status`, `${cnpj.moved} activity`, `${cnpj.moved} address`, `${cnpj.moved} contact`]);
    expect(await balance(rich.apiKey)).toBe(richBefore - 4);
    const ledger = await app.request('GET', '/v1/api/credits/ledger?operation=watchDelivery', { key: rich.apiKey });
    expect(ledger.body.movements).toMatchObject([{ amount: -4, operation: 'watchDelivery' }]);
    const seen = await eventually(async () => {
      const got = await app.request('GET', `/v1/api/watches/${byCnpj.body.watchId}`, { key: rich.apiKey });
      return got.body.lastDelivery && got.body;
    });
    expect(seen.lastDelivery).toMatchObject({ release: '2026-11', changes: 4 });

    // The poor workspace's watch paused, nothing sent to it, nothing charged.
    const paused = await eventually(async () => {
      const got = await app.request('GET', `/v1/api/watches/${openings.body.watchId}`, { key: poor.apiKey });
      return got.body.status === 'paused' && got.body;
    });
    expect(paused.pausedReason).toBe('insufficient_credits');
    expect(received.filter((r) => r.body.watchId === openings.body.watchId)).toEqual([]);
    expect(await balance(poor.apiKey)).toBe(0);

    await app.services.credits.credit(poor.workspaceId, 5, 'grant', 'topped up');
    const resumed = await app.request('POST', `/v1/api/watches/${openings.body.watchId}/resume`, { key: poor.apiKey, body: {} });
    expect(resumed.body).toMatchObject({ status: 'active' });
    expect(resumed.body).not.toHaveProperty('pausedReason');
    const missed = await eventually(() => received.find((r) => r.body.watchId === openings.body.watchId) ?? false, { timeoutMs: 30_000 });
    expect(missed.valid).toBe(true);
    expect(missed.body.changes.map((c: { cnpj: string; kind: string }) => [c.cnpj, c.kind])).toEqual([[cnpj.opened, 'opened']]);
    expect(await balance(poor.apiKey)).toBe(4);
    // Sent once each, whatever the passes since.
    await eventually(async () => (await app.services.watches.releases.countDocuments({ status: 'pending' })) === 0);
    expect(received.filter((r) => r.body.watchId === byCnpj.body.watchId)).toHaveLength(1);
    expect(received.filter((r) => r.body.watchId === openings.body.watchId)).toHaveLength(1);

    const list = await app.request('GET', '/v1/api/watches', { key: rich.apiKey });
    expect(list.body.watches.map((w: { watchId: string }) => w.watchId)).toEqual([byCnpj.body.watchId]);
  }, 120_000);

  it('sends a release\'s changes in parts of at most 500, each paid before it is sent; resumed, a watch goes on from its part', async () => {
    const docs = Array.from({ length: 501 }, (_, i) => companyDoc(makeCnpj(String(30_000_000 + i * 3))));
    const { apiKey, workspaceId } = await app.workspace();
    const watch = await create(apiKey, { name: 'many', cnpjs: docs.map((d) => d._id) });
    expect(watch.status, JSON.stringify(watch.body)).toBe(201);
    // A trial's 500 credits pay the first part of 500 changes, not the second's one.
    expect(await balance(apiKey)).toBe(500);
    await seedChanges(app, '2026-12', '2026-11', docs.map((doc) => ({ doc, kind: 'opened' })));
    const paused = await eventually(async () => {
      const got = await app.request('GET', `/v1/api/watches/${watch.body.watchId}`, { key: apiKey });
      return got.body.status === 'paused' && got.body;
    }, { timeoutMs: 30_000 });
    expect(paused).toMatchObject({ pausedReason: 'insufficient_credits', lastDelivery: { release: '2026-12', changes: 500 } });
    expect(await balance(apiKey)).toBe(0);
    expect(received.filter((r) => r.body.watchId === watch.body.watchId).map((r) => r.body.part)).toEqual([1]);

    await app.services.credits.credit(workspaceId, 1, 'grant', 'topped up');
    await app.request('POST', `/v1/api/watches/${watch.body.watchId}/resume`, { key: apiKey, body: {} });
    const parts = await eventually(() => {
      const got = received.filter((r) => r.body.watchId === watch.body.watchId);
      return got.length === 2 && got;
    }, { timeoutMs: 30_000 });
    const byPart = parts.sort((a, b) => a.body.part - b.body.part);
    expect(byPart.map((r) => [r.body.part, r.body.parts, r.body.changes.length, r.valid])).toEqual([[1, 2, 500, true], [2, 2, 1, true]]);
    expect(new Set(byPart.map((r) => r.headers['prospecta-delivery'])).size).toBe(2);
    const sent = byPart.flatMap((r) => r.body.changes.map((c: { cnpj: string }) => c.cnpj));
    expect(sent).toEqual(docs.map((d) => d._id).sort());
    expect(await balance(apiKey)).toBe(0);
  }, 60_000);

  it('pauses, charging and sending nothing, a watch whose workspace has no active plan any more (a trial over, its credits unspent)', async () => {
    const doc = companyDoc(makeCnpj('50505050'));
    const { apiKey, workspaceId } = await app.workspace();
    const watch = await create(apiKey, { name: 'after the trial', cnpjs: [doc._id] });
    expect(watch.status).toBe(201);
    // The trial ends with its 500 credits unspent, and the workspace makes no request after.
    await app.services.store
      .collection<{ _id: string; plan: { expiresAt: Date } }>('workspaces')
      .updateOne({ _id: workspaceId }, { $set: { 'plan.expiresAt': new Date(Date.now() - 60_000) } });
    await seedChanges(app, '2027-02', '2027-01', [{ doc, kind: 'status' }]);
    // Read from the store: a request of the workspace would meet the plan gate, which expires the trial's credits.
    const settled = await eventually(async () => {
      const got = await app.services.watches.get(workspaceId, watch.body.watchId);
      return (got?.status === 'paused' || received.some((r) => r.body.watchId === watch.body.watchId)) && got;
    }, { timeoutMs: 30_000 });
    expect(settled).toMatchObject({ status: 'paused', pausedReason: 'plan_required' });
    expect(received.filter((r) => r.body.watchId === watch.body.watchId)).toEqual([]);
    // Its owner sees why, once the workspace has a plan again.
    await app.services.workspaces.setPlan(workspaceId, 'active');
    const seen = await app.request('GET', `/v1/api/watches/${watch.body.watchId}`, { key: apiKey });
    expect(seen.body).toMatchObject({ status: 'paused', pausedReason: 'plan_required' });
    const ledger = await app.services.credits.page(workspaceId, { limit: 10 });
    expect(ledger.movements.map((m) => m.operation)).not.toContain('watchDelivery');
  }, 60_000);

  it('sends nothing more for a deleted watch: a delivery of it not yet sent is dropped and its changes refunded', async () => {
    // A receiver that holds every request until released: a workspace has at most 16 attempts out,
    // so with 18 watches' deliveries due, 2 wait unsent.
    const held: Array<() => void> = [];
    const seen = new Set<string>();
    let holding = true;
    const slow = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        seen.add(JSON.parse(body).watchId);
        if (holding) held.push(() => res.writeHead(200).end());
        else res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`;
      const doc = companyDoc(makeCnpj('40404040'));
      const { apiKey } = await app.workspace();
      const watchIds: string[] = [];
      for (let i = 0; i < 18; i++) {
        const made = await app.request('POST', '/v1/api/watches', { key: apiKey, body: { name: `w${i}`, cnpjs: [doc._id], webhook: { url: slowUrl, secret: SECRET } } });
        expect(made.status).toBe(201);
        watchIds.push(made.body.watchId);
      }
      await seedChanges(app, '2027-01', '2026-12', [{ doc, kind: 'status' }]);
      await eventually(() => held.length === 16, { timeoutMs: 30_000 });
      const { deliveries } = app.services.webhooks;
      const unsent = await eventually(async () => {
        const waiting = await deliveries.find({ jobId: { $in: watchIds }, attempts: 0 }).toArray();
        return waiting.length === 2 && waiting;
      });
      const before = await balance(apiKey);
      const deleted = unsent[0]!.jobId;
      expect((await app.request('DELETE', `/v1/api/watches/${deleted}`, { key: apiKey })).body).toEqual({ deleted: true });
      expect(await balance(apiKey)).toBe(before + 1);
      const ledger = await app.request('GET', '/v1/api/credits/ledger', { key: apiKey });
      expect(ledger.body.movements[0]).toMatchObject({ amount: 1, operation: 'refund:watchDelivery' });

      holding = false;
      for (const answer of held.splice(0)) answer();
      // Every other watch is sent its delivery; the deleted one's never goes.
      const others = watchIds.filter((id) => id !== deleted);
      await eventually(async () => (await deliveries.countDocuments({ jobId: { $in: others }, status: 'delivered' })) === others.length, { timeoutMs: 30_000 });
      expect(others.every((id) => seen.has(id))).toBe(true);
      expect(seen.has(deleted)).toBe(false);
      expect(await deliveries.countDocuments({ jobId: deleted, status: 'pending' })).toBe(0);
    } finally {
      for (const answer of held.splice(0)) answer();
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  }, 60_000);
});
