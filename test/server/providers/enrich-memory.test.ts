/**
 * Enrichment memory, order per field and confidence (decisions.md, "Enrichment: never paid
 * twice, order per field") through the real server against loopback Apollo, Hunter and People
 * Data Labs, which record who was asked for what. The memory's tests run on the embedded store
 * and on MongoDB (when one can be had).
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startFakeApollo, startFakeHunter, startFakePdl, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';
import { eventually } from '../../helpers/eventually.ts';
import { latch } from '../../helpers/latch.ts';
import { mongoForTests } from '../store/mongo-server.ts';

let apollo: FakeProvider;
let hunter: FakeProvider;
let pdl: FakeProvider;

const finder = () => hunter.requests.filter((r) => r.path === '/v2/email-finder');
const verifier = () => hunter.requests.filter((r) => r.path === '/v2/email-verifier');
const apolloMatches = () => apollo.requests.filter((r) => r.path.includes('match'));
const calls = () => hunter.requests.length + apollo.requests.length + pdl.requests.length;

function providerEnv(): Record<string, string> {
  return {
    APOLLO_API_KEY: apollo.key,
    APOLLO_URL: apollo.url,
    HUNTER_API_KEY: hunter.key,
    HUNTER_URL: hunter.url,
    HUNTER_VERIFIER_URL: hunter.url,
    PDL_API_KEY: pdl.key,
    PDL_URL: pdl.url,
    PROVIDER_KEY_SECRET: 'a'.repeat(64),
  };
}

beforeAll(async () => {
  const world = testWorld();
  [apollo, hunter, pdl] = await Promise.all([startFakeApollo(world), startFakeHunter(world), startFakePdl(world)]);
});
afterAll(async () => {
  await Promise.all([apollo.close(), hunter.close(), pdl.close()]);
});
beforeEach(() => {
  for (const fake of [apollo, hunter, pdl]) fake.reset();
});

function memoryOn(name: string, open: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>) {
  describe(`enrichment memory on ${name}`, () => {
    let app: TestApp;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const store = await open();
      drop = store.drop;
      app = await startTestApp({ ...providerEnv(), ...store.env });
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await drop?.();
    });

    const enrich = (apiKey: string, body: Record<string, unknown>) => app.request('POST', '/v1/api/enrich', { key: apiKey, body });
    const balance = async (key: string) => (await app.request('GET', '/v1/api/credits', { key })).body.balance as number;
    const ana = { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'] };

    it('charges once, then answers from memory: cached, charged 0, nobody called, also for the same identifiers written otherwise', async () => {
      const { apiKey } = await app.workspace();
      const before = await balance(apiKey);
      const first = await enrich(apiKey, ana);
      expect(first.body).toMatchObject({ cached: false, creditsCharged: 1, record: { email: 'ana.souza@acme.com.br' } });
      expect(finder()).toHaveLength(1);

      const again = await enrich(apiKey, { fullName: '  ANA  SOUZA ', companyDomain: 'https://www.Acme.com.br/', goalFields: ['email'] });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ cached: true, creditsCharged: 0, providers: [], record: { email: 'ana.souza@acme.com.br' }, sources: { email: 'hunter' } });
      expect(again.body.confidence.email).toBeCloseTo(0.94);
      expect(Date.parse(again.body.enrichedAt)).toBeLessThanOrEqual(Date.now());
      expect(Math.abs(Date.parse(again.body.enrichedAt) - Date.parse(first.body.enrichedAt))).toBeLessThan(1000);
      expect(finder()).toHaveLength(1);
      expect(before - (await balance(apiKey))).toBe(1);

      // The credits page reads what the memory saved this month.
      await eventually(async () => {
        const usage = await app.request('GET', '/v1/api/credits/usage', { key: apiKey });
        expect(usage.body.memorySaved).toEqual({ month: new Date().toISOString().slice(0, 7), credits: 1, answers: 1 });
      });
    });

    it('forceRefresh and maxAge 0 run the cascade and charge as usual; maxAge outside 0..31,536,000 is a 400 naming it', async () => {
      const { apiKey } = await app.workspace();
      await enrich(apiKey, ana);
      expect((await enrich(apiKey, { ...ana, forceRefresh: true })).body).toMatchObject({ cached: false, creditsCharged: 1 });
      expect((await enrich(apiKey, { ...ana, maxAge: 0 })).body).toMatchObject({ cached: false, creditsCharged: 1 });
      expect(finder()).toHaveLength(3);
      for (const maxAge of [-1, 31_536_001, 1.5, '60']) {
        const res = await enrich(apiKey, { ...ana, maxAge });
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(/maxAge/);
      }
      // A stored answer older than maxAge is not given: the record is paid for again.
      await app.services.store.collection('enrichMemory').updateMany({}, { $set: { 'fields.email.at': new Date(Date.now() - 120_000) } });
      expect((await enrich(apiKey, { ...ana, maxAge: 60 })).body).toMatchObject({ cached: false, creditsCharged: 1 });
      expect((await enrich(apiKey, { ...ana, maxAge: 60 })).body).toMatchObject({ cached: true, creditsCharged: 0 });
    });

    it('another workspace pays for its own', async () => {
      const one = await app.workspace();
      const two = await app.workspace();
      await enrich(one.apiKey, ana);
      const other = await enrich(two.apiKey, ana);
      expect(other.body).toMatchObject({ cached: false, creditsCharged: 1 });
      expect(finder()).toHaveLength(2);
    });

    it('a stored answer lacking a wanted field fetches that field alone, and charges only it', async () => {
      const { apiKey } = await app.workspace();
      await enrich(apiKey, ana);
      hunter.reset();
      const res = await enrich(apiKey, { ...ana, goalFields: ['email', 'seniority'] });
      expect(res.body).toMatchObject({ cached: false, creditsCharged: 2, record: { email: 'ana.souza@acme.com.br', seniority: 'head' } });
      expect(res.body.sources).toMatchObject({ email: 'hunter', seniority: 'apollo' });
      expect(res.body.providers.map((a: { provider: string }) => a.provider)).toEqual(['apollo']);
      expect(finder()).toHaveLength(0);
      // Both are remembered now.
      expect((await enrich(apiKey, { ...ana, goalFields: ['seniority', 'email'] })).body).toMatchObject({ cached: true, creditsCharged: 0 });
    });

    it('remembers a field nobody has, so asking again calls nobody', async () => {
      const { apiKey } = await app.workspace();
      const body = { fullName: 'Nobody Here', companyDomain: 'acme.com.br', goalFields: ['email'] };
      expect((await enrich(apiKey, body)).body).toMatchObject({ cached: false, creditsCharged: 0, missing: ['email'] });
      const before = calls();
      expect((await enrich(apiKey, body)).body).toMatchObject({ cached: true, creditsCharged: 0, missing: ['email'] });
      expect(calls()).toBe(before);
    });

    it('with the default goal fields, a repeat is cached with the first enrichedAt, and missing lists what nobody found (issue 39)', async () => {
      const { apiKey } = await app.workspace();
      const body = { linkedinUrl: 'https://www.linkedin.com/in/bruno-lima' };
      const first = await enrich(apiKey, body);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ cached: false, record: { fullName: 'Bruno Lima' } });
      expect(first.body.creditsCharged).toBeGreaterThan(0);
      // Bruno has no phone anywhere: a wanted field nobody found.
      expect(first.body.missing).toContain('phone');
      expect(first.body.missing).not.toContain('fullName');
      const before = calls();
      const again = await enrich(apiKey, body);
      expect(again.body).toMatchObject({ cached: true, creditsCharged: 0, providers: [], enrichedAt: first.body.enrichedAt, missing: first.body.missing });
      expect(again.body.record).toEqual(first.body.record);
      expect(again.body).not.toHaveProperty('message');
      expect(calls()).toBe(before);
    });

    it('remembers a not-found only under the identifiers as the providers were sent them, for 7 days at most (issue 39)', async () => {
      const { apiKey } = await app.workspace();
      // Not what the fakes know (they match the profile as written, query and all): nobody finds it.
      const odd = { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes/?x=1', goalFields: ['fullName'] };
      expect((await enrich(apiKey, odd)).body).toMatchObject({ cached: false, creditsCharged: 0, missing: ['fullName'] });
      const asked = calls();
      expect(asked).toBeGreaterThan(0);
      // The same request again is answered from memory...
      expect((await enrich(apiKey, odd)).body).toMatchObject({ cached: true, missing: ['fullName'] });
      expect(calls()).toBe(asked);
      // ...but the canonical profile is another question to the providers: they are asked, and find her.
      const canonical = await enrich(apiKey, { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes', goalFields: ['fullName'] });
      expect(canonical.body).toMatchObject({ cached: false, record: { fullName: 'Carla Mendes' }, missing: [] });
      expect(calls()).toBeGreaterThan(asked);

      // A not-found older than 7 days is asked again, whatever maxAge allows.
      const nobody = { fullName: 'Nobody Here', companyDomain: 'acme.com.br', goalFields: ['email'] };
      await enrich(apiKey, nobody);
      expect((await enrich(apiKey, nobody)).body).toMatchObject({ cached: true, missing: ['email'] });
      const memory = app.services.store.collection<{ _id: string; tried?: Record<string, Record<string, Date>> }>('enrichMemory');
      const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
      for (const doc of await memory.find({}).toArray()) {
        const set: Record<string, Date> = {};
        for (const [asked, fields] of Object.entries(doc.tried ?? {})) for (const field of Object.keys(fields)) set[`tried.${asked}.${field}`] = eightDaysAgo;
        if (Object.keys(set).length > 0) await memory.updateOne({ _id: doc._id }, { $set: set });
      }
      const later = calls();
      expect((await enrich(apiKey, nobody)).body).toMatchObject({ cached: false, missing: ['email'] });
      expect(calls()).toBeGreaterThan(later);
    });

    it('two identical enrichments at the same moment call the providers once and are charged once', async () => {
      const { apiKey } = await app.workspace();
      const before = await balance(apiKey);
      const gate = latch();
      hunter.next({ until: gate.promise });
      const both = Promise.all([enrich(apiKey, ana), enrich(apiKey, ana)]);
      await eventually(() => finder().length === 1);
      gate.open();
      const answers = await both;
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(answers.map((a) => a.body.cached).sort()).toEqual([false, true]);
      expect(finder()).toHaveLength(1);
      expect(before - (await balance(apiKey))).toBe(1);
    });

    const hydrate = (apiKey: string, body: Record<string, unknown>) => app.request('POST', '/v1/api/sourcing/people/hydrate', { key: apiKey, body });
    const anaLead = { name: 'Ana Souza', domain: 'acme.com.br', row: 7 };

    it('hydrate: a person paid for is answered from memory (cached, charged 0, nobody called); forceRefresh and maxAge 0 pay again', async () => {
      const { apiKey } = await app.workspace();
      const before = await balance(apiKey);
      const first = await hydrate(apiKey, { leads: [anaLead] });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ enriched: 1, creditsCharged: 1, results: [{ row: 7, email: 'ana.souza@acme.com.br', enriched: true, cached: false }] });
      const called = calls();

      const again = await hydrate(apiKey, { leads: [{ ...anaLead, name: ' ana  SOUZA', domain: 'https://www.acme.com.br' }] });
      expect(again.body).toMatchObject({ enriched: 1, creditsCharged: 0, results: [{ row: 7, email: 'ana.souza@acme.com.br', enriched: true, cached: true, providers: [] }] });
      expect(again.body.results[0].sources.email).toBe(first.body.results[0].sources.email);
      expect(Math.abs(Date.parse(again.body.results[0].enrichedAt) - Date.parse(first.body.results[0].enrichedAt))).toBeLessThan(1000);
      expect(calls()).toBe(called);
      expect(before - (await balance(apiKey))).toBe(1);

      for (const fresh of [{ forceRefresh: true }, { maxAge: 0 }]) {
        const paid = await hydrate(apiKey, { leads: [anaLead], ...fresh });
        expect(paid.body, JSON.stringify(fresh)).toMatchObject({ creditsCharged: 1, results: [{ cached: false }] });
      }
      expect(calls()).toBeGreaterThan(called);
      const refused = await hydrate(apiKey, { leads: [anaLead], maxAge: -1 });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/maxAge/);
      // Another workspace pays for its own.
      const other = await app.workspace();
      expect((await hydrate(other.apiKey, { leads: [anaLead] })).body).toMatchObject({ creditsCharged: 1, results: [{ cached: false }] });
    });

    it("hydrate: what enrich already paid for is not asked again; only the fields it lacks are fetched", async () => {
      const { apiKey } = await app.workspace();
      expect((await enrich(apiKey, ana)).body).toMatchObject({ creditsCharged: 1, record: { email: 'ana.souza@acme.com.br' } });
      expect(finder()).toHaveLength(1);
      const res = await hydrate(apiKey, { leads: [{ fullName: 'Ana Souza', companyDomain: 'acme.com.br' }] });
      expect(res.body).toMatchObject({ creditsCharged: 1, results: [{ email: 'ana.souza@acme.com.br', seniority: 'head', enriched: true, cached: false }] });
      expect(res.body.results[0].sources).toMatchObject({ email: 'hunter' });
      // The email came from memory: Hunter's finder was not asked again.
      expect(finder()).toHaveLength(1);
      // Now everything is known: the next one is free.
      expect((await hydrate(apiKey, { leads: [{ fullName: 'Ana Souza', companyDomain: 'acme.com.br' }] })).body).toMatchObject({ creditsCharged: 0, results: [{ cached: true }] });
    });

    it('hydrate: the same person twice at the same moment calls the providers once and is charged once', async () => {
      const { apiKey } = await app.workspace();
      const before = await balance(apiKey);
      const gate = latch();
      apollo.next({ until: gate.promise });
      const both = Promise.all([hydrate(apiKey, { leads: [anaLead] }), hydrate(apiKey, { leads: [anaLead] })]);
      await eventually(() => apolloMatches().length === 1);
      gate.open();
      const answers = await both;
      expect(answers.map((a) => a.body.results[0].cached).sort()).toEqual([false, true]);
      expect(apolloMatches()).toHaveLength(1);
      expect(before - (await balance(apiKey))).toBe(1);
    });

    it('hydrate: what could not be charged for (the balance spent meanwhile) is not kept to be given free', async () => {
      const { workspaceId, apiKey } = await app.workspace();
      const gate = latch();
      apollo.next({ until: gate.promise });
      const pending = hydrate(apiKey, { leads: [anaLead] });
      await eventually(() => apolloMatches().length === 1);
      // The balance goes elsewhere while the providers answer.
      await app.services.credits.debit(workspaceId, await balance(apiKey), 'test', 'spent elsewhere');
      gate.open();
      expect((await pending).status).toBe(402);
      await app.services.credits.credit(workspaceId, 10, 'grant', 'more');
      const again = await hydrate(apiKey, { leads: [anaLead] });
      expect(again.body).toMatchObject({ creditsCharged: 1, results: [{ cached: false }] });
    });

    it("keeps what a workspace's own key found, like any other answer", async () => {
      const { workspaceId, apiKey } = await app.workspace();
      pdl.accept('own-pdl-key');
      const set = await app.services.providerKeys.set(workspaceId, 'pdl', 'own-pdl-key');
      expect(set).toBeTruthy();
      const body = { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes', goalFields: ['title'], providerOrder: ['pdl'], onlyListed: true };
      expect((await enrich(apiKey, body)).body).toMatchObject({ cached: false, creditsCharged: 0, sources: { title: 'pdl' } });
      const again = await enrich(apiKey, { ...body, linkedinUrl: 'http://LinkedIn.com/in/Carla-Mendes/?trk=x' });
      expect(again.body).toMatchObject({ cached: true, creditsCharged: 0, sources: { title: 'pdl' } });
      expect(again.body.confidence.title).toBeCloseTo(0.9);
      expect(pdl.requests).toHaveLength(1);
    });
  });
}

memoryOn('the embedded store', async () => ({ env: {}, drop: async () => {} }));

const mongo = await mongoForTests();
if (!mongo.uri && 'reason' in mongo) console.warn(`enrichment memory on MongoDB: skipped, ${mongo.reason}`);
if (mongo.uri) {
  const dbName = `prospecta_test_${randomUUID().replaceAll('-', '')}`;
  const uri = new URL(mongo.uri);
  uri.pathname = `/${dbName}`;
  memoryOn('MongoDB', async () => ({
    env: { MONGODB_URI: uri.toString() },
    async drop() {
      const client = await MongoClient.connect(mongo.uri!);
      await client.db(dbName).dropDatabase();
      await client.close();
      await mongo.stop();
    },
  }));
}

describe('order per field, and confidence', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(providerEnv());
  });
  afterAll(() => app.close());
  const enrich = async (body: Record<string, unknown>) => {
    const { apiKey } = await app.workspace();
    return app.request('POST', '/v1/api/enrich', { key: apiKey, body: { maxAge: 0, ...body } });
  };

  it("each wanted field tries its own order; a provider that gives several is called once; a field's value comes from its own order", async () => {
    const linkedin = 'https://www.linkedin.com/in/ana-souza';
    // PDL first for email and title: one PDL call answers both (and seniority, which follows the default order).
    const one = await enrich({ linkedinUrl: linkedin, goalFields: ['email', 'title', 'seniority'], providerOrder: { email: ['pdl'], title: ['pdl'] } });
    expect(one.status).toBe(200);
    expect(one.body.sources).toMatchObject({ email: 'pdl', title: 'pdl' });
    expect(pdl.requests).toHaveLength(1);

    // Apollo for the email, PDL for the title: both called once, each field from its own first choice.
    for (const fake of [apollo, hunter, pdl]) fake.reset();
    const two = await enrich({ linkedinUrl: linkedin, goalFields: ['email', 'title'], providerOrder: { email: ['apollo'], title: ['pdl'] } });
    expect(two.body.sources).toMatchObject({ email: 'apollo', title: 'pdl' });
    expect(apolloMatches()).toHaveLength(1);
    expect(pdl.requests).toHaveLength(1);
    expect(finder()).toHaveLength(0);
  });

  it('refuses an unknown field or provider by name, in either form', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ emial: ['hunter'] }, /unknown property providerOrder\.emial: did you mean providerOrder\.email\?/],
      [{ email: ['huntr'] }, /providerOrder\.email\[0\] must be one of: .*hunter/],
      [['hunter', 'huntr'], /providerOrder\[1\] must be one of/],
      [{ email: 'hunter' }, /providerOrder/],
    ];
    for (const [providerOrder, message] of cases) {
      const res = await enrich({ email: 'ana.souza@acme.com.br', providerOrder });
      expect(res.status, JSON.stringify(providerOrder)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.message).toMatch(message);
    }
    expect(calls()).toBe(0);
  });

  it("gives each field the provider's own confidence: Hunter's score, a verifier's score, PDL's likelihood", async () => {
    const found = await enrich({ fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true });
    expect(found.body.confidence).toEqual({ email: 0.94 });
    const verified = await enrich({ email: 'ana.souza@acme.com.br', goalFields: ['emailStatus'], providerOrder: ['hunter_verifier'], onlyListed: true });
    expect(verified.body.confidence).toEqual({ emailStatus: 0.96 });
    const person = await enrich({ linkedinUrl: 'https://www.linkedin.com/in/ana-souza', goalFields: ['title'], providerOrder: ['pdl'], onlyListed: true });
    expect(person.body.confidence.title).toBeCloseTo(0.9);
    const apolloOnly = await enrich({ linkedinUrl: 'https://www.linkedin.com/in/ana-souza', goalFields: ['title'], providerOrder: ['apollo'], onlyListed: true });
    expect(apolloOnly.body.confidence).toEqual({});
  });

  it('says which keys would enable which fields when no provider could be tried', async () => {
    const bare = await startTestApp();
    try {
      const { apiKey } = await bare.workspace();
      const res = await bare.request('POST', '/v1/api/enrich', { key: apiKey, body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email', 'phone'] } });
      expect(res.status).toBe(200);
      expect(res.body.message).toMatch(/HUNTER_API_KEY \(hunter\) would give email, phone/);
      expect(res.body.message).toMatch(/APOLLO_API_KEY/);
      expect(res.body.message).toMatch(/PDL_API_KEY/);
    } finally {
      await bare.close();
    }
  });
});
