/**
 * Issue 20: a full disk. ENOSPC is injected at the file layer (the FileHandle methods the store
 * writes with): the write that hits it still lands, on the space its ballast gives back, then
 * writes are refused with 507 while reads go on, and they are accepted again once space returns.
 */
import { existsSync } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let app: TestApp;
let key: string;
let dataDir: string;

/**
 * The simulated disk: while full, the ballast's room is all there is, so a journal append fails
 * until the ballast is deleted, and writing the ballast again fails until space returns.
 */
const disk = { full: false };
const noSpace = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

beforeAll(async () => {
  dataDir = await tempDir('full-disk');
  const probe = await open(join(dataDir, 'probe'), 'w');
  const FileHandle = Object.getPrototypeOf(probe) as { appendFile: (...args: unknown[]) => Promise<void>; writeFile: (...args: unknown[]) => Promise<void> };
  await probe.close();
  for (const method of ['appendFile', 'writeFile'] as const) {
    const real = FileHandle[method];
    vi.spyOn(FileHandle, method).mockImplementation(function (this: unknown, ...args: unknown[]) {
      if (disk.full && (method === 'writeFile' || existsSync(join(dataDir, 'space-reserve')))) return Promise.reject(noSpace());
      return real.apply(this, args);
    });
  }
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { dataDir });
  key = (await app.workspace()).apiKey;
});
afterAll(async () => {
  await app.close();
  vi.restoreAllMocks();
});

const save = (name: string) => app.request('POST', '/v1/api/prospecting/templates', { key, body: { name, offering: 'x' } });
const names = async () => ((await app.request('GET', '/v1/api/prospecting/templates', { key })).body.templates as Array<{ name: string }>).map((t) => t.name).sort();

describe('a full disk', () => {
  it('keeps a ballast beside the data', async () => {
    expect(await readdir(dataDir)).toContain('space-reserve');
  });

  it('acknowledges the write that filled it, refuses later writes with 507, serves reads, and recovers', async () => {
    expect((await save('before')).status).toBe(201);

    // The disk fills: the next append fails, and lands once the ballast is given back.
    disk.full = true;
    const filling = await save('the write that filled the disk');
    expect(filling.status).toBe(201);
    expect(await readdir(dataDir)).not.toContain('space-reserve');

    const refused = await save('refused');
    expect(refused.status).toBe(507);
    expect(refused.body).toEqual({ error: 'insufficient_storage', message: expect.stringMatching(/disk .* is full/) });
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await names()).toEqual(['before', 'the write that filled the disk']);
    expect((await app.request('GET', '/v1/api/credits', { key })).status).toBe(200);

    // Space returns: within a few seconds the ballast is written again and writes are accepted.
    disk.full = false;
    await eventually(async () => expect((await save('after')).status).toBe(201), { message: 'writes to be accepted again' });
    expect(await readdir(dataDir)).toContain('space-reserve');
    expect(await names()).toEqual(['after', 'before', 'the write that filled the disk']);
  });

  it('kept every acknowledged write on disk', async () => {
    await app.close();
    app = await startTestApp({}, { dataDir });
    expect(await names()).toEqual(['after', 'before', 'the write that filled the disk']);
  });
});
