/**
 * Issue 20 (8, 10): the embedded store says what it repaired and what it refuses, plainly, and
 * keeps its files to its owner.
 */
import { appendFile, chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import { startServer } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

interface Note {
  _id: string;
  text: string;
}

const journals = async (dir: string) => (await readdir(dir)).filter((name) => name.startsWith('journal-')).sort();
const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe('8. damage is reported plainly', () => {
  it('a torn last journal line is cut with a warning naming the file and the bytes dropped', async () => {
    const dir = await tempDir('hygiene');
    let store = await openEmbeddedStore(dir);
    await store.collection<Note>('notes').insertOne({ _id: 'kept', text: 'acknowledged' });
    await store.close();
    const [journal] = await journals(dir);
    const torn = '{"c":"notes","put":[{"_id":"torn","te';
    await appendFile(join(dir, journal!), torn);

    const warnings: string[] = [];
    store = await openEmbeddedStore(dir, { onWarning: (message) => warnings.push(message) });
    await store.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(join(dir, journal!));
    expect(warnings[0]).toContain(`${Buffer.byteLength(torn)} bytes`);
  });

  it('the server refuses a journal damaged mid-file with the advice, and no stack trace', async () => {
    const dir = await tempDir('hygiene');
    const store = await openEmbeddedStore(dir);
    for (const _id of ['one', 'two', 'three']) await store.collection<Note>('notes').insertOne({ _id, text: _id });
    await store.close();
    const [journal] = await journals(dir);
    const path = join(dir, journal!);
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[1] = `${lines[1]!.slice(0, 20)}#garbage#${lines[1]!.slice(20)}`;
    await writeFile(path, lines.join('\n'));

    const failure = await startServer({ DATA_DIR: dir }).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(failure).toContain('line 2');
    expect(failure).toContain('Restore the data directory from a backup');
    expect(failure).not.toMatch(/\n\s+at /);
  });
});

describe('10. store files are private', () => {
  it('creates DATA_DIR 0700 and journals, snapshots and the lock 0600', async () => {
    const dir = join(await tempDir('hygiene'), 'data');
    const store = await openEmbeddedStore(dir, { compactionThresholdBytes: 1 });
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(join(dir, 'LOCK'))).toBe(0o600);
    const notes = store.collection<Note>('notes');
    await notes.insertOne({ _id: 'a', text: 'x' });
    for (let i = 0; i < 20; i++) await notes.updateOne({ _id: 'a' }, { $set: { text: `v${i}` } });
    await store.close();
    const files = await readdir(dir);
    expect(files.some((name) => name.startsWith('snapshot-'))).toBe(true);
    for (const name of files) expect(await mode(join(dir, name)), name).toBe(0o600);
  });

  it('narrows the directory and the files an older version left readable', async () => {
    const dir = await tempDir('hygiene');
    let store = await openEmbeddedStore(dir);
    await store.collection<Note>('notes').insertOne({ _id: 'a', text: 'x' });
    await store.close();
    const [journal] = await journals(dir);
    await chmod(dir, 0o755);
    await chmod(join(dir, journal!), 0o644);
    store = await openEmbeddedStore(dir);
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(join(dir, journal!))).toBe(0o600);
    await store.close();
  });
});
