/**
 * A clock for outgoing calls (`server/outbound/clock.ts`) on which waiting costs no time: it
 * starts at the real now, a sleep moves it to the sleeper's wake-up time and resolves on the next
 * turn of the event loop, and every wait asked for is kept, so a test checks that a Retry-After
 * of a second was honoured without spending the second.
 *
 * Sleepers that overlap wake at their own times (now is the latest wake-up reached), as they
 * would on the real clock: two calls both told to wait a second end one second later, not two.
 */
import type { Clock } from '../../server/outbound/clock.ts';

export interface VirtualClock extends Clock {
  /** Every wait asked for, in milliseconds, in the order asked. */
  readonly waits: number[];
  /** Moves now forward, as time passing outside any wait. */
  advance(ms: number): void;
}

export function virtualClock(start = Date.now()): VirtualClock {
  let now = start;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    sleep(ms, signal) {
      waits.push(ms);
      const wake = now + ms;
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        setImmediate(() => {
          if (signal?.aborted) return reject(signal.reason);
          now = Math.max(now, wake);
          resolve();
        });
      });
    },
  };
}
