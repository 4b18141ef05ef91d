/**
 * Two server processes (dist/server.mjs) on one MongoDB-wire database and one Redis, as a
 * deployment behind a load balancer runs them: charged calls spread over both never overdraw and
 * leave one ledger chain; an Idempotency-Key sent to both runs once; a key revoked on one is
 * refused by the other from the moment the revocation answers; the rate limit and a provider's
 * throttle are one budget; a stream resumed on the instance that does not hold it gets 204.
 *
 * FerretDB (CI's server) takes a lock document per conditional update, so counts stay small and
 * waits generous.
 */
import { createParser } from 'eventsource-parser';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CompanyDoc } from '../../server/companies/company-record.ts';
import { companyDoc, makeCnpj } from '../helpers/companies.ts';
import { startFakeHunter, testWorld, type FakeProvider } from '../helpers/fake-providers.ts';
import { commandHere, workspaceHere } from '../helpers/commands.ts';
import { startServer, type ServerProcess } from '../helpers/processes.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { dropDatabase, mongoForTests, throwawayDatabaseName } from './store/mongo-server.ts';

const mongo = await mongoForTests();
const redisUrl = inject('redisUrl');
const missing = [!mongo.uri && ('reason' in mongo ? mongo.reason : 'no MongoDB-wire server'), !redisUrl && 'no Redis (see the first lines of this run)'].filter(Boolean);
if (missing.length) {
  if (process.env.CI === 'true') throw new Error(`several instances: ${missing.join('; ')}`);
  console.log(`several instances skipped: ${missing.join('; ')}`);
}

/** The names and ids of a stream's events. */
function eventsOf(text: string): Array<{ event: string; id: string }> {
  const events: Array<{ event: string; id: string }> = [];
  createParser({ onEvent: (e) => events.push({ event: e.event ?? 'message', id: e.id ?? '' }) }).feed(text);
  return events;
}

/**
 * Per key and minute, on both instances together; each test has a key of its own. Low enough that
 * the rate-limit test's requests fit well within the minute on a slow machine.
 */
const RATE_LIMIT = 40;
const cnpjs = Array.from({ length: 3 }, (_, i) => makeCnpj(String(41_000_000 + i)));

