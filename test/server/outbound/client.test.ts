/**
 * The outbound client around one service: the limiter, the pause a 429 asks for, a timeout per
 * attempt, the breaker, and the errors a call can end with (the caller's, a ServiceError, or the
 * reason of its abort; never what the transport threw).
 */
import type Bottleneck from 'bottleneck';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ServiceError } from '../../../server/lib/errors.ts';
import { patchBottleneckYield } from '../../../server/outbound/bottleneck-yield.ts';
import { CircuitBreaker } from '../../../server/outbound/circuit-breaker.ts';
import { OutboundClient, type CallOptions, type OutboundClientOptions } from '../../../server/outbound/client.ts';
import { closeLimiter, createLimiter } from '../../../server/outbound/limiter.ts';
import type { Attempt, AttemptFailure } from '../../../server/outbound/retry.ts';
import { eventually } from '../../helpers/eventually.ts';
import { virtualClock } from '../../helpers/virtual-clock.ts';

beforeAll(patchBottleneckYield);

const open: Bottleneck[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(closeLimiter));
});

function client(options: Partial<OutboundClientOptions> = {}) {
  const limiter = createLimiter('client-test', { maxConcurrent: 4 });
  open.push(limiter);
  return new OutboundClient({ name: 'Acme', limiter, backoffMs: 1, ...options });
}

/** Transport errors are a lost connection; a timeout is what the client says it is. */
const classify: CallOptions['classify'] = (_err, timeout) => timeout ?? { failure: 'connection failed', kind: 'failed' };

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

/** An attempt that never answers by itself: it ends when its signal aborts, as fetch does. */
const hang = (signal: AbortSignal) =>
  new Promise<Attempt<string>>((_, reject) => signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));

describe('OutboundClient.call', () => {
  it('answers the attempt’s value', async () => {
    expect(await client().call(async () => ({ value: 42 }), { classify })).toBe(42);
  });

  it('times each attempt out, retries, and ends with a provider_unavailable ServiceError by default', async () => {
    let attempts = 0;
    const err = await rejection(
      client({ timeoutMs: 50 }).call((signal) => (attempts++, hang(signal)), { classify }),
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'provider_unavailable', details: {} });
    expect(err.message).toBe('Acme is unavailable (no answer within 50 ms); try again later');
    expect(attempts).toBe(3);
  });

  it('hands what the transport threw to classify, and throws the caller’s error, never the transport’s', async () => {
    const seen: unknown[] = [];
    const lost = new TypeError('fetch failed');
    const err = await rejection(
      client().call(
        async () => {
          throw lost;
        },
        {
          classify: (thrown, timeout) => (seen.push(thrown), classify(thrown, timeout)),
          fail: (last) => new Error(`Acme: ${last.failure}`),
        },
      ),
    );
    expect(err.message).toBe('Acme: connection failed');
    expect(seen).toEqual([lost, lost, lost]);
  });

  it('lets classify end the call with the caller’s own error, without retrying', async () => {
    class Refused extends Error {}
    let attempts = 0;
    const refused = new Refused('Acme refused the key');
    const err = await rejection(
      client().call(
        async () => {
          attempts++;
          throw refused;
        },
        {
          classify: (thrown) => {
            throw thrown;
          },
        },
      ),
    );
    expect(err).toBe(refused);
    expect(attempts).toBe(1);
  });

  it('ends with the reason of the caller’s abort, in flight or queued', async () => {
    const controller = new AbortController();
    const classifySpy = vi.fn(classify);
    const attempt = vi.fn(hang);
    const call = client().call(attempt, { signal: controller.signal, classify: classifySpy });
    await eventually(() => attempt.mock.calls.length === 1, { message: 'the attempt to start' });
    const reason = new Error('client went away');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
    expect(classifySpy).not.toHaveBeenCalled();
  });

  it('passes the asked-for wait on as retryAfterSeconds', async () => {
    const limited: AttemptFailure = { failure: 'HTTP 429', kind: 'rate_limited', retryAfterMs: 120_000 };
    const err = await rejection(client().call(async () => limited, { classify }));
    expect(err).toMatchObject({ code: 'provider_unavailable', details: { retryAfterSeconds: 120 } });
    expect(err.message).toBe('Acme is unavailable (HTTP 429); try again later');
  });

  it('skips a service whose breaker is open, without calling it', async () => {
    const breaker = new CircuitBreaker({ threshold: 1 });
    breaker.failure();
    const attempt = vi.fn(async () => ({ value: 'never' }));
    const err = await rejection(client({ breaker }).call(attempt, { classify }));
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.message).toBe('Acme is failing; skipped for 30 s');
    expect(attempt).not.toHaveBeenCalled();
  });
});

describe('a 429 pauses the whole service', () => {
  it('holds every call that gets its turn until the Retry-After has passed', async () => {
    // On a virtual clock held still: the second call arrives during the pause, which then passes
    // when the test moves the clock, never spent.
    const clock = virtualClock({ held: true });
    const acme = client({ clock });
    const starts: number[] = [];
    let first = true;
    const attempt = async (): Promise<Attempt<string>> => {
      starts.push(clock.now());
      if (!first) return { value: 'ok' };
      first = false;
      return { failure: 'HTTP 429', kind: 'rate_limited', retryAfterMs: 300 };
    };
    const limited = acme.call(attempt, { classify });
    await vi.waitFor(() => expect(clock.waits).toEqual([300]));
    const other = acme.call(attempt, { classify });
    // The other call got its turn and waits out what is left of the pause, unsent.
    await vi.waitFor(() => expect(clock.waits).toEqual([300, 300]));
    expect(starts).toHaveLength(1);
    clock.advance(300);
    expect(await Promise.all([limited, other])).toEqual(['ok', 'ok']);
    expect(starts).toHaveLength(3);
    expect(Math.min(starts[1]!, starts[2]!) - starts[0]!).toBe(300);
  });

  it('fails a call at once, as the 429 did, while the pause is longer than it would wait', async () => {
    const acme = client({ maxRetryAfterMs: 1_000 });
    const limited: AttemptFailure = { failure: 'HTTP 429', kind: 'rate_limited', retryAfterMs: 60_000 };
    await rejection(acme.call(async () => limited, { classify }));
    const attempt = vi.fn(async () => ({ value: 'never' }));
    const err = await rejection(acme.call(attempt, { classify }));
    expect(err.message).toBe('Acme is unavailable (HTTP 429); try again later');
    expect(err.details.retryAfterSeconds).toBeGreaterThan(55);
    expect(attempt).not.toHaveBeenCalled();
  });
});
