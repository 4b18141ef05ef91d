import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CircuitBreaker } from '../../../server/outbound/circuit-breaker.ts';
import { backoff } from '../../../server/lib/backoff.ts';
import { withRetries, type Attempt, type AttemptFailure } from '../../../server/outbound/retry.ts';
import { virtualClock, type VirtualClock } from '../../helpers/virtual-clock.ts';

class GaveUp extends Error {
  constructor(readonly last: AttemptFailure) {
    super(`gave up: ${last.failure}`);
  }
}
const fail = (last: AttemptFailure) => new GaveUp(last);

/** Attempts that answer `outcomes` in turn (the last one repeated), each timed on `clock`. */
function scripted<T>(clock: VirtualClock, ...outcomes: Attempt<T>[]) {
  const at: number[] = [];
  const attempt = async () => {
    at.push(clock.now());
    return outcomes[Math.min(at.length - 1, outcomes.length - 1)]!;
  };
  return { attempt, at };
}

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

const failed: AttemptFailure = { failure: 'HTTP 503', kind: 'failed' };

// Waits between attempts pass on a virtual clock: a test asserts the wait asked for, never spends it.
let clock: VirtualClock;
beforeEach(() => {
  clock = virtualClock();
});
afterEach(() => vi.restoreAllMocks());

describe('withRetries', () => {
  it('answers the first value without retrying', async () => {
    const { attempt, at } = scripted(clock, { value: 'ok' });
    expect(await withRetries(attempt, { fail, clock })).toBe('ok');
    expect(at).toHaveLength(1);
  });

  it('retries failures maxRetries times, then throws the caller’s error for the last one', async () => {
    const { attempt, at } = scripted<string>(clock, failed, { failure: 'HTTP 502', kind: 'failed' });
    const err = await rejection(withRetries(attempt, { fail, clock, maxRetries: 3, backoffMs: 1 }));
    expect(err).toBeInstanceOf(GaveUp);
    expect(err.last).toEqual({ failure: 'HTTP 502', kind: 'failed' });
    expect(at).toHaveLength(4);
  });

  it('gets the value from a retry', async () => {
    const { attempt, at } = scripted(clock, failed, failed, { value: 'third time' });
    expect(await withRetries(attempt, { fail, clock, backoffMs: 1 })).toBe('third time');
    expect(at).toHaveLength(3);
  });

  it('does not retry a final failure', async () => {
    const { attempt, at } = scripted<string>(clock, { failure: 'HTTP 403', kind: 'final' });
    expect((await rejection(withRetries(attempt, { fail, clock }))).last.failure).toBe('HTTP 403');
    expect(at).toHaveLength(1);
  });

  it('waits as long as the service asked, and fails at once when that is over the cap', async () => {
    const asked = scripted<string>(clock, { failure: 'HTTP 429', kind: 'rate_limited', retryAfterMs: 200 }, { value: 'ok' });
    expect(await withRetries(asked.attempt, { fail, clock, backoffMs: 1 })).toBe('ok');
    expect(clock.waits).toEqual([200]);
    expect(asked.at[1]! - asked.at[0]!).toBe(200);

    const tooLong = scripted<string>(clock, { failure: 'HTTP 429', kind: 'rate_limited', retryAfterMs: 120_000 });
    const err = await rejection(withRetries(tooLong.attempt, { fail, clock, maxRetryAfterMs: 10_000 }));
    expect(err.last.retryAfterMs).toBe(120_000);
    expect(tooLong.at).toHaveLength(1);
  });

  it('stops waiting to retry when the signal aborts, with its reason, and makes no further attempt', async () => {
    const { attempt, at } = scripted<string>(clock, failed);
    const controller = new AbortController();
    // The system clock: the abort must end a real timer (it ends before any time passes).
    const call = withRetries(attempt, { fail, backoffMs: 5_000, signal: controller.signal });
    await vi.waitFor(() => expect(at).toHaveLength(1));
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
    expect(at).toHaveLength(1);
  });

  it('feeds the breaker with breakdowns only, and stops retrying once it opens', async () => {
    const breaker = new CircuitBreaker({ threshold: 2 });
    const limited = scripted<string>(clock, { failure: 'HTTP 429', kind: 'rate_limited', retryAfterMs: 1 });
    await rejection(withRetries(limited.attempt, { fail, clock, breaker, maxRetries: 3 }));
    expect(limited.at).toHaveLength(4);
    expect(breaker.retryInMs()).toBe(0);

    const broken = scripted<string>(clock, failed);
    await rejection(withRetries(broken.attempt, { fail, clock, breaker, maxRetries: 5, backoffMs: 1 }));
    expect(broken.at).toHaveLength(2);
    expect(breaker.allow()).toBe(false);
  });

  it('closes the breaker on a value', async () => {
    const breaker = new CircuitBreaker({ threshold: 2 });
    breaker.failure();
    const { attempt } = scripted(clock, { value: 'ok' });
    await withRetries(attempt, { fail, clock, breaker });
    breaker.failure();
    expect(breaker.allow()).toBe(true);
  });
});

describe('backoff', () => {
  it('doubles with each retry, between half and all of its ceiling, and never passes the cap', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect([0, 1, 2].map((retry) => backoff(retry, 250, 10_000))).toEqual([125, 250, 500]);
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
    expect(backoff(2, 250, 10_000)).toBeCloseTo(1000, 2);
    expect(backoff(10, 250, 10_000)).toBeCloseTo(10_000, 1);
  });
});
