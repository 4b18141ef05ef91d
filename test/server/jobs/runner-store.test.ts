/**
 * The runner on the store alone, on both adapters: two runners share one job's items (each run
 * once), and a runner that dies leaves its leased items to another once their lease passes (at
 * once on the embedded store, which one process holds). The pipeline is a stand-in that counts
 * calls: what is tested is the claiming, not the operations.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { COUNT_GRACE_MS, itemKey, Jobs } from '../../../server/jobs/jobs.ts';
import { JobRunner, type ItemPipeline } from '../../../server/jobs/runner.ts';
import { Webhooks } from '../../../server/jobs/webhooks.ts';
import type { Store } from '../../../server/store/port.ts';
import { eventually } from '../../helpers/eventually.ts';
import { embeddedStorePerTest } from '../../helpers/embedded-store.ts';
import { mongoForTests, throwawayMongoStore } from '../store/mongo-server.ts';

const log = pino({ level: process.env.JOBS_TEST_LOG ?? 'silent' });
const principal = { kind: 'api_key' as const, credentialId: 'k', workspaceId: 'w', scopes: [] };
// FerretDB runs an item in about 0.1 s here: enough items for both runners to take some, not more.
const ITEMS = Number(process.env.JOBS_TEST_ITEMS ?? 60);
const closers: Array<() => Promise<unknown>> = [];
const closeAll = async () => {
  while (closers.length) await closers.pop()!();
};
afterEach(closeAll);

function counting(calls: Map<string, number>, hold?: Promise<void>): ItemPipeline {
  return {
    async invoke(_id, _caller, raw, options) {
      calls.set(options.idempotencyKey, (calls.get(options.idempotencyKey) ?? 0) + 1);
      if (hold) await hold;
      return { kind: 'value', operation: {} as never, value: raw.body, receipt: { credits: 1 } };
    },
  };
}

function runner(store: Store, pipeline: ItemPipeline, exclusive: boolean): { jobs: Jobs; runner: JobRunner } {
  const jobs = new Jobs(store);
  const webhooks = new Webhooks(store, { timeoutMs: 1000, allowPrivate: true, now: Date.now, log });
  // No export jobs here: an exporter that is never asked for a file.
  const exporter = { run: async () => null, remove: async () => {}, refundUnwritten: async () => {} };
  const r = new JobRunner({ jobs, webhooks, exporter, log, pollMs: 10, concurrency: 4, exclusive, stillActing: async () => true, requirePlan: async () => {} });
  r.start(pipeline);
  closers.push(() => webhooks.close(), () => r.close());
  return { jobs, runner: r };
}

/**
 * `strict`: each item was leased to one runner only. On FerretDB 1.24 two runners' conditional
 * leases of one item have both succeeded now and then; what keeps such an item from running or
 * charging twice is its idempotency key (a unique insert, which FerretDB does enforce), not
 * present in this stand-in pipeline, so there only the results and counts are held exact.
 */
async function sharedJob(store: Store, exclusive: boolean, strict = true) {
  const calls = new Map<string, number>();
  const first = runner(store, counting(calls), exclusive);
  runner(store, counting(calls), exclusive);
  const items = Array.from({ length: ITEMS }, (_, i) => ({ itemId: String(i), input: { i } }));
  const job = await first.jobs.create({ workspaceId: 'w', operation: 'lookupCnpjBatch', items, webhook: null, maxCredits: null, principal });
  first.runner.wake();
  await eventually(async () => {
    const doc = await first.jobs.docs.findOne({ _id: job._id });
    return doc?.status === 'done' && doc.settling === false;
  }, { timeoutMs: 60_000 });
  await eventually(async () => (await first.jobs.docs.findOne({ _id: job._id }))?.status === 'done' && (await first.jobs.docs.findOne({ _id: job._id }))?.settling === false, { timeoutMs: 60_000 });
  const ended = (await first.jobs.docs.findOne({ _id: job._id }))!;
  expect(ended).toMatchObject({ done: ITEMS, failed: 0, creditsCharged: ITEMS });
  expect(calls.size).toBe(ITEMS);
  if (strict) expect([...calls.values()].every((n) => n === 1)).toBe(true);
  const stored = await first.jobs.items.find({ jobId: job._id }).toArray();
  expect(stored.map((item) => item.status)).toEqual(Array.from({ length: ITEMS }, () => 'ok'));
}

