/**
 * One Bottleneck limiter per outside service (a provider, BrasilAPI, the model), shared by every
 * caller in the process. With a Redis URL the limiter uses Bottleneck's clustering, so all server
 * instances draw on one budget per service. Processes make Bottleneck's yields cheaper at start-up
 * (`bottleneck-yield.ts`).
 */
import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import { loadWhenUsed } from '../lib/load-when-used.ts';
import { ServiceError } from '../lib/errors.ts';
import { forgetLimiter } from '../lib/metrics.ts';
import { duration } from './duration.ts';

/** Only a limiter shared through Redis needs the client. */
const ioredis = loadWhenUsed<{ Redis: typeof Redis }>('ioredis');

/** A service's documented limits, as a provider declares them. */
export interface DeclaredLimits {
  /** Calls per second the service allows. */
  perSecond?: number;
  /** Calls per minute (a quota refilled every minute). */
  perMinute?: number;
  /** Calls in flight at once. */
  maxConcurrent: number;
  /** Calls allowed to wait in one process before new ones are refused at once. */
  maxQueued?: number;
}

/**
 * Services count arrivals, and arrivals jitter (a busy event loop, another instance's call a few
 * milliseconds late): pacing at 95 % of a per-second limit keeps a steady stream under it.
 */
const PACE = 0.95;

/** Bottleneck's settings for one service, in our terms. */
export interface Throttle {
  /** Calls in flight at once. */
  maxConcurrent?: number;
  /** Milliseconds between the starts of two calls. */
  minTime?: number;
  /** A quota: `amount` calls per `refreshMs` window (per minute, per day...). */
  reservoir?: { amount: number; refreshMs: number };
  /**
   * Calls allowed to wait in this process; further calls fail at once. A call that gives up while
   * queued still spends its turn (Bottleneck cannot remove it), so this also bounds that waste.
   */
  maxQueued?: number;
}

/**
 * Bottleneck settings for a service's documented limits: starts spaced so that no second holds
 * more than `perSecond` calls, and a per-minute quota refilled every minute.
 */
export function throttleFor(limits: DeclaredLimits): Throttle {
  return {
    maxConcurrent: limits.maxConcurrent,
    ...(limits.perSecond ? { minTime: 1000 / (limits.perSecond * PACE) } : {}),
    ...(limits.perMinute ? { reservoir: { amount: limits.perMinute, refreshMs: 60_000 } } : {}),
    ...(limits.maxQueued ? { maxQueued: limits.maxQueued } : {}),
  };
}

export interface SharedBudget {
  url: string;
  /** Redis errors; Bottleneck swallows them when nobody listens. */
  onError?: (err: Error) => void;
}

export function createLimiter(id: string, limits: Throttle, redis?: SharedBudget): Bottleneck {
  const settings = {
    maxConcurrent: limits.maxConcurrent ?? null,
    minTime: limits.minTime ?? 0,
    reservoirRefreshAmount: limits.reservoir?.amount ?? null,
    reservoirRefreshInterval: limits.reservoir?.refreshMs ?? null,
    highWater: limits.maxQueued ?? null,
    // Refuse the newcomer rather than drop a call that has already waited.
    strategy: Bottleneck.strategy.OVERFLOW,
  };
  const common = { id: `prospecta:provider:${id}`, reservoir: limits.reservoir?.amount ?? null, ...settings };
  if (!redis) return new Bottleneck(common);

  const limiter = new Bottleneck({
    ...common,
    datastore: 'ioredis',
    Redis: ioredis().Redis,
    clientOptions: redis.url,
    clearDatastore: false,
  });
  const onError = redis.onError ?? (() => {});
  limiter.on('error', onError);
  // Redis keeps the settings of whichever instance created them first; re-apply ours so that a
  // changed limit takes effect on deploy. The live reservoir is left alone: resetting it on every
  // start would hand out extra calls.
  Promise.resolve(limiter.updateSettings(settings)).catch(onError);
  return limiter;
}

export interface LimitedCallOptions {
  /** The service's name, for error messages: `Hunter`, `BrasilAPI`, `The model`. */
  name: string;
  /** Aborting drops a queued call (the service is never called) and rejects with the reason. */
  signal?: AbortSignal;
  /**
   * How long a call may wait for its turn before failing with a `provider_unavailable` ServiceError.
   * @default 30_000
   */
  maxWaitMs?: number;
  /**
   * Bottleneck's priority, 0 (first) to 9; a waiting call of a lower number always starts before
   * one of a higher. @default INTERACTIVE_PRIORITY
   */
  priority?: number;
}

/** Requests someone waits for. */
export const INTERACTIVE_PRIORITY = 5;
/** Background work (jobs): served when no interactive call waits for the service. */
export const BACKGROUND_PRIORITY = 8;

const busy = (name: string, why: string) => new ServiceError('provider_unavailable', `${name} is busy (${why}); try again later`);

/**
 * Runs `task` when the limiter allows. Only the wait is bounded and abortable here: once started,
 * the task owns its own timeout and should honour the same signal.
 */
export function runLimited<T>(
  limiter: Bottleneck,
  task: () => Promise<T>,
  { name, signal, maxWaitMs = 30_000, priority = INTERACTIVE_PRIORITY }: LimitedCallOptions,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    let state: 'waiting' | 'started' | 'gave up' = 'waiting';
    const stopWaiting = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const giveUp = (reason: unknown) => {
      if (state !== 'waiting') return;
      state = 'gave up';
      stopWaiting();
      reject(reason);
    };
    const onAbort = () => giveUp(signal!.reason);
    const timer = setTimeout(() => giveUp(busy(name, `no turn within ${duration(maxWaitMs)}`)), maxWaitMs);
    signal?.addEventListener('abort', onAbort, { once: true });

    limiter
      .schedule({ priority }, async () => {
        if (state !== 'waiting') return undefined;
        state = 'started';
        stopWaiting();
        return task();
      })
      .then(
        (value) => {
          if (state === 'started') resolve(value as T);
        },
        (err: unknown) => {
          if (state === 'started') reject(err);
          // Bottleneck refused or dropped the call: the queue is full or the limiter is stopping.
          else giveUp(busy(name, 'too many calls waiting'));
        },
      );
  });
}

/**
 * For shutdown: refuses new calls, fails the queued ones, waits for running calls (each bounded
 * by its own timeout), then disconnects from Redis.
 */
export async function closeLimiter(limiter: Bottleneck): Promise<void> {
  forgetLimiter(limiter);
  await limiter.stop({ dropWaitingJobs: true });
  await limiter.disconnect();
}
