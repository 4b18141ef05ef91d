/**
 * The embedded store on SQLite keeps every acknowledged write across a clean close and a SIGKILL
 * in the middle of concurrent writes; a server killed a moment ago, still a zombie, keeps no one
 * out; a second server is refused; a CLI process writes beside a server without losing an update
 * of either; and a file that is not a database stops start-up naming it. Child processes run
 * small scripts bundled with esbuild (they import the store's TypeScript, which Node 20 cannot
 * run directly).
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import { eventually } from '../../helpers/eventually.ts';
import { track } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const children = fileURLToPath(new URL('./children', import.meta.url));
let bundles: string;

beforeAll(async () => {
  // Under the repository so the bundles' bare imports (mingo, better-sqlite3) resolve from its node_modules.
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

/** What a write-until-killed child has acknowledged so far. */
interface Acknowledged {
  inserted: string[];
  counts: Map<string, number[]>;
}

function readAcknowledged(stream: NodeJS.ReadableStream, into: Acknowledged): void {
  let buffered = '';
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      const [kind, id, value] = line.split(' ');
      if (kind === 'insert') into.inserted.push(id!);
      if (kind === 'count') into.counts.set(id!, [...(into.counts.get(id!) ?? []), Number(value)]);
    }
  });
}

const processState = async (pid: number) => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[0];

describe('embedded store durability', () => {
  it('keeps every write across close and reopen', async () => {
    const dir = await freshDir();
    let store = await openEmbeddedStore(dir);
    const notes = store.collection<{ _id: string; at: Date; n: number }>('notes');
    await notes.createIndex({ n: 1 });
    for (let n = 0; n < 20; n++) await notes.insertOne({ _id: `n${n}`, at: new Date(n), n });
    await notes.updateMany({ n: { $gte: 10 } }, { $inc: { n: 100 } });
    await store.close();
    store = await openEmbeddedStore(dir);
    const again = store.collection<{ _id: string; at: Date; n: number }>('notes');
    expect(await again.countDocuments({ n: { $gte: 110 } })).toBe(10);
    expect((await again.findOne({ _id: 'n3' }))?.at).toEqual(new Date(3));
    await store.close();
  });

  it('after a SIGKILL during concurrent writes, has every acknowledged write', async () => {
    const dir = await freshDir();
    const child = track(spawn(process.execPath, [join(bundles, 'write-until-killed.mjs'), dir], { stdio: ['ignore', 'pipe', 'inherit'] }));
    const acknowledged: Acknowledged = { inserted: [], counts: new Map() };
    readAcknowledged(child.stdout, acknowledged);
    const exited = new Promise((resolve) => child.on('close', resolve));
    await eventually(() => expect(acknowledged.inserted.length).toBeGreaterThanOrEqual(300), { message: '300 acknowledged writes' });
    child.kill('SIGKILL');
    await exited;

    const store = await openEmbeddedStore(dir);
    const found = new Set((await store.collection<{ _id: string }>('items').find({}, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
    expect(acknowledged.inserted.filter((id) => !found.has(id))).toEqual([]);
    for (const [id, values] of acknowledged.counts) {
      const counter = await store.collection<{ _id: string; value: number }>('counters').findOne({ _id: id });
      expect(counter?.value).toBeGreaterThanOrEqual(Math.max(...values));
    }
    await store.close();
  });

  it('opens at once after a server is killed whose parent has not reaped it (a zombie)', async () => {
    const dir = await freshDir();
    // The shell starts the writer, prints its pid, then becomes `sleep`, which never reaps it.
    const parent = track(spawn('sh', ['-c', `"${process.execPath}" "${join(bundles, 'write-until-killed.mjs')}" "${dir}" & echo $!; exec sleep 600`], { stdio: ['ignore', 'pipe', 'inherit'] }));
    try {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => (out += chunk));
      await eventually(() => expect(out).toMatch(/^\d+\n.*insert item-0-5\n/s), { message: 'the writer to run' });
      const pid = Number(out.split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      await eventually(async () => expect(await processState(pid)).toBe('Z'), { message: 'the writer to be a zombie' });

      const store = await openEmbeddedStore(dir);
      expect(await store.collection('items').countDocuments({ _id: 'item-0-5' })).toBe(1);
      await store.close();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('refuses a second server, in this process or another, until the first closes; a one-shot command opens beside it', async () => {
    const dir = await freshDir();
    const store = await openEmbeddedStore(dir);
    await expect(openEmbeddedStore(dir)).rejects.toMatchObject({ code: 'STORE_LOCKED' });
    const refused = JSON.parse(await runChild('try-open.mjs', [dir]));
    expect(refused).toEqual({
      opened: false,
      code: 'STORE_LOCKED',
      message: `The embedded store in ${dir} is in use by another server process (is the server running?). Stop it first, or set MONGODB_URI to share a MongoDB database between servers.`,
    });
    const command = await openEmbeddedStore(dir, { oneShot: true });
    await command.close();
    await store.close();
    expect(JSON.parse(await runChild('try-open.mjs', [dir]))).toEqual({ opened: true });
  });

  it('lets a one-shot process and a server write the same documents at once, losing no update of either', async () => {
    const dir = await freshDir();
    const store = await openEmbeddedStore(dir);
    const counters = store.collection<{ _id: string; value: number }>('counters');
    const child = track(spawn(process.execPath, [join(bundles, 'write-until-killed.mjs'), dir, 'one-shot'], { stdio: ['ignore', 'pipe', 'inherit'] }));
    const theirs: Acknowledged = { inserted: [], counts: new Map() };
    readAcknowledged(child.stdout, theirs);
    const exited = new Promise((resolve) => child.on('close', resolve));
    // Both increment counter-0 until the child has done 100 of its writes.
    const ours: number[] = [];
    while (theirs.inserted.length < 100) {
      const after = await counters.findOneAndUpdate({ _id: 'counter-0' }, { $inc: { value: 1 } }, { upsert: true, returnDocument: 'after' });
      ours.push(after!.value);
      await new Promise((resolve) => setImmediate(resolve));
    }
    child.kill('SIGKILL');
    await exited;
    const seen = [...ours, ...(theirs.counts.get('counter-0') ?? [])];
    expect(new Set(seen).size).toBe(seen.length);
    expect((await counters.findOne({ _id: 'counter-0' }))!.value).toBeGreaterThanOrEqual(seen.length);
    expect(ours.length).toBeGreaterThan(0);
    await store.close();
  });

  it('stops start-up on a file that is not a database, or is damaged, naming it', async () => {
    const dir = await freshDir();
    const file = join(dir, 'store.db');
    await writeFile(file, 'this is not SQLite\n'.repeat(100));
    await expect(openEmbeddedStore(dir)).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining(`${file} is not a SQLite database or is damaged`) });

    const damaged = await freshDir();
    const store = await openEmbeddedStore(damaged);
    await store.collection<{ _id: string; text: string }>('notes').insertOne({ _id: 'a', text: 'x'.repeat(10_000) });
    await store.close();
    const bytes = await readFile(join(damaged, 'store.db'));
    bytes.fill(0x41, 0, 100);
    await writeFile(join(damaged, 'store.db'), bytes);
    await expect(openEmbeddedStore(damaged)).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining(join(damaged, 'store.db')) });
  });

  it('creates DATA_DIR 0700 and its database 0600', async () => {
    const dir = join(await freshDir(), 'data');
    const store = await openEmbeddedStore(dir);
    await store.collection('notes').insertOne({ _id: 'a' });
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const name of ['store.db', 'store.db-wal']) expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
    await store.close();
  });
});
