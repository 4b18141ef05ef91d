/**
 * Issue 20, on SQLite (issue 40): a full disk. SQLite reports a full disk as SQLITE_FULL, which it
 * also gives when the database reaches its `max_page_count`: the test sets that limit on the
 * server's own connection to the pages it has, so the next write needing a page fails as on a full
 * disk. The write is refused with 507 and leaves nothing behind (its transaction is undone), reads
 * go on, and writes are accepted again once there is room.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let app: TestApp;
let key: string;
let dataDir: string;
/** The server's connection, caught as it opens. */
let connection: Database.Database | undefined;

beforeAll(async () => {
  dataDir = await tempDir('full-disk');
  const pragma = Database.prototype.pragma;
  vi.spyOn(Database.prototype, 'pragma').mockImplementation(function (this: Database.Database, source: string, options?: Database.PragmaOptions) {
    if (this.name.startsWith(dataDir) && this.name.endsWith('store.db')) connection = this;
    return pragma.call(this, source, options);
  });
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { dataDir });
  key = (await app.workspace()).apiKey;
});
afterAll(async () => {
  await app.close();
  vi.restoreAllMocks();
});

/** A template whose offering (2,000 characters, 4,000 bytes) needs a page of its own. */
const save = (name: string) => app.request('POST', '/v1/api/prospecting/templates', { key, body: { name, offering: 'é'.repeat(2000) } });
const names = async () => ((await app.request('GET', '/v1/api/prospecting/templates', { key })).body.templates as Array<{ name: string }>).map((t) => t.name).sort();
const fill = () => connection!.pragma(`max_page_count = ${connection!.pragma('page_count', { simple: true }) as number}`);
const makeRoom = () => connection!.pragma('max_page_count = 4294967294');

describe('a full disk', () => {
  it('refuses writes with 507 and writes nothing of them, serves reads, and accepts writes once there is room', async () => {
    expect((await save('before')).status).toBe(201);

    fill();
    const refused = await save('refused');
    expect(refused.status).toBe(507);
    expect(refused.body).toEqual({ error: 'insufficient_storage', message: expect.stringMatching(/disk .* is full/) });
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await names()).toEqual(['before']);
    expect((await app.request('GET', '/v1/api/credits', { key })).status).toBe(200);

    makeRoom();
    expect((await save('after')).status).toBe(201);
    expect(await names()).toEqual(['after', 'before']);
  });

  it('kept every acknowledged write on disk', async () => {
    await app.close();
    app = await startTestApp({}, { dataDir });
    expect(await names()).toEqual(['after', 'before']);
  });
});
