/**
 * Search pages (decisions.md, "Search pages") through the real server, on the embedded store and
 * on MongoDB (when one can be had): a company search and a people search walked page by page to
 * their end give exactly the rows of one unpaged query, without a repeat, also when rows look
 * alike in everything but their key, after a re-import, across the 1,000-row cap; and any cursor
 * that is not this search's own is 400 `invalid_cursor`.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../server/companies/company-record.ts';
import { personDocument, type PersonRecord } from '../../server/people/people.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { companyDoc, makeCnpj, partner } from '../helpers/companies.ts';
import { startFakeApollo, syntheticWorld, type FakeProvider } from '../helpers/fake-providers.ts';
import { isFerretDb, mongoForTests } from './store/mongo-server.ts';

const bakery = { code: '1091102', description: 'Fabricação de produtos de padaria e confeitaria com predominância de produção própria' };

/**
 * A bakery for each of `roots` company roots, and for every tenth a twin in all but its CNPJ (a
 * branch): 330 for 300 roots. Names repeat every 40 roots, so "PADARIA 20" is 2 rows per 40 roots.
 */
function bakeries(roots: number): CompanyDoc[] {
  const docs: CompanyDoc[] = [];
  for (let i = 0; i < roots; i++) {
    const root = String(10_000_000 + i * 7);
    docs.push(companyDoc(makeCnpj(root), { name: `PADARIA ${i % 40} LTDA`, mainActivity: bakery, partners: [partner({ name: `DONO ${i}`, document: `***${String(100000 + i)}**`, qualification: 'Sócio-Administrador' })] }));
    if (i % 10 === 0) docs.push(companyDoc(makeCnpj(root, '0002'), { name: `PADARIA ${i % 40} LTDA`, mainActivity: bakery, partners: [partner({ name: `DONO ${i}`, document: `***${String(100000 + i)}**`, qualification: 'Sócio-Administrador' })] }));
  }
  return docs;
}

function person(i: number): PersonRecord {
  return {
    name: `Pessoa ${i}`,
    firstName: null, lastName: null,
    title: 'Head of Sales', seniority: 'head', department: 'sales',
    email: `p${i}@lista.example`, emailStatus: 'verified', phone: null, linkedinUrl: null,
    company: 'Lista SA', domain: 'lista.example', industry: null, companySize: null, companyLocation: null,
    location: null, country: null, revenueRange: null, skills: [], technologies: [], languages: [],
  };
}

interface Env {
  app: TestApp;
  apollo: FakeProvider;
  key: string;
  workspaceId: string;
}

