/**
 * The MongoDB-wire server going away and coming back, and a MONGODB_URI that leads nowhere: the
 * server answers 503 `store_unavailable` with Retry-After meanwhile (never a 500) and recovers by
 * itself; it refuses to start on a wrong URI with one line naming it.
 */
import { describe, expect, inject, it } from 'vitest';
import { startTestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { freePort, startOwnFerretDb } from '../../helpers/ferretdb.ts';
import { startServer } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const ferretdbBin = inject('ferretdbBin');

describe('the MongoDB store when its server fails', () => {
  it('refuses to start on a MONGODB_URI where nothing answers, with one line naming it', async () => {
    const port = await freePort();
    const uri = `mongodb://ops:secret@127.0.0.1:${port}/prospecta`;
    const failure = await startServer({ MONGODB_URI: uri, DATA_DIR: await tempDir('wrong-uri') }).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(failure).not.toBeNull();
    const lines = failure!.split('\n').filter((line) => line.startsWith('prospecta:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`MONGODB_URI mongodb://ops:***@127.0.0.1:${port}/prospecta cannot be used`);
    expect(failure).not.toContain('secret');
    expect(failure).not.toMatch(/\n\s+at /);
  });

  it.skipIf(!ferretdbBin)('answers 503 store_unavailable with Retry-After while FerretDB is down, and recovers when it returns', async () => {
    const ferret = await startOwnFerretDb(ferretdbBin!);
    const app = await startTestApp({ MONGODB_URI: ferret.uri, KEY_CACHE_SECONDS: '0' });
    try {
      const { apiKey } = await app.workspace();
      expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(200);

      await ferret.stop();
      const down = await app.request('GET', '/v1/api/credits', { key: apiKey });
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ error: 'store_unavailable' });
      expect(down.headers.get('retry-after')).toBe('5');

      await ferret.start();
      await eventually(async () => (await app.request('GET', '/v1/api/credits', { key: apiKey })).status === 200, {
        message: 'the server to answer again once FerretDB is back',
        timeoutMs: 30_000,
      });
    } finally {
      await app.close();
    }
  });
});
