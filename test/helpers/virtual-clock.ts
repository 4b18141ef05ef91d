/**
 * A clock for outgoing calls (`server/outbound/clock.ts`) on which waiting costs no time. It
 * starts at the real now and keeps every wait asked for, so a test checks that a Retry-After of a
 * second was honoured without spending the second.
 *
 * By default a sleep ends on the next turn of the event loop, moving now to its wake-up time
 * (sleepers that overlap wake at their own times, as on the real clock: two calls told to wait a
 * second end one second later, not two). With `{ held: true }` sleeps end only when the test
 * moves the clock with `advance()`, to arrange what happens during a wait.
 */
import type { Clock } from '../../server/outbound/clock.ts';

export interface VirtualClock extends Clock {
  /** Every wait asked for, in milliseconds, in the order asked. */
  readonly waits: number[];
  /** Moves now forward, ending the sleeps due by then. */
  advance(ms: number): void;
}

export function virtualClock({ start = Date.now(), held = false }: { start?: number; held?: boolean } = {}): VirtualClock {
  let now = start;
  const waits: number[] = [];
  const sleepers = new Set<{ wake: number; end(): void }>();
  const wakeDue = () => {
    for (const sleeper of [...sleepers].sort((a, b) => a.wake - b.wake)) if (sleeper.wake <= now) sleeper.end();
  };
  return {
    waits,
    now: () => now,
    advance(ms) {
      now += ms;
      wakeDue();
    },
    sleep(ms, signal) {
      waits.push(ms);
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const sleeper = {
          wake: now + ms,
          end() {
            sleepers.delete(sleeper);
            signal?.removeEventListener('abort', abort);
            now = Math.max(now, sleeper.wake);
            resolve();
          },
        };
        const abort = () => {
          sleepers.delete(sleeper);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', abort, { once: true });
        sleepers.add(sleeper);
        if (!held) setImmediate(() => sleepers.has(sleeper) && sleeper.end());
      });
    },
  };
}
