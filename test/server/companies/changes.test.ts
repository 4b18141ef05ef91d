/**
 * Issue 42: changes computed at import and the changes feed, on both stores. A pair of releases
 * written by hand (change-releases.ts) holds one establishment per kind of change; the second
 * import records them, and `POST /api/companies/changes` gives them by CNPJs, kinds and filters,
 * page by page, charged per change. The same release imported again records nothing.
 */
import Database from 'better-sqlite3';
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRelease, type ImportSummary } from '../../../server/receita/import/importer.ts';
import { changeHash } from '../../../server/companies/changes/change-diff.ts';
import { filtersHash } from '../../../server/companies/search-cursors.ts';
import { RecordDecoder } from '../../../server/companies/registry/record-codec.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { mongoForTests } from '../store/mongo-server.ts';
import { cnpj, expectedKinds, writeReleasePair } from './change-releases.ts';

const mongo = await mongoForTests();
if (!mongo.uri) console.log(`changes on MongoDB skipped: ${'reason' in mongo ? mongo.reason : ''}`);

interface Change {
  cnpj: string;
  release: string;
  previousRelease: string;
  kind: string;
  fields: Record<string, any>;
  company: Record<string, unknown>;
}

/** What the second release of the pair changes, counted per kind (each CNPJ's kinds: `expectedKinds`). */
const expectedCounts = { status: 1, name: 2, capital: 2, size: 2, legalNature: 2, address: 1, contact: 1, activity: 1, partners: 1, simples: 1, removed: 1, opened: 1 };

const stores = [{ store: 'embedded', env: () => ({}) }, ...(mongo.uri ? [{ store: 'mongodb', env: () => ({ MONGODB_URI: dbUri() }) }] : [])];
const dbName = `prospecta_changes_${randomUUID().replaceAll('-', '')}`;
function dbUri(): string {
  const base = new URL(mongo.uri!);
  base.pathname = `/${dbName}`;
  return base.toString();
}