async function walk(env: Env, path: string, body: Record<string, unknown>, key = env.key) {
  const rows: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: any } = await env.app.request('POST', path, { key, body: { ...body, ...(cursor ? { cursor } : {}) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    rows.push(...res.body.results);
    cursor = res.body.nextCursor;
    pages++;
    expect(pages).toBeLessThan(200);
  } while (cursor);
  return { rows, pages };
}

const balance = async (env: Env, key = env.key) => (await env.app.request('GET', '/v1/api/credits', { key })).body.balance as number;

/**
 * `long`: the walks over a whole re-import and to the 1,000-row cap, which FerretDB (filtering
 * most of each query in Go after reading the collection) takes minutes over; a timed-out walk
 * then goes on loading the server under the next tests. They run on the embedded store and on a
 * real mongod (mongodb-memory-server), not on FerretDB, which also gets fewer bakeries (`roots`).
 */
function pagesOn(name: string, open: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>, { long = true, roots = 300 } = {}) {
  const itLong = long ? it : it.skip;
  const companies = roots + Math.ceil(roots / 10);
  const twins = 2 * Math.ceil((roots - 20) / 40);
  describe(`search pages on ${name}`, () => {
    let env: Env;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const apollo = await startFakeApollo(syntheticWorld(130));
      const store = await open();
      drop = store.drop;
      const app = await startTestApp({
        ...store.env,
        APOLLO_API_KEY: apollo.key,
        APOLLO_URL: apollo.url,
        APOLLO_RATE_PER_SECOND: '1000',
        APOLLO_RATE_PER_MINUTE: '100000',
      });
      await app.services.store.collection('cnaes').insertOne({ _id: bakery.code, description: bakery.description } as never);
      await app.services.store.collection<CompanyDoc>('companies').bulkWrite(bakeries(roots).map((document) => ({ insertOne: { document } })));
      const ws = await app.workspace('active');
      await app.services.credits.credit(ws.workspaceId, 100_000, 'grant', 'tests');
      await app.services.people.upsert(Array.from({ length: 57 }, (_, i) => personDocument(ws.workspaceId, 'lista', person(i))));
      env = { app, apollo, key: ws.apiKey, workspaceId: ws.workspaceId };
    }, 60_000);

    afterAll(async () => {
      await env?.app.close();
      await env?.apollo.close();
      await drop?.();
    });

    it('walks a company search of many pages to its end: the rows of one unpaged query, none repeated, each page charged', async () => {
      const before = await balance(env);
      const { rows, pages } = await walk(env, '/v1/api/companies/search', { industry: 'padaria', limit: 20 });
      const unpaged = await env.app.services.companies.search({ industry: 'padaria' }, 5000);
      expect(unpaged.companies.length).toBe(companies);
      expect(rows.map((r) => r.cnpj)).toEqual(unpaged.companies.map((c) => c.cnpj));
      expect(new Set(rows.map((r) => r.cnpj)).size).toBe(rows.length);
      expect(pages).toBe(Math.ceil(companies / 20));
      expect(before - (await balance(env))).toBe(companies);
    }, 60_000);

    it('takes cursor: null as the first page (issue 39), for companies and people alike', async () => {
      for (const [path, filters] of [
        ['/v1/api/companies/search', { industry: 'padaria', limit: 5 }],
        ['/v1/api/sourcing/people', { sourceOrder: ['lists'], jobTitle: 'Head of Sales', limit: 5 }],
      ] as const) {
        const absent = await env.app.request('POST', path, { key: env.key, body: filters });
        const nulled = await env.app.request('POST', path, { key: env.key, body: { ...filters, cursor: null } });
        expect(nulled.status, JSON.stringify(nulled.body)).toBe(200);
        expect(nulled.body.results).toEqual(absent.body.results);
        expect(typeof nulled.body.nextCursor).toBe('string');
        // Its cursor leads on as any first page's does.
        const second = await env.app.request('POST', path, { key: env.key, body: { ...filters, cursor: nulled.body.nextCursor } });
        expect(second.status).toBe(200);
      }
    });

    it('keeps rows that tie on everything but their key apart across pages (twins at every page size)', async () => {
      for (const limit of [1, 3, 7]) {
        const { rows } = await walk(env, '/v1/api/companies/search', { name: 'padaria 20', limit });
        const expected = (await env.app.services.companies.search({ name: 'padaria 20' }, 5000)).companies.map((c) => c.cnpj);
        expect(expected.length).toBe(twins);
        expect(rows.map((r) => r.cnpj)).toEqual(expected);
      }
    }, 60_000);

    itLong('goes on after a re-import without repeating or skipping a row', async () => {
      const first = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { industry: 'padaria', limit: 20 } });
      const second = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { industry: 'padaria', limit: 20, cursor: first.body.nextCursor } });
      // The release is imported again: every document replaced by its new version.
      const docs = bakeries(roots).map((doc) => ({ ...doc, importRun: 'again' }));
      await env.app.services.store.collection<CompanyDoc>('companies').bulkWrite(docs.map((d) => ({ replaceOne: { filter: { _id: d._id }, replacement: d } })));
      const rest = [];
      let cursor = second.body.nextCursor;
      while (cursor) {
        const res = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { industry: 'padaria', limit: 20, cursor } });
        expect(res.status).toBe(200);
        rest.push(...res.body.results);
        cursor = res.body.nextCursor;
      }
      const all = [...first.body.results, ...second.body.results, ...rest].map((r) => r.cnpj);
      expect(all).toEqual(docs.map((d) => d._id).sort());
    }, 60_000);

    itLong('stops at 1,000 rows per search', async () => {
      const extra = Array.from({ length: 720 }, (_, i) => companyDoc(makeCnpj(String(20_000_000 + i)), { name: `FORNO ${i} LTDA`, mainActivity: bakery }));
      await env.app.services.store.collection<CompanyDoc>('companies').bulkWrite(extra.map((document) => ({ insertOne: { document } })));
      const { rows, pages } = await walk(env, '/v1/api/companies/search', { industry: 'padaria', limit: 20 });
      expect(rows.length).toBe(1000);
      expect(pages).toBe(50);
      await env.app.services.store.collection<CompanyDoc>('companies').deleteMany({ _id: { $in: extra.map((d) => d._id) } });
    }, 120_000);

    it('walks a people search over a list and Apollo (its own pagination) to the end, merging nobody twice', async () => {
      const { rows } = await walk(env, '/v1/api/sourcing/people', { sourceOrder: ['lists', 'apollo'], jobTitle: 'Head of Sales', limit: 9 });
      const list = rows.filter((r) => r.source === 'lists');
      const fromApollo = rows.filter((r) => r.source === 'apollo');
      expect(list.length).toBe(57);
      expect(fromApollo.length).toBe(130);
      expect(new Set(rows.map((r) => r.email ?? r.linkedinUrl)).size).toBe(rows.length);
      // Apollo was paged with its own page and per_page, never asked for the same page twice.
      const asked = env.apollo.requests.filter((r) => r.path.endsWith('/api_search')).map((r) => (r.body as { page: number }).page);
      expect(asked.length).toBeGreaterThan(1);
      expect(new Set(asked).size).toBeGreaterThan(1);
    }, 60_000);

    it('walks the registry partners page by page, one row per person and company root', async () => {
      const { rows } = await walk(env, '/v1/api/sourcing/people', { sourceOrder: ['receita_federal'], industry: 'padaria', limit: 7 });
      expect(rows.length).toBe(roots);
      expect(new Set(rows.map((r) => r.name)).size).toBe(roots);
    }, 60_000);

    it('refuses a cursor that is cut, changed, forged, expired, for other filters or from another workspace', async () => {
      const body = { industry: 'padaria', limit: 5 };
      const { body: page } = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body });
      const cursor: string = page.nextCursor;
      const other = await env.app.workspace('active');
      const flip = cursor.slice(0, -1) + (cursor.endsWith('A') ? 'B' : 'A');
      const tries: Array<[string, unknown, string?]> = [
        ['cut', { ...body, cursor: cursor.slice(0, -3) }],
        ['changed', { ...body, cursor: flip }],
        ['forged', { ...body, cursor: 'sc1_' + 'x'.repeat(43) }],
        ['garbage', { ...body, cursor: '{"after":"00000000000000"}' }],
        ['other filters', { industry: 'padaria', city: 'Curitiba', limit: 5, cursor }],
        ['another workspace', { ...body, cursor }, other.apiKey],
      ];
      for (const [why, sent, key] of tries) {
        const res = await env.app.request('POST', '/v1/api/companies/search', { key: key ?? env.key, body: sent });
        expect(res.status, why).toBe(400);
        expect(res.body.error, why).toBe('invalid_cursor');
      }
      // Null is the first page, as the schema says (issue 43), for both searches.
      const first = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { ...body, cursor: null } });
      expect(first.status).toBe(200);
      expect(first.body.results).toEqual(page.results);
      expect((await env.app.request('POST', '/v1/api/sourcing/people', { key: env.key, body: { cursor: null } })).status).toBe(200);
      // A company cursor is no people cursor.
      const people = await env.app.request('POST', '/v1/api/sourcing/people', { key: env.key, body: { cursor } });
      expect(people.body.error).toBe('invalid_cursor');
      // The same cursor again gives the same page; a different page size is the same search.
      const again = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { ...body, limit: 3, cursor } });
      expect(again.status).toBe(200);
      const once = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { ...body, limit: 3, cursor } });
      expect(once.body.results).toEqual(again.body.results);
      // Expired: past its time it is refused even before the store's sweep removes it.
      await env.app.services.store.collection('searchCursors').updateMany({}, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const expired = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { ...body, cursor } });
      expect(expired.body.error).toBe('invalid_cursor');
    }, 60_000);

    it('gives a valid cursor for at least an hour', async () => {
      const { body: page } = await env.app.request('POST', '/v1/api/companies/search', { key: env.key, body: { industry: 'padaria', limit: 5 } });
      const doc = await env.app.services.store.collection<{ _id: string; expiresAt: Date }>('searchCursors').findOne({ workspaceId: env.workspaceId, sent: 5 } as never, { sort: { expiresAt: -1 } });
      expect(page.nextCursor).toMatch(/^sc1_/);
      expect(doc!.expiresAt.getTime() - Date.now()).toBeGreaterThan(3600_000);
    });
  });
}

pagesOn('the embedded store', async () => ({ env: {}, drop: async () => {} }));

const mongo = await mongoForTests();
if (!mongo.uri && 'reason' in mongo) console.warn(`search pages on MongoDB: skipped, ${mongo.reason}`);
if (mongo.uri) {
  const dbName = `prospecta_test_${randomUUID().replaceAll('-', '')}`;
  const uri = new URL(mongo.uri);
  uri.pathname = `/${dbName}`;
  const ferret = await isFerretDb(mongo.uri);
  if (ferret) console.warn('search pages on FerretDB: the re-import and 1,000-row walks are skipped (minutes on FerretDB); they run on the embedded store and a real mongod');
  pagesOn(ferret ? 'MongoDB (FerretDB)' : 'MongoDB', async () => ({
    env: { MONGODB_URI: uri.toString() },
    async drop() {
      const client = await MongoClient.connect(mongo.uri!);
      await client.db(dbName).dropDatabase();
      await client.close();
      await mongo.stop();
    },
  }), { long: !ferret, roots: ferret ? 100 : 300 });
}
