/**
 * Bulk-loaded documents kept encoded (block.ts): a server reads a bulk load's lines without
 * parsing the documents, builds its indexes from the values kept beside them, and must answer
 * exactly as if it had parsed every document. Each test compares against the same documents
 * written the ordinary way.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore, type EmbeddedStoreOptions } from '../../../server/store/embedded/store.ts';
import type { Document, IndexDeclaration } from '../../../server/store/port.ts';
import { embeddedStorePerTest } from '../../helpers/embedded-store.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

interface Doc {
  _id: string;
  [field: string]: unknown;
}

const db = embeddedStorePerTest('embedded-blocks');
const reopen = (options: EmbeddedStoreOptions = {}) => db.reopen(options);

const docs = () => db.store.collection<Doc>('docs');

/** Documents with what indexes find hard: arrays (multikey), nested arrays of documents, nulls, missing fields, Dates, numbers and strings. */
function sample(count: number): Doc[] {
  const states = ['SP', 'MG', 'RJ', null];
  return Array.from({ length: count }, (_, i) => {
    const doc: Doc = {
      _id: `id${String(i).padStart(5, '0')}`,
      state: states[i % 4],
      capital: i % 7 === 0 ? 'unknown' : i * 1000,
      words: i % 5 === 0 ? [] : ['são', `w${i % 13}`, `w${i % 3}`],
      partners: i % 6 === 0 ? undefined : [{ name: `p${i % 11}`, since: new Date(Date.UTC(2000 + (i % 20), 0, 1)) }],
      flag: i % 2 === 0,
      // One element each: a block keeps these as single values, and the index must still know they are arrays.
      tags: [`t${i % 3}`],
      nested: { code: `c${i % 9}` },
    };
    if (i % 10 === 3) delete doc.state;
    if (doc.partners === undefined) delete doc.partners;
    return doc;
  });
}

const INDEXES: Array<[Record<string, 1>, { unique?: boolean }?]> = [
  [{ state: 1 }],
  [{ capital: 1 }],
  [{ words: 1 }],
  [{ 'partners.name': 1 }],
  [{ 'partners.since': 1 }],
  [{ flag: 1 }],
  [{ tags: 1 }],
  [{ 'nested.code': 1 }],
  [{ state: 1, 'nested.code': 1 }],
  // The port offers no sparse index (FerretDB has none): a field some documents lack is filed under null.
  [{ maybe: 1 }],
];

const QUERIES: Document[] = [
  { state: 'SP' },
  { state: null },
  { state: { $in: ['MG', 'RJ'] } },
  { capital: { $gte: 5000, $lt: 40_000 } },
  { capital: 'unknown' },
  { words: 'w4' },
  { words: { $all: ['são', 'w1'] } },
  { words: [] },
  { 'partners.name': 'p3' },
  { 'partners.since': { $gte: new Date(Date.UTC(2015, 0, 1)) } },
  { flag: true, state: 'RJ' },
  { tags: { $in: ['t0', 't2'] } },
  { tags: ['t1'] },
  { 'nested.code': 'c2', state: 'MG' },
  { maybe: { $exists: true } },
  { maybe: null },
];

/** The same indexes, as a server declares them before it opens the store (it files blocks' documents as it reads them). */
const DECLARED: IndexDeclaration[] = INDEXES.map(([keys, options]) => ({ collection: 'docs', keys, ...(options ? { options } : {}) }));

async function declareIndexes(): Promise<void> {
  for (const [keys, options] of INDEXES) await docs().createIndex(keys, options ?? {});
}

async function answers(): Promise<unknown[][]> {
  return Promise.all(QUERIES.map((filter) => docs().find(filter, { sort: { _id: 1 } }).toArray()));
}

/**
 * The documents bulk loaded by a one-shot process that declared the indexes, in batches of `per`;
 * then reopened as a server, which declares them before opening when `before`.
 */
async function bulkLoad(all: Doc[], per: number, { before = false } = {}): Promise<void> {
  await reopen({ oneShot: true });
  await declareIndexes();
  const load = db.store.bulkLoader!<Doc>('docs');
  for (let start = 0; start < all.length; start += per) await load.put(all.slice(start, start + per));
  await reopen(before ? { indexes: DECLARED } : {});
  await declareIndexes();
}

async function dataFiles(): Promise<string[]> {
  const names = await readdir(db.dir);
  return Promise.all(names.filter((n) => n.endsWith('.jsonl')).sort().map((n) => readFile(join(db.dir, n), 'utf8')));
}

