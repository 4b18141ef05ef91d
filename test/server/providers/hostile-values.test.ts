/**
 * Issue 39, finding 6: whatever a provider returns is cleaned before it is stored, charged or
 * answered. Each adapter (Apollo, Hunter's finder and verifier, People Data Labs, BrasilAPI) gets
 * hostile values from its loopback fake, through the real server: a NUL and a lone surrogate, a
 * 900,000-character title, a value past its field's length, `1e309`. A field that fails is left
 * out (never null), is not kept in the enrichment memory, and an answer left with nothing is not
 * paid for. On the embedded store and on MongoDB (when one can be had).
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { brasilApiCompany, startFakeBrasilApi, type FakeBrasilApi } from '../../helpers/fake-brasilapi.ts';
import { startFakeApollo, startFakeHunter, startFakePdl, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';
import { makeCnpj } from '../../helpers/companies.ts';
import { mongoForTests } from '../store/mongo-server.ts';

let apollo: FakeProvider;
let hunter: FakeProvider;
let pdl: FakeProvider;
let brasilApi: FakeBrasilApi;

const HUGE = 'x'.repeat(900_000);
/** A NUL and a lone surrogate, as a provider's JSON text spells them. */
const NUL_AND_SURROGATE = '\\u0000\\ud800';

beforeAll(async () => {
  const world = testWorld();
  [apollo, hunter, pdl, brasilApi] = await Promise.all([startFakeApollo(world), startFakeHunter(world), startFakePdl(world), startFakeBrasilApi()]);
});

afterAll(async () => {
  await Promise.all([apollo.close(), hunter.close(), pdl.close(), brasilApi.close()]);
});

const providerEnv = (): Record<string, string> => ({
  APOLLO_API_KEY: apollo.key,
  APOLLO_URL: apollo.url,
  HUNTER_API_KEY: hunter.key,
  HUNTER_URL: hunter.url,
  HUNTER_VERIFIER_URL: hunter.url,
  PDL_API_KEY: pdl.key,
  PDL_URL: pdl.url,
  BRASILAPI_ENABLED: 'true',
  BRASILAPI_URL: brasilApi.url,
});

function expectClean(memory: string) {
  expect(memory.length).toBeLessThan(50_000);
  expect(memory).not.toMatch(/\\u0000|\\ud800/i);
}

