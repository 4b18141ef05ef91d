/**
 * The store of idempotency keys, on both adapters: one claim among concurrent duplicates, the
 * stored answer given back, 24 hours of life, and a claim whose process died taken over once its
 * lease has passed. (The HTTP behaviour is in test/server/http/idempotency.test.ts.)
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkIdempotencyKey,
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  idempotencyIndexes,
  IdempotencyKeys,
  requestHash,
} from '../../../server/pipeline/idempotency.ts';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import type { Store } from '../../../server/store/port.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { mongoForTests, throwawayMongoStore } from '../store/mongo-server.ts';

function suite(openFresh: () => Promise<{ store: Store; dispose(): Promise<void> }>): void {
  let opened: { store: Store; dispose(): Promise<void> };
  // Starts at the real now: a fixed date would put every key's expiry in the past, for a store's
  // TTL index to remove whenever its monitor runs.
  let now: number;
  let keys: IdempotencyKeys;

  beforeEach(async () => {
    now = Date.now();
    opened = await openFresh();
    for (const { collection, keys: fields, options } of idempotencyIndexes) await opened.store.collection(collection).createIndex(fields, options);
    keys = new IdempotencyKeys(opened.store, () => now);
  });
  afterEach(() => opened.dispose());

  const hash = requestHash('lookupCnpjBatch', { body: { cnpjs: ['1'] } });

  it('lets exactly one of many concurrent duplicates claim the key', async () => {
    const tries = await Promise.allSettled(Array.from({ length: 20 }, () => keys.claim('ws', 'k', 'lookupCnpjBatch', hash)));
    const claimed = tries.filter((t) => t.status === 'fulfilled');
    expect(claimed).toHaveLength(1);
    for (const t of tries.filter((t) => t.status === 'rejected')) expect((t as PromiseRejectedResult).reason.code).toBe('idempotency_key_in_use');
  });

  it('gives the stored answer back, for 24 hours, and refuses another request under the key', async () => {
    const first = await keys.claim('ws', 'k', 'lookupCnpjBatch', hash);
    if (!('claim' in first)) throw new Error('not claimed');
    await first.claim.complete({ kind: 'value', status: 200, body: '{"results":[]}', credits: 3 });
    // With what the first request charged (a job's item replayed after a crash reports it).
    expect(await keys.claim('ws', 'k', 'lookupCnpjBatch', hash)).toEqual({ stored: { answer: { kind: 'value', status: 200, body: '{"results":[]}', credits: 3 }, charged: 3 } });
    await expect(keys.claim('ws', 'k', 'lookupCnpjBatch', requestHash('lookupCnpjBatch', { body: { cnpjs: ['2'] } }))).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
    // Another workspace's key of the same name is another key.
    expect(await keys.claim('other', 'k', 'lookupCnpjBatch', hash)).toHaveProperty('claim');
    now += IDEMPOTENCY_TTL_MS + 1;
    expect(await keys.claim('ws', 'k', 'lookupCnpjBatch', hash)).toHaveProperty('claim');
  });

  it('releases a key, and takes over a claim whose lease has passed', async () => {
    const first = await keys.claim('ws', 'k', 'lookupCnpjBatch', hash);
    if (!('claim' in first)) throw new Error('not claimed');
    await first.claim.release();
    const second = await keys.claim('ws', 'k', 'lookupCnpjBatch', hash);
    expect(second).toHaveProperty('claim');
    // `second` never finishes (its process died): until its lease passes, duplicates wait.
    await expect(keys.claim('ws', 'k', 'lookupCnpjBatch', hash)).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
    now += IDEMPOTENCY_LEASE_MS + 1;
    const third = await keys.claim('ws', 'k', 'lookupCnpjBatch', hash);
    if (!('claim' in third)) throw new Error('not taken over');
    // The stale claim can no longer store its answer over the new one's.
    if ('claim' in second) await second.claim.complete({ kind: 'value', status: 200, body: '"stale"' });
    await third.claim.complete({ kind: 'value', status: 200, body: '"fresh"' });
    expect(await keys.claim('ws', 'k', 'lookupCnpjBatch', hash)).toEqual({ stored: { answer: { kind: 'value', status: 200, body: '"fresh"' }, charged: 0 } });
  });

  it('hands a claim taken over the credits its dead run counted, as paid', async () => {
    const first = await keys.claim('ws', 'k', 'lookupCnpjBatch', hash);
    if (!('claim' in first)) throw new Error('not claimed');
    expect(first.prepaid).toBe(0);
    await first.claim.charging(3);
    await first.claim.charging(2);
    // A charge refused gives its count back.
    await first.claim.charging(-2);
    await eventually(async () => (await opened.store.collection<{ _id: string; charged?: number }>('idempotencyKeys').findOne({}))?.charged === 3);
    now += IDEMPOTENCY_LEASE_MS + 1;
    const taken = await keys.claim('ws', 'k', 'lookupCnpjBatch', hash);
    if (!('claim' in taken)) throw new Error('not taken over');
    expect(taken.prepaid).toBe(3);
    await taken.claim.release();
  });
}

describe('key format', () => {
  it('accepts a token or a structured-field string of 1 to 255 visible ASCII characters', () => {
    expect(checkIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(checkIdempotencyKey('"abc"')).toBe('abc');
    for (const bad of ['', '""', 'a b', 'x'.repeat(256), 'tab\there', 'ü']) expect(() => checkIdempotencyKey(bad)).toThrow(/Idempotency-Key/);
  });

  it('hashes the request whatever the order of its keys', () => {
    expect(requestHash('enrich', { body: { a: 1, b: [{ c: 2, d: 3 }] } })).toBe(requestHash('enrich', { body: { b: [{ d: 3, c: 2 }], a: 1 } }));
    expect(requestHash('enrich', { body: { a: 1 } })).not.toBe(requestHash('research', { body: { a: 1 } }));
  });
});

describe('embedded store', () => {
  suite(async () => {
    const store = await openEmbeddedStore(await tempDir('idempotency'));
    return { store, dispose: () => store.close() };
  });
});

const mongo = await mongoForTests();
if ('reason' in mongo) console.warn(`Skipping the MongoDB half of the idempotency-key tests: ${mongo.reason}.`);

describe.skipIf(!mongo.uri)('mongodb store', () => {
  afterAll(() => (mongo.uri ? mongo.stop() : undefined));
  suite(() => throwawayMongoStore(mongo.uri!));
});
