/**
 * The one retry loop of outgoing calls. Each attempt gives a value or says why it failed; what
 * may succeed next time is retried a bounded number of times, after the wait the service asked
 * for (up to a cap) or else an exponential backoff with jitter. The loop stops early when the
 * caller's signal aborts or the service's circuit breaker opens, and then throws the caller's
 * error for the last failure.
 */
import { backoff } from '../lib/backoff.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import { systemClock, type Clock } from './clock.ts';

export interface AttemptFailure {
  /** What went wrong, short, for messages: `HTTP 503`, `no answer within 10 s`. */
  failure: string;
  /**
   * - `rate_limited`: the service is well but asks us to slow down (a 429). Retried, not held
   *   against it by the breaker, and its Retry-After holds every call to the service.
   * - `failed`: it broke (5xx, timeout, lost connection, garbage). Retried, and counted by the breaker.
   * - `final`: another attempt would get the same answer (a refusal, a malformed answer). Not retried.
   */
  kind: 'rate_limited' | 'failed' | 'final';
  /** How long the service asked us to wait (its Retry-After), when it said. */
  retryAfterMs?: number | null;
}

export type Attempt<T> = { value: T } | AttemptFailure;

export interface RetryPolicy {
  /** Retries after the first attempt. @default 2 */
  maxRetries?: number;
  /** The first backoff when the service asks for no wait; doubles with each retry, with jitter. @default 250 */
  backoffMs?: number;
  /** A longer wait asked for than this is not waited for: the call fails at once. Also caps the backoff. @default 10_000 */
  maxRetryAfterMs?: number;
}

export const RETRY_DEFAULTS = { maxRetries: 2, backoffMs: 250, maxRetryAfterMs: 10_000 } as const satisfies Required<RetryPolicy>;

export interface RetryOptions extends RetryPolicy {
  /** Aborting ends the wait before a retry, rejecting with the signal's reason. */
  signal?: AbortSignal;
  /** Told of every outcome; once it is open, nothing more is retried. */
  breaker?: CircuitBreaker;
  /** The error thrown for the last failure when retrying stops. */
  fail(last: AttemptFailure): Error;
  /** What waits between attempts. @default systemClock */
  clock?: Clock;
}

export async function withRetries<T>(attempt: () => Promise<Attempt<T>>, options: RetryOptions): Promise<T> {
  const { signal, breaker, clock = systemClock } = options;
  const { maxRetries = RETRY_DEFAULTS.maxRetries, backoffMs = RETRY_DEFAULTS.backoffMs, maxRetryAfterMs = RETRY_DEFAULTS.maxRetryAfterMs } = options;
  for (let retry = 0; ; retry++) {
    const outcome = await attempt();
    if ('value' in outcome) {
      breaker?.success();
      return outcome.value;
    }
    if (outcome.kind === 'failed') breaker?.failure();
    const wait = outcome.retryAfterMs ?? backoff(retry, backoffMs, maxRetryAfterMs);
    if (outcome.kind === 'final' || retry >= maxRetries || wait > maxRetryAfterMs || (breaker && !breaker.allow())) {
      throw options.fail(outcome);
    }
    await clock.sleep(wait, signal).catch(() => {
      throw signal!.reason;
    });
  }
}
