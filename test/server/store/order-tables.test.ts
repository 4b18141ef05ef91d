/**
 * The embedded store's order tables (order-tables.ts): a find with an equality on an index's first
 * field, sorted by its second, reads the documents in order and stops at its limit. Its answers
 * are held to the store's other way (the first field's key table, everything found sorted in
 * memory), on the same random documents in two collections: numbers with ties, strings, Dates,
 * booleans, null and missing, and now and then what an order table cannot place (arrays, NaN,
 * documents), which sends a key's queries back to the other way; sorted or not, with ranges of
 * numbers, strings or Dates on the sorted field; then again after random updates
 * and deletes, and for an index made before order tables, which gets one at its next createIndex.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Document } from '../../../server/store/port.ts';
import { embeddedStorePerTest } from '../../helpers/embedded-store.ts';
import { seededRandom, type SeededRandom } from '../../helpers/seeded-random.ts';


interface Doc extends Document {
  _id: string;
}

const OWNERS = ['a', 'b', 'c', 7] as const;

/**
 * A sort value: mostly one kind per owner (as real data is), now and then another; owner 7 also
 * holds values no order table can place, so its queries are answered the other way.
 */
function sortValue(r: SeededRandom, owner: unknown): unknown {
  const odd = r.next();
  if (owner === 7 && odd < 0.04) return r.pick([[r.next() * 10, 1], Number.NaN, { x: 1 }]);
  if (odd < 0.1) return null;
  if (odd < 0.15) return undefined;
  if (odd < 0.2) return r.pick([true, false, 'text', new Date(Date.UTC(1969, 11, 31)), -3]);
  if (owner === 'a') return Math.floor(r.next() * 20) - 5;
  if (owner === 'b') return new Date(Date.UTC(2026, 0, 1 + Math.floor(r.next() * 10)));
  if (owner === 'c') return r.pick(['alpha', 'beta', 'gamma', 'Delta', 'ã', '']);
  return r.next() < 0.5 ? Math.floor(r.next() * 4) : r.pick(['x', 'y']);
}

function document(r: SeededRandom, i: number): Doc {
  const owner = r.next() < 0.05 ? ['a', 'b'] : r.pick(OWNERS);
  const doc: Doc = { _id: `d${String(i).padStart(4, '0')}`, owner, tag: r.pick(['x', 'y']) };
  const s = sortValue(r, Array.isArray(owner) ? 'a' : owner);
  if (s !== undefined) doc.s = s;
  if (r.next() < 0.8) doc.p = { q: sortValue(r, Array.isArray(owner) ? 'a' : owner) };
  return doc;
}

/** A range of one type (numbers, strings or Dates), or now and then of two, which no order table reads. */
function range(r: SeededRandom): Document {
  const bound = r.pick([() => Math.floor(r.next() * 10) - 3, () => r.pick(['b', 'alpha', 'x', '']), () => new Date(Date.UTC(2026, 0, 1 + Math.floor(r.next() * 10)))]);
  const condition: Document = { [r.pick(['$gt', '$gte'])]: bound() };
  if (r.next() < 0.5) condition[r.pick(['$lt', '$lte'])] = bound();
  return condition;
}

const db = embeddedStorePerTest('order-tables');
/** Ordered: the compound indexes (order tables). Plain: the first field alone (key table, sorted in memory). */
const ordered = () => db.store.collection<Doc>('ordered');
const plain = () => db.store.collection<Doc>('plain');

async function indexBoth(): Promise<void> {
  await ordered().createIndex({ owner: 1, s: -1 });
  await ordered().createIndex({ owner: 1, 'p.q': 1 });
  await plain().createIndex({ owner: 1 });
}

