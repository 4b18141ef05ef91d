/**
 * The time an outgoing call reads and waits on: now, and a sleep its caller's signal can end.
 * The system's by default; tests give a virtual one, so a Retry-After of a second is checked
 * without the test spending that second.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
  /** Resolves after `ms`; rejects when `signal` aborts first (with any error: callers rethrow the signal's reason). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }),
};