describe.each(stores)('registry changes on the $store store', ({ store, env }) => {
  let app: TestApp;
  let key: string;
  let workspaceId: string;
  let second: string;
  let summaries: ImportSummary[];

  const feed = (body: Record<string, unknown>, apiKey = key) => app.request('POST', '/v1/api/companies/changes', { key: apiKey, body });
  async function all(body: Record<string, unknown>): Promise<Change[]> {
    const changes: Change[] = [];
    let cursor: string | null = null;
    do {
      const page = await feed({ ...body, ...(cursor ? { cursor } : {}) });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      changes.push(...page.body.changes);
      cursor = page.body.nextCursor;
    } while (cursor);
    return changes;
  }

  beforeAll(async () => {
    app = await startTestApp(env());
    const dirs = await writeReleasePair(await tempDir('changes'));
    second = dirs.second;
    summaries = [];
    for (const dir of [dirs.first, dirs.second]) {
      summaries.push(await importRelease(app.services.store, { dir }));
      app.services.companies.changed();
    }
    ({ apiKey: key, workspaceId } = await app.workspace());
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    if (store === 'mongodb') {
      const client = await MongoClient.connect(mongo.uri!);
      await client.db(dbName).dropDatabase();
      await client.close();
    }
  });

  it('records each kind of change at import, counted per kind in its summary', () => {
    expect(summaries[0]!.changes).toEqual({});
    expect(summaries[1]!.changes).toEqual(expectedCounts);
  });

  it('gives them by CNPJ, each changed field from and to, charged one credit per change', async () => {
    const res = await feed({ cnpjs: Object.keys(expectedKinds).concat(cnpj.same) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const changes: Change[] = res.body.changes;
    expect(res.body.releases).toEqual({ from: '2026-10', to: '2026-11' });
    expect(res.body.creditsCharged).toBe(changes.length);
    expect(res.body.nextCursor).toBeNull();
    const kinds: Record<string, string[]> = {};
    for (const change of changes) (kinds[change.cnpj] ??= []).push(change.kind);
    expect(kinds).toEqual(expectedKinds);
    // Newest release first, then by CNPJ.
    expect(changes.map((c) => c.cnpj)).toEqual([...changes.map((c) => c.cnpj)].sort());
    const of = (cnpjValue: string, kind: string) => changes.find((c) => c.cnpj === cnpjValue && c.kind === kind)!;
    expect(of(cnpj.closed, 'status')).toMatchObject({
      release: '2026-11',
      previousRelease: '2026-10',
      fields: { registrationStatus: { from: 'ATIVA', to: 'BAIXADA' }, registrationStatusDate: { from: '2015-03-02', to: '2026-10-15' } },
      company: { cnpj: cnpj.closed, name: 'EMPRESA 11111111 LTDA', registrationStatus: 'BAIXADA', city: 'SAO PAULO', state: 'SP' },
    });
    expect(of(cnpj.renamedBranch, 'name').fields).toEqual({ name: { from: 'VELHO NOME LTDA', to: 'NOVO NOME LTDA' } });
    expect(of(cnpj.renamed, 'capital').fields).toEqual({ capital: { from: 1000, to: 5000 } });
    expect(of(cnpj.moved, 'contact').fields).toMatchObject({ phones: { from: [], to: ['1133334444'] }, email: { from: null, to: 'novo@example.com' } });
    expect(of(cnpj.moved, 'address').fields.address.to).toMatchObject({ zipCode: '02002000' });
    expect(of(cnpj.moved, 'activity').fields.mainActivity).toMatchObject({ from: { code: '6201501' }, to: { code: '5611201' } });
    const partners = of(cnpj.partners, 'partners').fields.partners;
    expect(partners.added.map((p: { name: string }) => p.name)).toEqual(['CARLA CHEGA']);
    expect(partners.removed.map((p: { name: string }) => p.name)).toEqual(['ANA VELHA']);
    expect(of(cnpj.partners, 'simples').fields.simples).toMatchObject({ from: { option: true }, to: { option: false } });
    expect(of(cnpj.removed, 'removed')).toMatchObject({ fields: {}, company: { cnpj: cnpj.removed } });

    const credits = await app.request('GET', '/v1/api/credits', { key });
    const fresh = await app.workspace();
    const start = (await app.request('GET', '/v1/api/credits', { key: fresh.apiKey })).body.balance;
    expect(credits.body.balance).toBe(start - changes.length);
  });

  it('filters by kinds and by company search filters, as the establishment is in the latest release', async () => {
    const opened = await feed({ kinds: ['opened'], state: 'RJ', cnaes: ['5611201'] });
    expect(opened.body.changes.map((c: Change) => [c.cnpj, c.kind])).toEqual([[cnpj.opened, 'opened']]);
    expect((await feed({ kinds: ['opened'], state: 'SP' })).body.changes).toEqual([]);
    const closed = await feed({ state: 'SP', registrationStatuses: ['BAIXADA'] });
    expect(closed.body.changes.map((c: Change) => [c.cnpj, c.kind])).toEqual([[cnpj.closed, 'status']]);
    expect((await feed({ since: '2026-10', kinds: ['status'] })).body).toMatchObject({ releases: { from: '2026-10', to: '2026-11' }, changes: [{ cnpj: cnpj.closed }] });
  });

  it('pages with an opaque cursor bound to its filters, and never repeats a change', async () => {
    const whole = (await feed({})).body.changes as Change[];
    expect(whole).toHaveLength(16);
    const paged = await all({ limit: 3 });
    expect(paged).toEqual(whole);
    const first = await feed({ limit: 3 });
    const other = await feed({ limit: 3, kinds: ['name'], cursor: first.body.nextCursor });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_cursor');
    const elsewhere = await app.workspace();
    expect((await feed({ limit: 3, cursor: first.body.nextCursor }, elsewhere.apiKey)).body.error).toBe('invalid_cursor');
  });

  it('refuses an invalid CNPJ and a release never imported, naming them', async () => {
    const bad = await feed({ cnpjs: [cnpj.closed, '11111111000100', 'abc'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_cnpj');
    expect(bad.body.message).toContain('cnpjs[1]');
    expect(bad.body.message).toContain('cnpjs[2]');
    const since = await feed({ since: '2025-01' });
    expect(since.status).toBe(400);
    expect(since.body.message).toContain('2026-11, 2026-10');
    // Each problem only the server can judge, named at once; an invalid CNPJ among others is one of them.
    const all = await feed({ cnpjs: [cnpj.closed, '11111111000100'], since: '2025-01', partnerDocument: 'abc' });
    expect(all.status).toBe(400);
    expect(all.body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('cnpjs[1]') });
    expect(all.body.message).toContain('since "2025-01"');
    expect(all.body.message).toContain('partnerDocument');
    expect((await feed({ cnpjs: [] })).status).toBe(400);
  });

  it('records nothing when the same release is imported again', async () => {
    const again = await importRelease(app.services.store, { dir: second });
    app.services.companies.changed();
    expect(again.changes).toEqual({});
    expect((await feed({})).body.changes).toHaveLength(16);
  });

  it('pages on through the releases its first page read when a newer release is imported in between', async () => {
    const whole = (await feed({})).body.changes as Change[];
    const first = await feed({ limit: 10 });
    expect(first.body.releases).toEqual({ from: '2026-10', to: '2026-11' });
    // The same files as a newer month, imported in it: a release with no changes becomes the latest.
    await importRelease(app.services.store, { dir: second, release: '2026-12', now: new Date(Date.UTC(2026, 11, 2)) });
    app.services.companies.changed();
    expect((await feed({})).body).toMatchObject({ changes: [], releases: { from: '2026-11', to: '2026-12' } });
    const rest = await feed({ limit: 10, cursor: first.body.nextCursor });
    expect(rest.status, JSON.stringify(rest.body)).toBe(200);
    expect(rest.body.releases).toEqual({ from: '2026-10', to: '2026-11' });
    expect([...first.body.changes, ...rest.body.changes]).toEqual(whole);
    expect(rest.body.creditsCharged).toBe(whole.length - 10);
  }, 60_000);

  it('reads on from a cursor an older version gave (its position alone), against the releases as they are now', async () => {
    const whole = await all({ since: '2026-10', limit: 100 });
    const first = await feed({ since: '2026-10', limit: 10 });
    // As the version before pages kept their releases stored it: the position, nothing else.
    const token = `sc1_${'A'.repeat(43)}`;
    const cursors = app.services.store.collection<{ _id: string; [field: string]: unknown }>('searchCursors');
    const last = first.body.changes[9] as Change;
    await cursors.insertOne({
      _id: createHash('sha256').update(token).digest('hex'),
      workspaceId,
      operation: 'searchCompanyChanges',
      filters: filtersHash({ since: '2026-10', limit: 10 }),
      sent: 0,
      position: { release: last.release, cnpj: last.cnpj, kind: last.kind },
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    const rest = await feed({ since: '2026-10', limit: 100, cursor: token });
    expect(rest.status, JSON.stringify(rest.body)).toBe(200);
    expect([...first.body.changes, ...rest.body.changes]).toEqual(whole);
  });
});

describe('registry changes from a release hashed otherwise (by an older version), on the embedded store', () => {
  it("makes that release's hashes again from its documents, and records the same changes, no more", async () => {
    const dataDir = await tempDir('changes-rehash');
    const app = await startTestApp({}, { dataDir });
    try {
      const dirs = await writeReleasePair(await tempDir('changes'));
      await importRelease(app.services.store, { dir: dirs.first });
      app.services.companies.changed();
      const registry = path.join(dataDir, 'registry');
      const file = new Database(path.join(registry, JSON.parse(await readFile(path.join(registry, 'current.json'), 'utf8')).file));
      // What the comparison skips on: a document read back hashes as it did when staged.
      const decoder = new RecordDecoder(JSON.parse(file.prepare("SELECT value FROM meta WHERE name = 'codec'").pluck().get() as string));
      const rows = file.prepare('SELECT d.body, f.hash FROM doc d JOIN facts f USING (k)').raw().all() as Array<[Buffer, number]>;
      expect(rows.length).toBeGreaterThan(5);
      for (const [body, hash] of rows) expect(changeHash(JSON.parse(decoder.decode(body)))).toBe(hash);
      // As an older version left it: no name for its hash, and hashes no current function makes.
      file.prepare("DELETE FROM meta WHERE name = 'change hash'").run();
      file.prepare('UPDATE facts SET hash = k % 1000').run();
      file.close();
      const summary = await importRelease(app.services.store, { dir: dirs.second });
      expect(summary.changes).toEqual(expectedCounts);
    } finally {
      await app.close();
    }
  }, 60_000);
});
