import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

/** Null without a Redis server: the global setup has said so, and the shared limits skip. */
const redisUrl = inject('redisUrl');

function parsePolicy(header: string | null) {
  const m = /^"standard";q=(\d+);w=(\d+)$/.exec(header ?? '');
  expect(m, `RateLimit-Policy: ${header}`).not.toBeNull();
  return { q: Number(m![1]), w: Number(m![2]) };
}

function parseLimit(header: string | null) {
  const m = /^"standard";r=(\d+);t=(\d+)$/.exec(header ?? '');
  expect(m, `RateLimit: ${header}`).not.toBeNull();
  return { r: Number(m![1]), t: Number(m![2]) };
}

describe('in-process limits', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => app.close());

  it('every response, errors included, carries RateLimit-Policy and RateLimit', async () => {
    const { apiKey } = await app.workspace();
    for (const [path, key] of [
      ['/v1/api/credits', apiKey],
      ['/v1/api/credits', undefined],
      ['/v1/unknown', apiKey],
    ] as const) {
      const res = await app.request('GET', path, { key });
      expect(parsePolicy(res.headers.get('ratelimit-policy'))).toEqual({ q: 5, w: 60 });
      const { t } = parseLimit(res.headers.get('ratelimit'));
      expect(t).toBeGreaterThan(0);
      expect(t).toBeLessThanOrEqual(60);
    }
  });

  it('counts down per credential, then answers 429 with Retry-After', async () => {
    const { apiKey } = await app.workspace();
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await app.request('GET', '/v1/api/credits', { key: apiKey });
      expect(res.status).toBe(200);
      remaining.push(parseLimit(res.headers.get('ratelimit')).r);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const limited = await app.request('GET', '/v1/api/credits', { key: apiKey });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate_limited', message: expect.any(String) });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Another credential of the same workspace has its own quota.
    const other = await app.workspace();
    expect((await app.request('GET', '/v1/api/credits', { key: other.apiKey })).status).toBe(200);
  });

  it('unauthenticated requests are limited per client IP', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await app.request('GET', '/health')).status);
    expect(statuses.slice(-1)).toEqual([429]);
  });
});

describe.skipIf(!redisUrl)('limits shared through Redis', () => {
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl!);
    await redis.del('prospecta:rl:ip:127.0.0.1');
    const env = { RATE_LIMIT_PER_MINUTE: '6', REDIS_URL: redisUrl! };
    a = await startTestApp(env);
    b = await startTestApp(env);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await redis.del('prospecta:rl:ip:127.0.0.1');
    redis.disconnect();
  });

  it('two instances enforce one quota', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await (i % 2 ? a : b).request('GET', '/health')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    const res = await a.request('GET', '/health');
    expect(parseLimit(res.headers.get('ratelimit')).r).toBe(0);
  });
});
