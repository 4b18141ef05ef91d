import type Bottleneck from 'bottleneck';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { patchBottleneckYield } from '../../../server/outbound/bottleneck-yield.ts';
import { closeLimiter, createLimiter, runLimited, type Throttle } from '../../../server/outbound/limiter.ts';
import { BrasilApiSource } from '../../../server/providers/brasilapi-client.ts';
import { makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { brasilApiCompany, startFakeBrasilApi, type FakeBrasilApi } from '../../helpers/fake-brasilapi.ts';

const open: Bottleneck[] = [];
const gates: Gate[] = [];

// The limiters as the server runs them.
beforeAll(patchBottleneckYield);

function limiterFor(limits: Throttle, id = 'test', redis?: { url: string }) {
  const limiter = createLimiter(id, limits, redis);
  open.push(limiter);
  return limiter;
}
afterEach(async () => {
  // Release whatever a failed test left running, or closing would wait for it.
  const closing = Promise.all(open.splice(0).map(closeLimiter));
  const release = setInterval(() => gates.forEach((g) => g.releaseAll()), 2);
  await closing.finally(() => clearInterval(release));
  gates.length = 0;
});

interface Gate {
  task: () => Promise<string>;
  releaseAll(): void;
  readonly running: number;
  readonly started: number;
  readonly maxRunning: number;
}

/** A task that counts how many run at once and finishes when told. */
function gate(): Gate {
  let running = 0;
  let maxRunning = 0;
  let started = 0;
  const releases: Array<() => void> = [];
  const g: Gate = {
    task: () => {
      started++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      return new Promise<string>((resolve) => releases.push(() => (running--, resolve('done'))));
    },
    releaseAll: () => releases.splice(0).forEach((release) => release()),
    get running() {
      return running;
    },
    get started() {
      return started;
    },
    get maxRunning() {
      return maxRunning;
    },
  };
  gates.push(g);
  return g;
}

const until = (condition: () => boolean) => eventually(condition, { intervalMs: 2 });

/** Lets every task of `g` finish, the queued ones included, until `total` have run. */
const drain = (g: Gate, total: number) =>
  eventually(
    () => {
      g.releaseAll();
      return g.started >= total && g.running === 0;
    },
    { intervalMs: 2, message: `${total} tasks to run` },
  );

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

describe('runLimited, in process', () => {
  it('runs no more than maxConcurrent at once', async () => {
    const limiter = limiterFor({ maxConcurrent: 2 });
    const g = gate();
    const calls = Array.from({ length: 5 }, () => runLimited(limiter, g.task, { name: 'Test' }));
    await until(() => g.started === 2);
    // The limiter itself says a third would not start now (no waiting to see that it does not).
    expect(await limiter.check()).toBe(false);
    expect(g.started).toBe(2);
    await drain(g, 5);
    expect(await Promise.all(calls)).toEqual(['done', 'done', 'done', 'done', 'done']);
    expect(g.maxRunning).toBe(2);
  });

  it('drops a queued call when its signal aborts: the task never runs', async () => {
    const limiter = limiterFor({ maxConcurrent: 1 });
    const g = gate();
    const first = runLimited(limiter, g.task, { name: 'Test' });
    const controller = new AbortController();
    const queued = runLimited(limiter, g.task, { name: 'Test', signal: controller.signal });
    await until(() => g.started === 1);
    const reason = new Error('gone');
    controller.abort(reason);

    expect(await rejection(queued)).toBe(reason);
    g.releaseAll();
    await first;
    // Turns are first come, first served: once a later call has had its turn, the dropped one's
    // has passed (had its task run, it would still hold the only slot and this would time out).
    expect(await runLimited(limiter, async () => 'after', { name: 'Test', maxWaitMs: 5_000 })).toBe('after');
    expect(g.started).toBe(1);
  });

  it('rejects at once, without queueing, when the signal has already aborted', async () => {
    const limiter = limiterFor({});
    let ran = false;
    const reason = new Error('too late');
    const call = runLimited(limiter, async () => (ran = true), { name: 'Test', signal: AbortSignal.abort(reason) });
    const err = await rejection(call);
    expect(err).toBe(reason);
    expect(ran).toBe(false);
  });

  it('gives up with 503 provider_unavailable after maxWaitMs in the queue', async () => {
    const limiter = limiterFor({ maxConcurrent: 1 });
    const g = gate();
    const first = runLimited(limiter, g.task, { name: 'Test' });
    await until(() => g.started === 1);
    const err = await rejection(runLimited(limiter, g.task, { name: 'Test', maxWaitMs: 20 }));
    expect(err).toMatchObject({ code: 'provider_unavailable' });
    expect(err.message).toBe('Test is busy (no turn within 20 ms); try again later');
    g.releaseAll();
    await first;
    expect(g.started).toBe(1);
  });

  it('refuses calls beyond maxQueued at once', async () => {
    const limiter = limiterFor({ maxConcurrent: 1, maxQueued: 2 });
    const g = gate();
    const first = runLimited(limiter, g.task, { name: 'Test' });
    await until(() => g.started === 1);
    const queued = [1, 2].map(() => runLimited(limiter, g.task, { name: 'Test' }));
    const err = await rejection(runLimited(limiter, g.task, { name: 'Test' }));
    expect(err).toMatchObject({ code: 'provider_unavailable' });
    expect(err.message).toBe('Test is busy (too many calls waiting); try again later');
    await drain(g, 3);
    expect(await Promise.all([first, ...queued])).toEqual(['done', 'done', 'done']);
  });

  it('spends a reservoir: past the quota, calls wait for the refresh', async () => {
    const limiter = limiterFor({ reservoir: { amount: 2, refreshMs: 60_000 } });
    // Only the call past the quota has a short wait: the first two may take their time to start.
    const call = (maxWaitMs = 30_000) => runLimited(limiter, async () => 'ok', { name: 'Test', maxWaitMs });
    expect(await Promise.all([call(), call()])).toEqual(['ok', 'ok']);
    expect(await rejection(call(50))).toMatchObject({ code: 'provider_unavailable' });
  });

  it('on close, fails queued calls and lets the running one finish', async () => {
    const limiter = createLimiter('test', { maxConcurrent: 1 });
    const g = gate();
    const running = runLimited(limiter, g.task, { name: 'Test' });
    await until(() => g.started === 1);
    const queued = runLimited(limiter, g.task, { name: 'Test' });
    const closing = closeLimiter(limiter);
    expect(await rejection(queued)).toMatchObject({ code: 'provider_unavailable' });
    g.releaseAll();
    expect(await running).toBe('done');
    await closing;
    expect(g.started).toBe(1);
  });
});

/** Null without a Redis server: the global setup has said so, and these skip. */
const redisUrl = inject('redisUrl');

describe.skipIf(!redisUrl)('limits shared through Redis', () => {
  const runId = `test-${randomUUID()}`;
  const redis = { url: redisUrl! };
  let fake: FakeBrasilApi;
  const cnpj = makeCnpj('11222333');

  beforeAll(async () => {
    fake = await startFakeBrasilApi();
    fake.add(brasilApiCompany({ cnpj }));
  });
  afterAll(async () => {
    await fake.close();
    const client = new Redis(redisUrl!);
    const keys = await client.keys(`b_prospecta:provider:${runId}*`);
    if (keys.length > 0) await client.del(...keys);
    await client.quit();
  });

  it('two instances with the same provider id share maxConcurrent 1', async () => {
    const id = `${runId}-shared`;
    const instances = [1, 2].map(() => {
      const limiter = limiterFor({ maxConcurrent: 1, minTime: 1 }, id, redis);
      return new BrasilApiSource({ baseUrl: fake.url, limiter });
    });
    fake.next({ delayMs: 20 }, 6);
    const lookups = [0, 1, 2, 3, 4, 5].map((i) => instances[i % 2]!.lookup(cnpj));
    expect((await Promise.all(lookups)).every((record) => record?.cnpj === cnpj)).toBe(true);
    expect(fake.requests).toHaveLength(6);
    expect(fake.maxInFlight).toBe(1);
  });

  it('applies changed limits to a budget Redis already holds', async () => {
    const id = `${runId}-changed`;
    const before = limiterFor({ maxConcurrent: 3 }, id, redis);
    await before.ready();
    await closeLimiter(open.pop()!);

    const limiter = limiterFor({ maxConcurrent: 1 }, id, redis);
    const g = gate();
    const calls = [1, 2, 3].map(() => runLimited(limiter, g.task, { name: 'Test' }));
    await until(() => g.started === 1);
    // Under the old maxConcurrent 3, the budget in Redis would let another start now.
    expect(await limiter.check()).toBe(false);
    expect(g.started).toBe(1);
    await drain(g, 3);
    await Promise.all(calls);
    expect(g.maxRunning).toBe(1);
  });
});
