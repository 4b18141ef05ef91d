/**
 * The embedded store keeps every acknowledged write: across a clean close, a torn last journal
 * line, compactions, and a SIGKILL in the middle of concurrent writes. It refuses to start on a
 * damaged journal, and refuses a second process. Child processes run small scripts bundled
 * with esbuild (they import the store's TypeScript, which Node 20 cannot run directly).
 */
import { spawn } from 'node:child_process';
import { appendFile, mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import type { Store } from '../../../server/store/port.ts';
import { track } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const children = fileURLToPath(new URL('./children', import.meta.url));
let bundles: string;

beforeAll(async () => {
  // Under the repository so the bundles' bare imports (mingo) resolve from its node_modules.
  const cache = join(root, 'node_modules', '.cache', 'prospecta-test');
  await mkdir(cache, { recursive: true });
  bundles = await tempDir('store', { parent: cache });
  await build({
    entryPoints: [join(children, 'write-until-killed.ts'), join(children, 'try-open.ts')],
    outdir: bundles,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
});

const freshDir = () => tempDir('durable');

function runChild(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, [join(bundles, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] }));
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

async function journalFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith('journal-')).sort();
}

interface Note {
  _id: string;
  text: string;
  at?: Date;
  n?: number;
}

describe('embedded store durability', () => {
  it('keeps every write across close and reopen, and rebuilds re-declared indexes', async () => {
    const dir = await freshDir();
    let store: Store = await openEmbeddedStore(dir);
    const notes = () => store.collection<Note>('notes');
    await notes().insertOne({ _id: 'a', text: 'first', at: new Date(1234) });
    await notes().bulkWrite(Array.from({ length: 50 }, (_, n) => ({ insertOne: { document: { _id: `b${n}`, text: 'bulk', n } } })));
    await notes().updateOne({ _id: 'a' }, { $set: { text: 'edited' }, $inc: { n: 50 } });
    await notes().deleteMany({ n: { $lt: 10 } });
    await store.collection<Note>('other').insertOne({ _id: 'o', text: 'elsewhere' });
    const before = await notes().find({}, { sort: { _id: 1 } }).toArray();
    await store.close();

    store = await openEmbeddedStore(dir);
    expect(await notes().find({}, { sort: { _id: 1 } }).toArray()).toEqual(before);
    expect((await notes().findOne({ _id: 'a' }))?.at).toEqual(new Date(1234));
    expect(await store.collection<Note>('other').findOne({ _id: 'o' })).toEqual({ _id: 'o', text: 'elsewhere' });
    await notes().createIndex({ n: 1 }, { unique: true });
    await expect(notes().insertOne({ _id: 'dup', text: 'x', n: 20 })).rejects.toMatchObject({ code: 11000 });
    await store.close();
  });

  it('ignores and cuts off a torn last line, then keeps appending cleanly', async () => {
    const dir = await freshDir();
    let store = await openEmbeddedStore(dir);
    await store.collection<Note>('notes').insertOne({ _id: 'kept', text: 'acknowledged' });
    await store.close();
    const [journal] = await journalFiles(dir);
    await appendFile(join(dir, journal!), '{"c":"notes","put":[{"_id":"torn","te');

    store = await openEmbeddedStore(dir);
    expect(await store.collection<Note>('notes').find({}).toArray()).toEqual([{ _id: 'kept', text: 'acknowledged' }]);
    await store.collection<Note>('notes').insertOne({ _id: 'after', text: 'after the tear' });
    await store.close();

    store = await openEmbeddedStore(dir);
    const ids = (await store.collection<Note>('notes').find({}, { sort: { _id: 1 } }).toArray()).map((n) => n._id);
    expect(ids).toEqual(['after', 'kept']);
    await store.close();
  });

  it('refuses to start on a corrupt line in the middle of a journal, naming the file and line', async () => {
    const dir = await freshDir();
    const store = await openEmbeddedStore(dir);
    for (const _id of ['one', 'two', 'three']) await store.collection<Note>('notes').insertOne({ _id, text: _id });
    await store.close();
    const [journal] = await journalFiles(dir);
    const path = join(dir, journal!);
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[1] = lines[1]!.slice(0, 20) + '#garbage#' + lines[1]!.slice(20);
    await writeFile(path, lines.join('\n'));

    const error = await openEmbeddedStore(dir).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT' });
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain('line 2');
    // The failed start released the lock.
    expect(await readdir(dir)).not.toContain('LOCK');
  });

  it('refuses a second opener, in this process or another, until the first closes', async () => {
    const dir = await freshDir();
    const store = await openEmbeddedStore(dir);
    await expect(openEmbeddedStore(dir)).rejects.toMatchObject({ code: 'STORE_LOCKED', pid: process.pid });

    const refused = JSON.parse(await runChild('try-open.mjs', [dir]));
    expect(refused).toMatchObject({ opened: false, code: 'STORE_LOCKED', pid: process.pid });
    expect(refused.message).toBe(
      `The embedded store in ${dir} is in use by process ${process.pid} (is the server running?). ` +
        'Stop it first, or set MONGODB_URI to share a MongoDB database between processes.',
    );

    await store.close();
    expect(JSON.parse(await runChild('try-open.mjs', [dir]))).toEqual({ opened: true });
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dir = await freshDir();
    const gone = track(spawn(process.execPath, ['-e', '']));
    await new Promise((resolve) => gone.on('close', resolve));
    await writeFile(join(dir, 'LOCK'), `${gone.pid}\n`);
    const store = await openEmbeddedStore(dir);
    expect((await readFile(join(dir, 'LOCK'), 'utf8')).trim()).toBe(String(process.pid));
    await store.close();
    expect(await readdir(dir)).not.toContain('LOCK');
  });

  it('compacts into a snapshot without losing writes made before, during or after it', async () => {
    const dir = await freshDir();
    let store = await openEmbeddedStore(dir, { compactionThresholdBytes: 32 * 1024 });
    const notes = () => store.collection<Note>('notes');
    const expected = new Map<string, Note>();
    for (let round = 0; round < 20; round++) {
      const writes: Array<Promise<unknown>> = [];
      for (let i = 0; i < 25; i++) {
        const doc = { _id: `n${round}-${i}`, text: 'y'.repeat(200), n: round, at: new Date(round) };
        expected.set(doc._id, doc);
        writes.push(notes().insertOne(doc));
      }
      const gone = `n${Math.max(0, round - 1)}-0`;
      expected.delete(gone);
      writes.push(notes().deleteOne({ _id: gone }));
      const changed = `n${round}-1`;
      expected.set(changed, { ...expected.get(changed)!, text: 'changed' });
      writes.push(notes().updateOne({ _id: changed }, { $set: { text: 'changed' } }));
      // Rewriting the previous round's notes leaves superseded versions on disk, which compaction drops.
      for (let i = 2; round > 0 && i < 25; i++) {
        const id = `n${round - 1}-${i}`;
        expected.set(id, { ...expected.get(id)!, text: 'z'.repeat(200) });
        writes.push(notes().updateOne({ _id: id }, { $set: { text: 'z'.repeat(200) } }));
      }
      await Promise.all(writes);
    }
    await store.close();

    const files = await readdir(dir);
    const snapshots = files.filter((name) => name.startsWith('snapshot-'));
    expect(snapshots).toHaveLength(1);
    // Only the journals of the snapshot's generation or later remain.
    const snapshotGeneration = snapshots[0]!.slice('snapshot-'.length);
    for (const journal of await journalFiles(dir)) {
      expect(journal.slice('journal-'.length) >= snapshotGeneration).toBe(true);
    }

    store = await openEmbeddedStore(dir, { compactionThresholdBytes: 32 * 1024 });
    const all = await notes().find({}).toArray();
    expect(new Map(all.map((doc) => [doc._id, doc]))).toEqual(expected);
    await store.close();
  });

  it('compacts for superseded versions, not for a journal of new documents', async () => {
    const dir = await freshDir();
    const store = await openEmbeddedStore(dir, { compactionThresholdBytes: 16 * 1024 });
    const notes = store.collection<Note>('notes');
    const snapshots = async () => (await readdir(dir)).filter((name) => name.startsWith('snapshot-'));
    try {
      // 200 KB of new documents: replaying them costs what loading a snapshot would.
      await notes.bulkWrite(Array.from({ length: 800 }, (_, i) => ({ insertOne: { document: { _id: `n${i}`, text: 'x'.repeat(250), n: i } } })));
      expect(await snapshots()).toEqual([]);
      // Rewriting them leaves 200 KB of superseded versions.
      for (let i = 0; i < 800; i += 100) {
        await notes.bulkWrite(
          Array.from({ length: 100 }, (_, k) => ({ updateOne: { filter: { _id: `n${i + k}` }, update: { $set: { text: 'y'.repeat(250) } } } })),
        );
      }
    } finally {
      await store.close();
    }
    expect(await snapshots()).toHaveLength(1);
  });

  it('makes concurrent writes share fsyncs, and a large bulkWrite one append and one fsync', async () => {
    const dir = await freshDir();
    const store = await openEmbeddedStore(dir);
    const notes = store.collection<Note>('notes');
    const probe = await open(join(dir, 'probe'), 'w');
    const handleType = Object.getPrototypeOf(probe) as { datasync(): Promise<void>; appendFile(data: string): Promise<void> };
    await probe.close();
    const syncs = vi.spyOn(handleType, 'datasync');
    const appends = vi.spyOn(handleType, 'appendFile');
    try {
      await Promise.all(Array.from({ length: 200 }, (_, i) => notes.insertOne({ _id: `c${i}`, text: 'concurrent' })));
      expect(syncs.mock.calls.length).toBeLessThanOrEqual(2);

      syncs.mockClear();
      appends.mockClear();
      await notes.bulkWrite(Array.from({ length: 5000 }, (_, i) => ({ insertOne: { document: { _id: `bulk${i}`, text: 'bulk' } } })));
      expect(appends).toHaveBeenCalledTimes(1);
      expect(syncs).toHaveBeenCalledTimes(1);
    } finally {
      syncs.mockRestore();
      appends.mockRestore();
      await store.close();
    }
  });

  it('after a SIGKILL during concurrent writes and compactions, has every acknowledged write', async () => {
    const dir = await freshDir();
    const child = track(
      spawn(process.execPath, [join(bundles, 'write-until-killed.mjs'), dir, String(16 * 1024)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const inserted: string[] = [];
    const counts = new Map<string, number>();
    let buffered = '';
    const exited = new Promise((resolve) => child.on('close', resolve));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [kind, id, value] = line.split(' ');
        if (kind === 'insert') inserted.push(id!);
        if (kind === 'count') counts.set(id!, Math.max(counts.get(id!) ?? 0, Number(value)));
      }
      if (inserted.length >= 300) child.kill('SIGKILL');
    });
    await exited;
    expect(inserted.length).toBeGreaterThanOrEqual(300);

    const store = await openEmbeddedStore(dir);
    const items = store.collection<{ _id: string }>('items');
    const found = new Set((await items.find({}, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
    expect(inserted.filter((id) => !found.has(id))).toEqual([]);
    for (const [id, value] of counts) {
      const counter = await store.collection<{ _id: string; value: number }>('counters').findOne({ _id: id });
      expect(counter?.value).toBeGreaterThanOrEqual(value);
    }
    await store.close();
  });
});
