/**
 * Running it for real, at the HTTP edge: `GET /` leads to the dashboard, and TRUST_PROXY decides
 * whether the client's address (its rate-limit bucket without a credential) comes from
 * X-Forwarded-For, and then only from the entry the proxy itself appended.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** What the rate limit has left for an anonymous request sent with this X-Forwarded-For. */
async function remainingFor(forwardedFor: string): Promise<number> {
  const res = await app!.request('GET', '/v1/api/credits', { headers: { 'X-Forwarded-For': forwardedFor } });
  expect(res.status).toBe(401);
  return Number(/;r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
}

describe('the root', () => {
  it('GET / redirects to the dashboard', async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/dashboard');
  });
});

describe('TRUST_PROXY', () => {
  it('off (the default): X-Forwarded-For is ignored, every anonymous caller here is one address', async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100' });
    const first = await remainingFor('203.0.113.1');
    expect(await remainingFor('203.0.113.2')).toBe(first - 1);
  });

  it('on: the address the proxy appended is the client’s; what the client put before it is not', async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100', TRUST_PROXY: 'true' });
    const first = await remainingFor('203.0.113.1');
    expect(await remainingFor('203.0.113.2'), 'another client, another bucket').toBe(first);
    expect(await remainingFor('203.0.113.1'), 'the same client again').toBe(first - 1);
    // A client choosing its own bucket by sending a header the proxy then appends to: still its own address.
    expect(await remainingFor('198.51.100.7, 203.0.113.1')).toBe(first - 2);
  });
});