describe.skipIf(missing.length > 0)('two server processes on one MongoDB database and one Redis', () => {
  const dbName = throwawayDatabaseName();
  let uri: string;
  let env: Record<string, string>;
  let hunter: FakeProvider;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    const base = new URL(mongo.uri!);
    base.pathname = `/${dbName}`;
    uri = base.toString();
    const client = await MongoClient.connect(uri);
    try {
      await client.db(dbName).collection<CompanyDoc>('companies').insertMany(cnpjs.map((cnpj) => companyDoc(cnpj)));
    } finally {
      await client.close();
    }
    // A provider that refuses more than 4 calls a second or 2 at once (with 150 ms of slack for a busy machine).
    hunter = await startFakeHunter(testWorld(), { perSecond: 4, maxConcurrent: 2, slackMs: 150 });
    hunter.latencyMs = 100;
    env = {
      MONGODB_URI: uri,
      REDIS_URL: redisUrl!,
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      // Without the announcement through Redis, a revoked key would be served from the other's cache for an hour.
      KEY_CACHE_SECONDS: '3600',
      HUNTER_API_KEY: hunter.key,
      HUNTER_VERIFIER_URL: hunter.url,
      HUNTER_VERIFIER_RATE_PER_SECOND: '4',
      HUNTER_VERIFIER_MAX_CONCURRENT: '2',
    };
    [a, b] = await Promise.all([startServer({ ...env, DATA_DIR: await tempDir('inst-a') }), startServer({ ...env, DATA_DIR: await tempDir('inst-b') })]);
  }, 120_000);

  afterAll(async () => {
    for (const server of [a, b]) {
      if (!server) continue;
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await hunter?.close();
    if (uri) await dropDatabase(mongo.uri!, dbName);
  });

  /** A workspace of its own (its own rate-limit bucket), made by the CLI's commands, with `credits` to spend. */
  const workspace = (credits: number) => workspaceHere(env, 'instances', credits);

  async function call(server: ServerProcess, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(server.url + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
  }

  /** Every movement, newest first, paged with `before` as a client would, from `server`. */
  async function ledger(server: ServerProcess, key: string) {
    const movements: Array<{ seq: number; amount: number; balanceAfter: number; operation: string }> = [];
    let before: number | null = null;
    do {
      const page = await call(server, 'GET', `/v1/api/credits/ledger?limit=200${before ? `&before=${before}` : ''}`, key);
      expect(page.status, page.text).toBe(200);
      movements.push(...page.body.movements);
      before = page.body.nextBefore;
    } while (before !== null);
    return movements;
  }

  it('concurrent charged calls over both never overdraw, and the ledger stays one chain', async () => {
    const { apiKey } = await workspace(16);
    const calls = 24;
    const statuses = await Promise.all(
      Array.from({ length: calls }, (_, i) => call(i % 2 ? a : b, 'POST', '/v1/api/companies/cnpj/batch', apiKey, { cnpjs: [cnpjs[0]] }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(16);
    expect(statuses.filter((s) => s === 402)).toHaveLength(calls - 16);

    for (const server of [a, b]) expect((await call(server, 'GET', '/v1/api/credits', apiKey)).body.balance).toBe(0);
    const movements = await ledger(b, apiKey);
    expect(movements.filter((m) => m.amount === -1)).toHaveLength(16);
    expect(movements.map((m) => m.seq)).toEqual(movements.map((_, i) => movements.length - i));
    movements.forEach((m, i) => expect(m.balanceAfter).toBe((movements[i + 1]?.balanceAfter ?? 0) + m.amount));
    expect(movements.reduce((sum, m) => sum + m.amount, 0)).toBe(0);
  }, 120_000);

  it('an Idempotency-Key sent to both runs once', async () => {
    const { apiKey } = await workspace(10);
    const body = { cnpjs: cnpjs.slice(0, 2) };
    const headers = { 'Idempotency-Key': 'several-instances-1' };
    const answers = await Promise.all([a, b].map((server) => call(server, 'POST', '/v1/api/companies/cnpj/batch', apiKey, body, headers)));
    // The loser saw the claim running (409, retry) or the answer stored (a replay).
    expect(answers.map((r) => r.status).sort()).toSatisfy((s: number[]) => s[0] === 200 && [200, 409].includes(s[1]!));
    const first = answers.find((r) => r.status === 200 && r.headers.get('idempotent-replayed') !== 'true')!;
    expect(first).toBeDefined();
    for (const server of [a, b]) {
      const again = await call(server, 'POST', '/v1/api/companies/cnpj/batch', apiKey, body, headers);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
    }
    expect((await ledger(a, apiKey)).filter((m) => m.amount < 0).map((m) => m.amount)).toEqual([-2]);
  }, 120_000);

  it('a key revoked on one instance is refused by the other from the moment the revocation answers', async () => {
    const { workspaceId, apiKey } = await workspace(10);
    // B holds the key in its cache (for KEY_CACHE_SECONDS, an hour here).
    expect((await call(b, 'GET', '/v1/api/credits', apiKey)).status).toBe(200);

    // Revoked on A's dashboard, signed in with a one-time link.
    const link = (await commandHere(env, 'dashboard link', { workspace: workspaceId })) as { url: string };
    const token = new URL(link.url).searchParams.get('token')!;
    const signedIn = await fetch(`${a.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: a.url },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith('prospecta_session='))!.split(';')[0]!;
    const session = { Cookie: cookie, Origin: a.url };
    const keys = await fetch(`${a.url}/dashboard/api/keys`, { headers: session }).then((r) => r.json() as Promise<{ keys: Array<{ keyId: string }> }>);
    expect(keys.keys).toHaveLength(1);
    const revoked = await fetch(`${a.url}/dashboard/api/keys/${keys.keys[0]!.keyId}`, { method: 'DELETE', headers: session });
    expect(revoked.status).toBe(200);

    expect((await call(b, 'GET', '/v1/api/credits', apiKey)).status).toBe(401);
    expect((await call(a, 'GET', '/v1/api/credits', apiKey)).status).toBe(401);
  }, 120_000);

  it('the rate limit is one quota for both instances', async () => {
    const { apiKey } = await workspace(10);
    // One request at a time, alternating: both together allow RATE_LIMIT in the minute.
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 2; i++) statuses.push((await call(i % 2 ? a : b, 'GET', '/v1/api/credits', apiKey)).status);
    expect(statuses.slice(0, RATE_LIMIT)).toEqual(Array(RATE_LIMIT).fill(200));
    expect(statuses.slice(RATE_LIMIT)).toEqual([429, 429]);
  }, 120_000);

  it("a provider's throttle is one budget for both instances", async () => {
    const { apiKey } = await workspace(1000);
    const enrich = (server: ServerProcess) =>
      call(server, 'POST', '/v1/api/enrich', apiKey, {
        email: 'ana.souza@acme.com.br',
        goalFields: ['emailStatus'],
        providerOrder: ['hunter_verifier'],
        onlyListed: true,
        maxAge: 0,
      });
    // One call through each first, so that each has its connection to the provider: opening one
    // on a busy machine delays a call started on time until it arrives beside the next one.
    for (const server of [a, b]) expect((await enrich(server)).status).toBe(200);
    hunter.reset();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => enrich(i % 2 ? a : b)));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(hunter.requests).toHaveLength(12);
    // The fake refuses what comes over its limits; none was refused, and no more than 4 came in any second.
    expect(hunter.overLimit).toBe(0);
    expect(hunter.maxPerSecond(150)).toBeLessThanOrEqual(4);
    expect(hunter.maxInFlight).toBeLessThanOrEqual(2);
  }, 120_000);

  it('a stream resumed on the other instance gets 204 unknown, and runs nothing there', async () => {
    const { apiKey } = await workspace(100);
    const first = await call(a, 'POST', '/v1/api/companies/search/stream', apiKey, { state: 'SP', limit: 1 });
    expect(first.status, first.text).toBe(200);
    const events = eventsOf(first.text);
    expect(events.at(-1)!.event).toBe('done');
    const charged = (await ledger(a, apiKey)).length;

    const elsewhere = await call(b, 'POST', '/v1/api/companies/search/stream', apiKey, { state: 'SP', limit: 1 }, { 'Last-Event-ID': events[0]!.id });
    expect(elsewhere.status).toBe(204);
    expect(elsewhere.headers.get('stream-status')).toBe('unknown');
    // On its own instance the same id resumes (here: nothing left after `done`).
    const home = await call(a, 'POST', '/v1/api/companies/search/stream', apiKey, { state: 'SP', limit: 1 }, { 'Last-Event-ID': events.at(-1)!.id });
    expect(home.status).toBe(204);
    expect(home.headers.get('stream-status')).toBe('finished');
    expect(await ledger(b, apiKey)).toHaveLength(charged);
  }, 120_000);
});