function hostileOn(name: string, open: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>) {
  describe(`hostile values from each provider, on ${name}`, () => {
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
    const balance = async (apiKey: string) => (await app.request('GET', '/v1/api/credits', { key: apiKey })).body.balance as number;
    /** What the workspace's enrichment memory holds, as text: none of the hostile values may be in it. */
    const memoryOf = async (workspaceId: string) => JSON.stringify(await app.services.store.collection('enrichMemory').find({ workspaceId }).toArray());

    it('Apollo: a NUL-and-surrogate first name, a 900,000-character title and 1e309 employees are left out; the rest is charged', async () => {
      const { workspaceId, apiKey } = await app.workspace();
      const before = await balance(apiKey);
      apollo.next({
        rewrite: (json) =>
          json
            .replace('"first_name":"Ana"', `"first_name":"${NUL_AND_SURROGATE}"`)
            .replace('"title":"Head of Sales"', `"title":"${HUGE}"`)
            .replace('"estimated_num_employees":120', '"estimated_num_employees":1e309'),
      });
      const body = { linkedinUrl: 'https://www.linkedin.com/in/ana-souza', providerOrder: ['apollo'], onlyListed: true };
      const res = await enrich(apiKey, body);
      expect(res.status).toBe(200);
      expect(res.body.record).toMatchObject({ fullName: 'Ana Souza', lastName: 'Souza', companyName: 'Acme Software' });
      for (const field of ['firstName', 'title', 'companySize']) {
        expect(res.body.record, field).not.toHaveProperty(field);
        expect(res.body.missing).toContain(field);
      }
      expect(res.body.creditsCharged).toBe(2);
      expect(before - (await balance(apiKey))).toBe(2);
      expectClean(await memoryOf(workspaceId));
      // Asked again, the memory answers without them (and without calling Apollo).
      const calls = apollo.requests.length;
      const again = await enrich(apiKey, body);
      expect(again.body).toMatchObject({ cached: true, creditsCharged: 0 });
      expect(again.body.record).not.toHaveProperty('title');
      expect(apollo.requests.length).toBe(calls);
    });

    it("Hunter's finder: an email with a NUL and spaces is cleaned, a huge position and a NUL phone are left out, a 1e309 score gives no confidence", async () => {
      const { workspaceId, apiKey } = await app.workspace();
      hunter.next({
        rewrite: (json) =>
          json
            .replace('"email":"ana.souza@acme.com.br"', '"email":"  ana.souza@acme.com.br\\u0000 "')
            .replace('"position":"Head of Sales"', `"position":"${HUGE}"`)
            .replace('"phone_number":"+5511988887777"', '"phone_number":"\\u0000"')
            .replace('"score":94', '"score":1e309'),
      });
      const res = await enrich(apiKey, {
        fullName: 'Ana Souza',
        companyDomain: 'acme.com.br',
        goalFields: ['email', 'title', 'phone'],
        providerOrder: ['hunter'],
        onlyListed: true,
      });
      expect(res.status).toBe(200);
      expect(res.body.record.email).toBe('ana.souza@acme.com.br');
      expect(res.body.record).not.toHaveProperty('title');
      expect(res.body.record).not.toHaveProperty('phone');
      expect(res.body.confidence).not.toHaveProperty('email');
      expect(res.body.missing).toEqual(['title', 'phone']);
      expect(res.body.creditsCharged).toBe(1);
      expectClean(await memoryOf(workspaceId));
    });

    it("Hunter's verifier: a status with a NUL is no verdict, and is not paid for", async () => {
      const { apiKey } = await app.workspace();
      const before = await balance(apiKey);
      hunter.next({ rewrite: (json) => json.replace('"status":"valid"', '"status":"valid\\u0000"').replace('"score":96', '"score":1e309') });
      const res = await enrich(apiKey, { email: 'ana.souza@acme.com.br', goalFields: ['emailStatus'], providerOrder: ['hunter_verifier'], onlyListed: true });
      expect(res.status).toBe(200);
      expect(res.body.record).not.toHaveProperty('emailStatus');
      expect(res.body.providers).toEqual([expect.objectContaining({ provider: 'hunter_verifier', outcome: 'not_found', cost: 0 })]);
      expect(await balance(apiKey)).toBe(before);
    });

    it('People Data Labs: hostile fields are left out and the rest charged; an answer with nothing clean is not paid for', async () => {
      const { workspaceId, apiKey } = await app.workspace();
      pdl.next({
        rewrite: (json) =>
          json
            .replace('"first_name":"carla"', `"first_name":"${NUL_AND_SURROGATE}"`)
            .replace('"job_title":"sales manager"', `"job_title":"${HUGE}"`)
            .replace('"job_company_size":"51-200"', `"job_company_size":"${'9'.repeat(41)}"`)
            .replace('"likelihood":9', '"likelihood":1e309'),
      });
      const body = { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes', providerOrder: ['pdl'], onlyListed: true, forceRefresh: true };
      const res = await enrich(apiKey, body);
      expect(res.status).toBe(200);
      expect(res.body.record).toMatchObject({ lastName: 'Mendes', companyDomain: 'globex.com' });
      for (const field of ['firstName', 'title', 'companySize']) expect(res.body.record, field).not.toHaveProperty(field);
      expect(res.body.confidence).toEqual({});
      expect(res.body.creditsCharged).toBe(3);
      expectClean(await memoryOf(workspaceId));

      // Every text a NUL: nothing is left, so nothing is paid for.
      const before = await balance(apiKey);
      pdl.next({ rewrite: (json) => json.replace(/":"[^"]*"/g, '":"\\u0000"').replace(/"(phone_numbers|personal_emails|job_title_levels)":\[[^\]]*\]/g, '"$1":[]') });
      const nothing = await enrich(apiKey, body);
      expect(nothing.status).toBe(200);
      expect(nothing.body.providers).toEqual([expect.objectContaining({ provider: 'pdl', outcome: 'not_found', cost: 0 })]);
      expect(nothing.body.creditsCharged).toBe(0);
      expect(await balance(apiKey)).toBe(before);
    });

    it('BrasilAPI: a company name of a NUL and a lone surrogate and a 900,000-character trade name are left out', async () => {
      const { workspaceId, apiKey } = await app.workspace();
      const cnpj = makeCnpj('39390001');
      brasilApi.add(brasilApiCompany({ cnpj, razao_social: '\u0000\uD800', nome_fantasia: HUGE }));
      const res = await enrich(apiKey, {
        cnpj,
        goalFields: ['companyName', 'tradeName', 'registrationStatus'],
        providerOrder: ['brasilapi'],
        onlyListed: true,
      });
      expect(res.status).toBe(200);
      expect(res.body.record).toMatchObject({ cnpj, registrationStatus: expect.any(String) });
      expect(res.body.record).not.toHaveProperty('companyName');
      expect(res.body.record).not.toHaveProperty('tradeName');
      expect(res.body.missing).toEqual(['companyName', 'tradeName']);
      expectClean(await memoryOf(workspaceId));
    });

    it('BrasilAPI in the CNPJ batch: NULs and lone surrogates are gone from the company answered and charged', async () => {
      const { apiKey } = await app.workspace();
      const before = await balance(apiKey);
      const cnpj = makeCnpj('39390002');
      brasilApi.add(
        brasilApiCompany({
          cnpj,
          razao_social: 'ARROZ\u0000 BOM\uD800 LTDA',
          nome_fantasia: '\u0000\uDC00',
          qsa: [{ ...brasilApiCompany({ cnpj }).qsa![0]!, nome_socio: '\u0000JOAO\uD800 SILVA ' }],
        }),
      );
      const res = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body: { cnpjs: [cnpj] } });
      expect(res.status).toBe(200);
      expect(res.body.results).toHaveLength(1);
      expect(res.body.results[0]).toMatchObject({ cnpj, name: 'ARROZ BOM LTDA', tradeName: null, partners: [expect.objectContaining({ name: 'JOAO SILVA' })] });
      expect(JSON.stringify(res.body)).not.toMatch(/\\u0000|\\ud[89a-f][0-9a-f]{2}/i);
      expect(before - (await balance(apiKey))).toBe(1);
    });
  });
}

hostileOn('the embedded store', async () => ({ env: {}, drop: async () => {} }));

const mongo = await mongoForTests();
if (!mongo.uri && 'reason' in mongo) console.warn(`hostile provider values on MongoDB: skipped, ${mongo.reason}`);
if (mongo.uri) {
  const dbName = `prospecta_test_${randomUUID().replaceAll('-', '')}`;
  const uri = new URL(mongo.uri);
  uri.pathname = `/${dbName}`;
  hostileOn('MongoDB', async () => ({
    env: { MONGODB_URI: uri.toString() },
    async drop() {
      const client = await MongoClient.connect(mongo.uri!);
      await client.db(dbName).dropDatabase();
      await client.close();
      await mongo.stop();
    },
  }));
}