describe('embedded store', () => {
  const held = embeddedStorePerTest('jobs-runner');

  it('two runners share one job, each item run once', async () => {
    // Not exclusive: two runners in one process stand for two instances.
    await sharedJob(held.store, false);
    await closeAll();
  });

  it("a dead runner's leased items are taken again at once by the next process (exclusive)", async () => {
    const store = held.store;
    const calls = new Map<string, number>();
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const dying = runner(store, counting(calls, hold), true);
    const job = await dying.jobs.create({ workspaceId: 'w', operation: 'lookupCnpjBatch', items: [{ itemId: 'a', input: {} }, { itemId: 'b', input: {} }], webhook: null, maxCredits: null, principal });
    dying.runner.wake();
    await eventually(() => calls.size === 2);
    // It "dies": it stops, leaving its leases (its items never finish), and a new process takes over.
    (dying.runner as unknown as { closed: boolean }).closed = true;
    const next = runner(store, counting(new Map()), true);
    await eventually(async () => (await next.jobs.docs.findOne({ _id: job._id }))?.status === 'done');
    release();
    await closeAll();
  });
});

const mongo = await mongoForTests();
describe.skipIf(!mongo.uri)('mongodb store', () => {
  it('two instances share one job, each item run once', async () => {
    const { store, dispose } = await throwawayMongoStore(mongo.uri!);
    closers.push(dispose);
    await sharedJob(store, false, false);
    await closeAll();
  });
});

describe('settling a job', () => {
  const held = embeddedStorePerTest('jobs-settle');

  it('never counts an item twice when its count lands after the end, and counts a dead finisher\'s item once it must have died', async () => {
    let now = Date.now();
    const jobs = new Jobs(held.store, () => now);
    const items = ['a', 'b', 'c'].map((itemId) => ({ itemId, input: {} }));
    const created = await jobs.create({ workspaceId: 'w', operation: 'lookupCnpjBatch', items, webhook: null, maxCredits: null, principal });
    expect(await jobs.promote(created)).toBe(true);
    const running = (await jobs.docs.findOne({ _id: created._id }))!;
    await jobs.finishItem(running, itemKey(created._id, 0), { status: 'ok', output: '{}', credits: 1 });
    // Item 1's finisher (another instance) has written the item, and its count is on its way.
    await jobs.items.updateOne({ _id: itemKey(created._id, 1) }, { $set: { status: 'ok', output: '{}', creditsCharged: 1, finishedAt: new Date(now), owner: null, leaseUntil: null } });
    // Item 2's finisher wrote its item and died before counting it.
    await jobs.items.updateOne({ _id: itemKey(created._id, 2) }, { $set: { status: 'ok', output: '{}', creditsCharged: 1, finishedAt: new Date(now), owner: null, leaseUntil: null } });
    await jobs.end(created._id, 'done');

    // Counts that disagree with the items while an item is new: looked at again later, not overwritten.
    expect(await jobs.settle((await jobs.docs.findOne({ _id: created._id }))!)).toBeNull();
    await jobs.docs.updateOne({ _id: created._id }, { $inc: { done: 1, creditsCharged: 1 } });
    expect(await jobs.settle((await jobs.docs.findOne({ _id: created._id }))!)).toBeNull();
    expect(await jobs.docs.findOne({ _id: created._id })).toMatchObject({ done: 2, creditsCharged: 2 });

    // Past the grace, item 2's finisher is taken for dead: its item is counted, once.
    now += COUNT_GRACE_MS;
    expect(await jobs.settle((await jobs.docs.findOne({ _id: created._id }))!)).toMatchObject({ done: 3, creditsCharged: 3 });
    expect(await jobs.docs.findOne({ _id: created._id })).toMatchObject({ done: 3, failed: 0, creditsCharged: 3 });
    expect(await jobs.settle((await jobs.docs.findOne({ _id: created._id }))!)).toMatchObject({ done: 3, creditsCharged: 3 });
  });
});
