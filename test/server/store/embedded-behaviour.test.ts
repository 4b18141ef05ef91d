/**
 * Embedded-store behaviour beyond the shared conformance suite: what MongoDB does too but is
 * slow or awkward to show there (TTL), and the embedded store's own guarantees (all-or-nothing
 * writes, string ids, refusing values its encoding cannot give back, bulk loads).
 */
import { describe, expect, it } from 'vitest';
import { encodeDocuments } from '../../../server/store/embedded/bulk-load.ts';
import { openEmbeddedStore, type EmbeddedStoreOptions } from '../../../server/store/embedded/store.ts';
import { DUPLICATE_KEY, type AtomicWrites } from '../../../server/store/port.ts';
import { eventually } from '../../helpers/eventually.ts';
import { embeddedStorePerTest } from '../../helpers/embedded-store.ts';

interface Doc {
  _id: string;
  name?: string;
  email?: string;
  emails?: string[];
  at?: Date;
  items?: Array<{ sku: string; qty: number }>;
  value?: unknown;
}

const db = embeddedStorePerTest('embedded');
const reopen = (options: EmbeddedStoreOptions = {}) => db.reopen(options);

const docs = () => db.store.collection<Doc>('docs');

describe('embedded store', () => {
  it('removes documents past a TTL index expiry', async () => {
    await reopen({ ttlSweepIntervalMs: 20 });
    await docs().createIndex({ at: 1 }, { expireAfterSeconds: 60 });
    await docs().insertOne({ _id: 'old', at: new Date(Date.now() - 61_000) });
    await docs().insertOne({ _id: 'fresh', at: new Date() });
    await docs().insertOne({ _id: 'no-date', name: 'kept' });
    await eventually(async () => expect(await docs().findOne({ _id: 'old' })).toBeNull(), { message: 'the TTL sweep to remove the expired document' });
    expect((await docs().find({}, { sort: { _id: 1 } }).toArray()).map((d) => d._id)).toEqual(['fresh', 'no-date']);
  });

  it('makes updateMany all-or-nothing when one document would break a unique index', async () => {
    await docs().createIndex({ email: 1 }, { unique: true });
    await docs().insertOne({ _id: 'a', email: 'a@x' });
    await docs().insertOne({ _id: 'b', email: 'b@x' });
    await expect(docs().updateMany({}, { $set: { email: 'same@x' } })).rejects.toMatchObject({ code: DUPLICATE_KEY });
    expect((await docs().find({}, { sort: { _id: 1 } }).toArray()).map((d) => d.email)).toEqual(['a@x', 'b@x']);
    await reopen();
    expect((await docs().find({}, { sort: { _id: 1 } }).toArray()).map((d) => d.email)).toEqual(['a@x', 'b@x']);
  });

  // A unique index compares an array whole on the embedded store (MongoDB: element by element); no repository relies on either.
  it('indexes array elements: found by element', async () => {
    await docs().createIndex({ emails: 1 });
    await docs().insertOne({ _id: 'a', emails: ['a@x', 'shared@x'] });
    await docs().insertOne({ _id: 'b', emails: ['b@x'] });
    expect((await docs().findOne({ emails: 'shared@x' }))?._id).toBe('a');

    await docs().createIndex({ 'items.sku': 1 });
    await docs().updateOne({ _id: 'a' }, { $set: { items: [{ sku: 's1', qty: 1 }, { sku: 's2', qty: 2 }] } });
    expect((await docs().findOne({ 'items.sku': 's2' }))?._id).toBe('a');
    expect((await docs().find({ 'items.sku': null }).toArray()).map((d) => d._id)).toEqual(['b']);
  });

  it('gives string UUIDs to documents inserted or upserted without an _id', async () => {
    const inserted = { name: 'no id' } as Doc;
    const { insertedId } = await docs().insertOne(inserted);
    expect(insertedId).toMatch(/^[0-9a-f-]{36}$/);
    expect(inserted._id).toBe(insertedId);
    const { upsertedId } = await docs().updateOne({ name: 'upserted' }, { $set: { email: 'u@x' } }, { upsert: true });
    expect(await docs().findOne({ _id: upsertedId as string })).toEqual({ _id: upsertedId, name: 'upserted', email: 'u@x' });
  });

  it('refuses values its encoding could not give back, changing nothing', async () => {
    await expect(docs().insertOne({ _id: 'm', value: new Map() })).rejects.toThrow(/cannot store a Map/);
    await docs().insertOne({ _id: 'ok', value: 1 });
    await expect(docs().updateOne({ _id: 'ok' }, { $set: { value: 10n } })).rejects.toThrow();
    expect(await docs().find({}).toArray()).toEqual([{ _id: 'ok', value: 1 }]);
  });

  it('keeps non-finite numbers and nested Dates across a restart', async () => {
    const value = { inf: Infinity, nan: NaN, when: [new Date(7)] };
    await docs().insertOne({ _id: 'n', value });
    await reopen();
    expect((await docs().findOne({ _id: 'n' }))?.value).toEqual(value);
  });

  it('reports index conflicts like MongoDB', async () => {
    await docs().createIndex({ email: 1 }, { name: 'by_email' });
    await expect(docs().createIndex({ name: 1 }, { name: 'by_email' })).rejects.toMatchObject({ code: 86 });
    await expect(docs().createIndex({ email: 1 }, { unique: true })).rejects.toMatchObject({ code: 85 });
    expect(await docs().createIndex({ _id: 1 })).toBe('_id_');
  });

  it('refuses an update that changes _id, and writes after close', async () => {
    await docs().insertOne({ _id: 'a', name: 'A' });
    await expect(docs().updateOne({ _id: 'a' }, { $set: { _id: 'b' } })).rejects.toMatchObject({ code: 66 });
    expect(await docs().updateOne({ _id: 'a' }, { $set: { _id: 'a', name: 'B' } })).toMatchObject({ modifiedCount: 1 });
    const closed = docs();
    await db.store.close();
    await expect(closed.insertOne({ _id: 'late' })).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    db.store = await openEmbeddedStore(db.dir);
  });

  it('writes to several collections atomically: together, or none of them when one fails', async () => {
    const other = () => db.store.collection<Doc>('others');
    await other().insertOne({ _id: 'taken' });
    await docs().insertOne({ _id: 'a', value: 1 });
    const atomically = <R>(work: (writes: AtomicWrites) => R) => db.store.atomically!(work);
    const after = await atomically((writes) => {
      const moved = writes.findOneAndUpdate<{ _id: string; value: number }>('docs', { _id: 'a' }, { $inc: { value: 1 } }, { returnDocument: 'after' });
      writes.insertOne<Doc>('others', { _id: 'b', value: moved?.value });
      return moved;
    });
    expect(after).toEqual({ _id: 'a', value: 2 });
    // The second write breaks the `_id` index: the first is undone with it, and the error is MongoDB's.
    await expect(
      atomically((writes) => {
        writes.findOneAndUpdate<{ _id: string; value: number }>('docs', { _id: 'a' }, { $inc: { value: 1 } }, { returnDocument: 'after' });
        writes.insertOne<Doc>('others', { _id: 'taken' });
      }),
    ).rejects.toMatchObject({ code: DUPLICATE_KEY });
    await expect(
      atomically((writes) => {
        writes.insertOne<Doc>('others', { _id: 'c' });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // Work that awaits would write after the commit: refused, and what it wrote first undone.
    await expect(
      atomically(async (writes) => {
        writes.insertOne<Doc>('others', { _id: 'd' });
        await Promise.resolve();
      }),
    ).rejects.toThrow('synchronous work');
    await reopen();
    expect(await docs().findOne({ _id: 'a' })).toEqual({ _id: 'a', value: 2 });
    expect((await other().find({}, { sort: { _id: 1 } }).toArray()).map((d) => [d._id, d.value])).toEqual([
      ['b', 2],
      ['taken', undefined],
    ]);
    await db.store.close();
    await expect(atomically(() => 1)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    db.store = await openEmbeddedStore(db.dir);
  });

  it('waits for pending writes on close', async () => {
    const writes = Array.from({ length: 20 }, (_, i) => docs().insertOne({ _id: `w${i}` }));
    await db.store.close();
    await Promise.all(writes);
    db.store = await openEmbeddedStore(db.dir);
    expect(await docs().countDocuments()).toBe(20);
  });
});

describe('embedded store bulk loads', () => {
  const loader = () => {
    if (!db.store.bulkLoader) throw new Error('no bulk loader');
    return db.store.bulkLoader<Doc>('docs');
  };

  it('are offered only to a one-shot process', async () => {
    expect(db.store.bulkLoader).toBeUndefined();
    await reopen({ oneShot: true });
    expect(db.store.bulkLoader).toBeTypeOf('function');
  });

  it('replace, add and remove documents, which this process and the next read', async () => {
    for (const _id of ['kept', 'replaced', 'removed']) await docs().insertOne({ _id, name: 'before' });
    await reopen({ oneShot: true });
    const load = loader();
    await load.put([
      { _id: 'replaced', name: 'after', at: new Date(5) },
      { _id: 'new', name: 'after', value: Number.NaN },
      { _id: 'loaded-then-removed', name: 'after' },
    ]);
    await load.remove(['removed', 'loaded-then-removed']);
    expect(await docs().findOne({ _id: 'replaced' })).toEqual({ _id: 'replaced', name: 'after', at: new Date(5) });
    // Other collections are untouched by the load.
    await db.store.collection<Doc>('others').insertOne({ _id: 'x' });
    await reopen();
    expect(await docs().find({}, { sort: { _id: 1 } }).toArray()).toEqual([
      { _id: 'kept', name: 'before' },
      { _id: 'new', name: 'after', value: Number.NaN },
      { _id: 'replaced', name: 'after', at: new Date(5) },
    ]);
    expect(await db.store.collection('others').countDocuments()).toBe(1);
  });

  it('refuse a document the store could not give back, writing nothing of its batch', async () => {
    await reopen({ oneShot: true });
    const load = loader();
    await expect(load.put([{ _id: 'a' }, { _id: 'b', value: new Map() }])).rejects.toThrow(/cannot store a Map/);
    expect(() => encodeDocuments([{ _id: 7 as unknown as string }])).toThrow(/string _id/);
    await reopen();
    expect(await docs().countDocuments()).toBe(0);
  });

  it('keep a unique index, refusing the batch that would break it', async () => {
    await docs().createIndex({ email: 1 }, { unique: true });
    await reopen({ oneShot: true });
    await loader().put([{ _id: 'a', email: 'same@x' }]);
    await expect(loader().put([{ _id: 'b', email: 'other@x' }, { _id: 'c', email: 'same@x' }])).rejects.toMatchObject({ code: DUPLICATE_KEY });
    expect(await docs().countDocuments()).toBe(1);
  });

});

describe('documents encoded for a bulk load', () => {
  it('come back as they were, however large and whatever their characters', async () => {
    await reopen({ oneShot: true });
    const big = 'São João 😀 '.repeat(200_000);
    const load = db.store.bulkLoader!<Doc>('docs');
    await load.put([{ _id: 'small', name: 'Açaí' }, { _id: 'big', name: big }, { _id: '', name: '' }]);
    await load.putEncoded(encodeDocuments([{ _id: 'pre-encoded', at: new Date(7) }]));
    await reopen();
    expect(await docs().find({}, { sort: { _id: 1 } }).toArray()).toEqual([
      { _id: '', name: '' },
      { _id: 'big', name: big },
      { _id: 'pre-encoded', at: new Date(7) },
      { _id: 'small', name: 'Açaí' },
    ]);
  });
});

describe('a one-shot store', () => {
  /** The same state, opened by a server (every collection read at start) and by a command (each when first used). */
  async function bothWays(read: () => Promise<unknown>): Promise<[unknown, unknown]> {
    await reopen();
    const eager = await read();
    await reopen({ oneShot: true });
    return [eager, await read()];
  }

  it('bulk loads a collection without reading its documents into memory, telling what it held', async () => {
    await docs().bulkWrite(Array.from({ length: 50 }, (_, i) => ({ insertOne: { document: { _id: `d${i}`, name: `n${i}`, value: i } } })));
    await docs().deleteOne({ _id: 'd7' });
    await reopen({ oneShot: true });
    const load = db.store.bulkLoader!<Doc>('docs', ['name']);
    expect(load.stored.size).toBe(49);
    expect(load.stored.get('d3')).toEqual({ name: 'n3' });
    expect(load.stored.has('d7')).toBe(false);
    await load.remove(['d3']);
    await reopen();
    expect(await docs().countDocuments()).toBe(48);
  });
});