describe('bulk-loaded documents kept encoded', () => {
  it.each([
    ['declared after opening', false],
    ['declared before opening, filed as start-up reads the blocks', true],
  ])('answer every query as the same documents written one by one do, through indexes built from their blocks (%s)', async (_, before) => {
    const all = sample(600);
    await declareIndexes();
    await docs().bulkWrite(all.map((document) => ({ insertOne: { document } })));
    const written = await answers();
    const everything = await docs().find({}, { sort: { _id: 1 } }).toArray();

    db.dir = await tempDir('embedded-blocks-loaded');
    await db.store.close();
    db.store = await openEmbeddedStore(db.dir);
    await bulkLoad(all, 250, { before });
    expect((await dataFiles()).join('')).toContain('"block":');
    expect(await answers()).toEqual(written);
    expect(await docs().find({}, { sort: { _id: 1 } }).toArray()).toEqual(everything);
    // Every query found something, or the comparison would prove little.
    for (const [i, found] of written.entries()) {
      if (!('maybe' in QUERIES[i]!)) expect(found.length, JSON.stringify(QUERIES[i])).toBeGreaterThan(0);
    }
  });

  it('are given by jsonByIds as their bytes less the omitted fields, as JSON.stringify writes the documents find gives', async () => {
    // Some hold Dates (tagged in the block, written as plain JSON from the parsed document), some not.
    const all = sample(120).map((doc, i) => (i % 4 === 0 ? { ...doc, text: 'quote " backslash \\ {[,]}', search: { words: ['x'] } } : doc));
    await bulkLoad(all, 50);
    await docs().updateOne({ _id: 'id00005' }, { $set: { state: 'AC' } });
    const ids = all.map((doc) => doc._id);
    for (const omit of [['_id', 'partners'], ['_id', 'search', 'tags'], []]) {
      const json = await db.store.jsonByIds('docs', [...ids, 'absent'], omit);
      expect(json.size).toBe(all.length);
      for (const doc of await docs().find({}).toArray()) {
        const expected: Partial<Doc> = { ...doc };
        for (const field of omit) delete expected[field];
        expect(json.get(doc._id)!.toString('utf8'), doc._id).toBe(JSON.stringify(expected));
      }
    }
  });

  it('answer as written one by one after a second load replaced some of them, with indexes declared before opening', async () => {
    const first = sample(300);
    // The second load writes 100 of them again, changed, and 50 new ones: blocks that replace documents.
    const second = [...first.slice(100, 200).map((doc) => ({ ...doc, state: 'AC', words: ['novo'] })), ...sample(350).slice(300)];
    await declareIndexes();
    await docs().bulkWrite([...first, ...second].map((document) => ({ replaceOne: { filter: { _id: document._id }, replacement: document, upsert: true } })));
    const written = await answers();
    const found = await docs().find({ state: 'AC' }, { sort: { _id: 1 } }).toArray();

    db.dir = await tempDir('embedded-blocks-reloaded');
    await db.store.close();
    db.store = await openEmbeddedStore(db.dir);
    await bulkLoad(first, 100);
    await bulkLoad(second, 60, { before: true });
    expect(await answers()).toEqual(written);
    expect(await docs().find({ state: 'AC' }, { sort: { _id: 1 } }).toArray()).toEqual(found);
    expect(found).toHaveLength(100);
  });

  it.each([false, true])('keep their indexes right when ordinary writes replace or remove them (declared before opening: %s)', async (before) => {
    await bulkLoad(sample(100), 40, { before });
    await docs().updateOne({ _id: 'id00001' }, { $set: { state: 'AC', words: ['novo'] } });
    await docs().deleteOne({ _id: 'id00002' });
    await docs().insertOne({ _id: 'id99999', state: 'AC', words: ['novo'] });
    expect((await docs().find({ state: 'AC' }).toArray()).map((d) => d._id).sort()).toEqual(['id00001', 'id99999']);
    expect(await docs().countDocuments({ words: 'novo' })).toBe(2);
    expect(await docs().findOne({ _id: 'id00001', state: 'MG' })).toBeNull();
    expect(await docs().findOne({ _id: 'id00002' })).toBeNull();
    await reopen();
    await declareIndexes();
    expect(await docs().countDocuments({ state: 'AC' })).toBe(2);
    expect(await docs().countDocuments({})).toBe(100);
    await reopen({ indexes: DECLARED });
    await declareIndexes();
    expect((await docs().find({ state: 'AC' }).toArray()).map((d) => d._id).sort()).toEqual(['id00001', 'id99999']);
    expect(await docs().countDocuments({ words: 'novo' })).toBe(2);
    expect(await docs().countDocuments({ state: 'MG' })).toBe(sample(100).filter((d) => d.state === 'MG' && d._id !== 'id00001' && d._id !== 'id00002').length);
  });

  it('are copied whole into a snapshot while none of a block changed, and written out one by one once some did', async () => {
    await bulkLoad(sample(300), 100);
    const before = await docs().find({}, { sort: { _id: 1 } }).toArray();
    // A backup is a snapshot: two blocks are copied as they are, the changed one is not.
    await docs().updateOne({ _id: 'id00150' }, { $set: { state: 'AP' } });
    const path = join(db.dir, 'backup.jsonl');
    await db.store.backup!(path);
    const snapshot = await readFile(path, 'utf8');
    expect(snapshot.match(/"block":/g)).toHaveLength(2);
    // Restored from it, the store answers the same.
    const restored = await tempDir('embedded-blocks-restored');
    await writeFile(join(restored, 'snapshot-000001.jsonl'), snapshot);
    await db.store.close();
    db.store = await openEmbeddedStore(restored);
    await declareIndexes();
    expect(await docs().countDocuments({ state: 'AP' })).toBe(1);
    const after = await docs().find({}, { sort: { _id: 1 } }).toArray();
    expect(after).toEqual(before.map((d) => (d._id === 'id00150' ? { ...d, state: 'AP' } : d)));
  });

  it('refuse to start on a block whose header does not match its documents, naming the file and line', async () => {
    await bulkLoad(sample(10), 10);
    await db.store.close();
    const [journal] = (await readdir(db.dir)).filter((n) => n.startsWith('journal-'));
    const text = await readFile(join(db.dir, journal!), 'utf8');
    await writeFile(join(db.dir, journal!), text.replace('"ends":[', '"ends":[1,'));
    await expect(openEmbeddedStore(db.dir)).rejects.toThrow(/journal-000001\.jsonl, line \d+ is not a valid block/);
    db.store = await openEmbeddedStore(await tempDir('embedded-blocks-other'));
  });

  it('refuse to start on a block whose kept keys do not match its documents, naming the file and line, when the indexes are declared before opening', async () => {
    await bulkLoad(sample(10), 10);
    await db.store.close();
    const [journal] = (await readdir(db.dir)).filter((n) => n.startsWith('journal-'));
    const text = await readFile(join(db.dir, journal!), 'utf8');
    // One value fewer for `flag` than the block has documents (the header's byte ranges are moved to match).
    const damaged = text.replace(/"flag":\[(true|false),/, '"flag":[');
    const shift = text.length - damaged.length;
    const [line] = damaged.split('\n').filter((l) => l.includes('"block":'));
    const meta = JSON.parse(line!.slice(line!.indexOf('"block":') + 8, line!.indexOf(',"k":'))) as { fields: Record<string, [number, number]>; kBytes: number };
    const flagStart = meta.fields.flag![0];
    for (const range of Object.values(meta.fields)) for (const i of [0, 1] as const) if (range[i] > flagStart) range[i] -= shift;
    meta.kBytes -= shift;
    const metaText = JSON.stringify(meta);
    const fixed = line!.replace(/"n":\d+,"block":.*?,"k":/, `"n":${metaText.length},"block":${metaText},"k":`);
    await writeFile(join(db.dir, journal!), damaged.replace(line!, fixed));
    await expect(openEmbeddedStore(db.dir, { indexes: DECLARED })).rejects.toThrow(/journal-000001\.jsonl, line \d+ is not a valid block \(block keys of flag do not match/);
    db.store = await openEmbeddedStore(await tempDir('embedded-blocks-other'));
  });

  it('are read whole, as ordinary lines, by a one-shot process', async () => {
    const all = sample(50);
    await bulkLoad(all, 20);
    const eager = await docs().find({ words: 'w2' }, { sort: { _id: 1 } }).toArray();
    await reopen({ oneShot: true });
    expect(await docs().find({ words: 'w2' }, { sort: { _id: 1 } }).toArray()).toEqual(eager);
  });
});
