/**
 * Issue 40: a DATA_DIR written by the journal store (the fixture, made by that code: see
 * test/fixtures/journal-store.md) is converted to SQLite once, at the first start or by
 * `npx prospecta migrate`: every document kept, the old files moved to journal-store.old/, and a
 * conversion cut by a kill done again from the start.
 */
import { cp, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encode } from '../../../server/store/embedded/codec.ts';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import type { Store } from '../../../server/store/port.ts';
import { runCli } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const fixture = fileURLToPath(new URL('../../fixtures/journal-store', import.meta.url));
const expectedFile = fileURLToPath(new URL('../../fixtures/journal-store.expected.json', import.meta.url));

async function journalStoreCopy(): Promise<string> {
  const dir = join(await tempDir('migrate'), 'data');
  await cp(fixture, dir, { recursive: true });
  // What a journal store also leaves: its pid lock (a dead process's) and its full-disk ballast.
  await writeFile(join(dir, 'LOCK'), '999999\n');
  await writeFile(join(dir, 'space-reserve'), Buffer.alloc(4096));
  return dir;
}

async function expectFixtureContents(store: Store): Promise<void> {
  const expected = JSON.parse(await readFile(expectedFile, 'utf8')) as Record<string, string[]>;
  for (const [collection, docs] of Object.entries(expected)) {
    const found = await store.collection(collection).find({}, { sort: { _id: 1 } }).toArray();
    expect(found.map((doc) => encode(doc)), collection).toEqual(docs);
  }
}

describe('converting a journal store', () => {
  it('converts at the first start, keeping every document and moving the old files aside; later starts leave it be', async () => {
    const dir = await journalStoreCopy();
    const warnings: string[] = [];
    let store = await openEmbeddedStore(dir, { onWarning: (message) => warnings.push(message) });
    await expectFixtureContents(store);
    expect(warnings).toEqual([expect.stringMatching(/^Converted the journal store in .* to SQLite .*: 109 documents in 4 collections\. The old files are in .*journal-store\.old/)]);
    const names = await readdir(dir);
    expect(names).toEqual(expect.arrayContaining(['journal-store.old', 'store.db']));
    expect(names.filter((name) => /\.jsonl$|^LOCK$|^space-reserve$/.test(name))).toEqual([]);
    expect((await readdir(join(dir, 'journal-store.old'))).sort()).toEqual(['journal-000003.jsonl', 'snapshot-000003.jsonl']);
    // Indexes are created on the converted documents as at any start, and the store takes writes.
    await store.collection('companies').createIndex({ 'address.state': 1 });
    expect(await store.collection('companies').countDocuments({ 'address.state': 'SP' })).toBe(24);
    await store.collection('workspaces').updateOne({ _id: 'ws0' }, { $inc: { balance: 1 } });
    await store.close();

    warnings.length = 0;
    store = await openEmbeddedStore(dir, { onWarning: (message) => warnings.push(message) });
    expect(warnings).toEqual([]);
    expect((await store.collection<{ _id: string; balance: number }>('workspaces').findOne({ _id: 'ws0' }))?.balance).toBe(987);
    await store.close();
  });

  it('does a conversion cut by a kill again from the start', async () => {
    const dir = await journalStoreCopy();
    // Killed mid-way: one file moved aside, the other not yet, and a partial database written.
    await mkdir(join(dir, 'journal-store.old'));
    await rename(join(dir, 'snapshot-000003.jsonl'), join(dir, 'journal-store.old', 'snapshot-000003.jsonl'));
    await writeFile(join(dir, 'store.db.converting'), 'half a database');
    const store = await openEmbeddedStore(dir);
    await expectFixtureContents(store);
    expect(await readdir(dir)).not.toContain('store.db.converting');
    await store.close();
  });

  it('stops, naming the file and line, on a journal damaged in the middle', async () => {
    const dir = await journalStoreCopy();
    const journal = join(dir, 'journal-000003.jsonl');
    const lines = (await readFile(journal, 'utf8')).split('\n');
    lines[3] = lines[3]!.slice(0, 20);
    await writeFile(journal, lines.join('\n'));
    await expect(openEmbeddedStore(dir)).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining('journal-000003.jsonl, line 4, is not valid JSON') });
  });

  it('converts with `npx prospecta migrate`', { timeout: 60_000 }, async () => {
    const dir = await journalStoreCopy();
    const migrated = await runCli(['migrate'], { DATA_DIR: dir });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.json).toMatchObject({ converted: true, documents: 109, collections: { workspaces: 19, ledger: 40, apiKeys: 1, companies: 49 } });
    const again = await runCli(['migrate'], { DATA_DIR: dir });
    expect(again.json).toEqual({ converted: false, dataDir: dir });
    const store = await openEmbeddedStore(dir);
    await expectFixtureContents(store);
    await store.close();
  });
});
