/**
 * The one way a test waits for something: retry a check until it passes or a deadline expires.
 * No test sleeps for a fixed time or polls in a loop of its own; on a busy machine a fixed sleep
 * is either too short (a flake) or too long (a slow suite), and a loop without a deadline hangs
 * until the test's timeout says nothing useful.
 *
 * The deadline is generous by default (10 s): it is there to turn a hang into a clear failure,
 * not to measure speed. A passing check returns at its first success, so a large deadline costs
 * nothing when things work.
 *
 * It runs on the real clock, captured when this module loads, so a test that installs fake
 * timers afterwards cannot freeze it (with fake timers, advance the clock instead of waiting).
 */
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const realNow = performance.now.bind(performance);

export interface EventuallyOptions {
  /** How long to keep trying. @default 10_000 */
  timeoutMs?: number;
  /** Pause between two tries. @default 20 */
  intervalMs?: number;
  /** What was awaited, for the failure: "the server to accept connections". */
  message?: string;
}

export const EVENTUALLY_TIMEOUT_MS = 10_000;

/**
 * Calls `check` until it neither throws nor returns `false` (an assertion or a predicate, sync or
 * async), and returns what it returned. Past the deadline, throws the last failure, prefixed with
 * `message`. A try that is still running at the deadline is not waited for.
 */
export async function eventually<T>(check: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Exclude<T, false>> {
  const { timeoutMs = EVENTUALLY_TIMEOUT_MS, intervalMs = 20, message = 'a condition' } = options;
  const deadline = realNow() + timeoutMs;
  let last: unknown = new Error('no try finished');
  let tries = 0;
  let stillRunning = false;
  for (;;) {
    tries++;
    try {
      const value = await withinMs(Promise.resolve().then(check), Math.max(deadline - realNow(), 0));
      if (value !== false) return value as Exclude<T, false>;
      last = new Error('the check returned false');
    } catch (err) {
      if (err === TIMED_OUT) {
        stillRunning = true;
        break;
      }
      last = err;
    }
    if (realNow() + intervalMs > deadline) break;
    await pause(intervalMs);
  }
  const prefix = `Timed out after ${timeoutMs} ms (${tries} tries${stillRunning ? ', the last still running' : ''}) waiting for ${message}`;
  // The last failure itself, so an assertion keeps its expected and actual values for the report.
  if (last instanceof Error) {
    last.message = `${prefix}: ${last.message}`;
    throw last;
  }
  throw new Error(`${prefix}: ${String(last)}`);
}

const TIMED_OUT = Symbol('timed out');

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}

/** `promise`, or a rejection with TIMED_OUT once `ms` have passed. */
function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = realSetTimeout(() => reject(TIMED_OUT), ms);
  });
  return Promise.race([promise, timeout]).finally(() => realClearTimeout(timer));
}