async function compareQueries(r: SeededRandom, count: number): Promise<number> {
  let withLimit = 0;
  for (let i = 0; i < count; i++) {
    const filter: Document = { owner: r.pick(OWNERS) };
    if (r.next() < 0.3) filter.tag = r.pick(['x', 'y']);
    const by = r.pick(['s', 'p.q']);
    if (r.next() < 0.4) filter[by] = range(r);
    const sort = r.next() < 0.8 ? { sort: { [by]: r.pick([1, -1] as const) } } : {};
    const options = { ...sort, ...(r.next() < 0.7 ? { limit: 1 + Math.floor(r.next() * 8) } : {}), ...(r.next() < 0.3 ? { skip: Math.floor(r.next() * 5) } : {}) };
    if ('limit' in options) withLimit++;
    const got = await ordered().find(filter, options).toArray();
    const expected = await plain().find(filter, options).toArray();
    expect(got, `${JSON.stringify(filter)} ${JSON.stringify(options)}`).toEqual(expected);
  }
  return withLimit;
}

describe('order tables', () => {
  it('answer sorted finds as the key table and a sort in memory do, before and after updates and deletes', async () => {
    const r = seededRandom(2026);
    await indexBoth();
    const docs = Array.from({ length: 400 }, (_, i) => document(r, i));
    for (const doc of docs) {
      await ordered().insertOne({ ...doc });
      await plain().insertOne({ ...doc });
    }
    expect(await compareQueries(r, 300)).toBeGreaterThan(100);

    for (let i = 0; i < 300; i++) {
      const id = `d${String(Math.floor(r.next() * 400)).padStart(4, '0')}`;
      const kind = r.next();
      const update =
        kind < 0.4 ? { $set: { s: sortValue(r, 'a') ?? null } } : kind < 0.6 ? { $set: { owner: r.pick(OWNERS) } } : kind < 0.75 ? { $unset: { s: '' } } : { $set: { 'p.q': sortValue(r, 'c') ?? null } };
      if (r.next() < 0.1) {
        await ordered().deleteOne({ _id: id });
        await plain().deleteOne({ _id: id });
      } else {
        await ordered().updateOne({ _id: id }, update);
        await plain().updateOne({ _id: id }, update);
      }
    }
    await compareQueries(r, 300);
  });

  it('are made for an index made before them, at its next createIndex (every start), from the stored documents', async () => {
    const r = seededRandom(41);
    await indexBoth();
    for (let i = 0; i < 200; i++) {
      const doc = document(r, i);
      await ordered().insertOne({ ...doc });
      await plain().insertOne({ ...doc });
    }
    // As a store written before order tables: its indexes listed, without their order tables.
    await db.store.close();
    const sqlite = new Database(path.join(db.dir, 'store.db'));
    const tables = sqlite.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'o:%'").pluck().all() as string[];
    expect(tables.sort()).toEqual(['o:ordered:owner,p.q', 'o:ordered:owner,s']);
    for (const table of tables) sqlite.exec(`DROP TABLE "${table}"`);
    sqlite.close();
    await db.reopen();
    await compareQueries(r, 50);
    await indexBoth();
    await ordered().insertOne({ _id: 'late', owner: 'a', s: 3 });
    await plain().insertOne({ _id: 'late', owner: 'a', s: 3 });
    await compareQueries(r, 200);

    // As a store an older server wrote to since (it files nothing in order tables): made whole again at the next start.
    await db.store.close();
    const older = new Database(path.join(db.dir, 'store.db'));
    older.exec(`DELETE FROM "o:ordered:owner,s" WHERE rowid % 3 = 0`);
    older.close();
    await db.reopen();
    await indexBoth();
    await compareQueries(r, 200);
  });

  it('read a key newest first through its order, whatever else the key holds', async () => {
    await ordered().createIndex({ owner: 1, s: -1 });
    for (let i = 0; i < 3_000; i++) await ordered().insertOne({ _id: `r${i}`, owner: i % 3 === 0 ? 'big' : 'small', s: i });
    const newest = await ordered().find({ owner: 'big' }, { sort: { s: -1 }, limit: 3 }).toArray();
    expect(newest.map((d) => d.s)).toEqual([2_997, 2_994, 2_991]);
    const page = await ordered().find({ owner: 'big', s: { $lt: 100 } }, { sort: { s: -1 }, limit: 2 }).toArray();
    expect(page.map((d) => d.s)).toEqual([99, 96]);
  });
});
