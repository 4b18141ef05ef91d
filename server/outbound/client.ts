/**
 * How prospecta calls a service outside it (a data provider, BrasilAPI, the model). Every
 * attempt, retries included, waits for the service's limiter, then for any pause a 429 asked
 * for; each has its own timeout joined to the caller's signal; failures go through the one
 * retry loop (`retry.ts`), and a circuit breaker, when given, skips a service that keeps failing.
 * Callers keep what is theirs: how to make an attempt and read its answer, and what a thrown
 * error means to them.
 *
 * A call ends with the value, the caller's error for its last failure, a `provider_unavailable`
 * ServiceError when the service was not called at all (no turn in time, breaker open), or the
 * reason of the caller's abort; never with a raw fetch or SDK error.
 */
import type Bottleneck from 'bottleneck';
import { ServiceError } from '../lib/errors.ts';
import { serviceMeter, watchLimiter, type CallOutcome, type ServiceMeter } from '../lib/metrics.ts';
import { childTraceparent, type TraceContext } from '../lib/trace-context.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import { systemClock, type Clock } from './clock.ts';
import { duration } from './duration.ts';
import { BACKGROUND_PRIORITY, runLimited } from './limiter.ts';
import { RETRY_DEFAULTS, withRetries, type Attempt, type AttemptFailure, type RetryPolicy } from './retry.ts';

export interface OutboundClientOptions extends RetryPolicy {
  /** The service's name in messages: `Hunter`, `BrasilAPI`, `The model`. */
  name: string;
  /** The service's limiter (`createLimiter`). */
  limiter: Bottleneck;
  /** Skips the service while it keeps failing. @default none */
  breaker?: CircuitBreaker;
  /** Per attempt, the answer's body included. @default 10_000 */
  timeoutMs?: number;
  /** How long one attempt may wait for its turn. @default 30_000 */
  maxQueueWaitMs?: number;
  /**
   * The service's id in the metrics (a provider's id, `brasilapi`, `llm`): its attempts, their
   * times, its queue and breaker are exported under it. Never a key or a workspace. @default not counted
   */
  service?: string;
  /** What a 429's pause and the waits between attempts are measured and spent on. @default systemClock */
  clock?: Clock;
  /**
   * The longest pause a 429's `Retry-After` may put on every call of the service: a service that
   * asks for days is called again after this, so one answer cannot switch it off until a restart.
   * @default 300_000 (PROVIDER_MAX_PAUSE_SECONDS)
   */
  maxPauseMs?: number;
}

export const DEFAULT_MAX_PAUSE_MS = 300_000;

export interface CallOptions {
  /** The caller's: aborting drops a queued attempt, ends the one in flight and any wait. */
  signal?: AbortSignal;
  /**
   * What an error thrown by an attempt means, the caller's abort aside (that ends the call with
   * its reason). `timeout` is given when the attempt ran out of time, and is usually the answer.
   * It may throw the caller's own error to end the call at once.
   */
  classify(err: unknown, timeout: AttemptFailure | undefined): AttemptFailure;
  /**
   * The caller's error for the last failure. @default a `provider_unavailable` ServiceError,
   * "<name> is unavailable (<failure>); try again later", with the asked-for wait as `retryAfterSeconds`
   */
  fail?(last: AttemptFailure): Error;
  /** The caller's trace: each attempt gets a child `traceparent` of it to send. */
  trace?: TraceContext;
}

/**
 * One attempt at the service: `signal` carries the caller's abort and the attempt's timeout;
 * `traceparent`, when the caller has a trace, is the header this attempt should send.
 */
export type AttemptFn<T> = (signal: AbortSignal, traceparent: string | undefined) => Promise<Attempt<T>>;

const BACKGROUND_WAIT_FACTOR = 4;

const OUTCOME_OF: Record<AttemptFailure['kind'], CallOutcome> = { rate_limited: 'rate_limited', failed: 'failed', final: 'rejected' };

export class OutboundClient {
  /** Until when the service asked every call to wait, and the 429 that said so. */
  private pause: { until: number; said: AttemptFailure } | null = null;
  /** Null when the options name no `service`. */
  private readonly meter: ServiceMeter | null;

  constructor(private readonly options: OutboundClientOptions) {
    this.meter = options.service ? serviceMeter(options.service) : null;
    if (options.service) watchLimiter(options.service, options.limiter, options.breaker);
  }

  /** Until when the service asked every call to wait; null when it is not paused. */
  pausedUntil(): Date | null {
    const now = (this.options.clock ?? systemClock).now();
    return this.pause && this.pause.until > now ? new Date(this.pause.until) : null;
  }

  /** Runs `attempt` (given a signal that also carries the timeout) until it gives a value or retrying stops. */
  async call<T>(attempt: AttemptFn<T>, { signal, classify, fail, trace }: CallOptions): Promise<T> {
    const { name, limiter, breaker, maxQueueWaitMs = 30_000, maxRetries, backoffMs, maxRetryAfterMs, clock } = this.options;
    if (breaker && !breaker.allow()) {
      this.meter?.attempt('skipped');
      throw new ServiceError('provider_unavailable', `${name} is failing; skipped for ${duration(breaker.retryInMs())}`);
    }
    const limited = () => {
      let started = false;
      const run = () => {
        started = true;
        return this.attempt(attempt, signal, classify, trace);
      };
      // Background work waits behind interactive calls, so it may wait longer for its turn.
      const waiting = trace?.background
        ? runLimited(limiter, run, { name, signal, maxWaitMs: maxQueueWaitMs * BACKGROUND_WAIT_FACTOR, priority: BACKGROUND_PRIORITY })
        : runLimited(limiter, run, { name, signal, maxWaitMs: maxQueueWaitMs });
      if (!this.meter) return waiting;
      return waiting.catch((err: unknown) => {
        // Never sent: no turn in time, the queue full, or the caller gone while it waited.
        if (!started) this.meter?.attempt(signal?.aborted ? 'aborted' : 'skipped');
        throw err;
      });
    };
    return withRetries(limited, { maxRetries, backoffMs, maxRetryAfterMs, breaker, signal, clock, fail: fail ?? ((last) => this.unavailable(last)) });
  }

  private async attempt<T>(
    attempt: AttemptFn<T>,
    signal: AbortSignal | undefined,
    classify: CallOptions['classify'],
    trace: TraceContext | undefined,
  ): Promise<Attempt<T>> {
    const { timeoutMs = 10_000, maxRetryAfterMs = RETRY_DEFAULTS.maxRetryAfterMs, clock = systemClock, maxPauseMs = DEFAULT_MAX_PAUSE_MS } = this.options;
    // A 429 seen by any call holds every call of this service that got its turn meanwhile; one
    // longer than the caller would wait for its own Retry-After fails the call as that 429 did.
    const pause = this.pause;
    const paused = pause ? pause.until - clock.now() : 0;
    if (pause && paused > maxRetryAfterMs) {
      this.meter?.attempt('skipped');
      return { ...pause.said, retryAfterMs: paused };
    }
    if (paused > 0) {
      await clock.sleep(paused, signal).catch(() => {
        this.meter?.attempt('aborted');
        throw signal!.reason;
      });
    }

    const timeout = AbortSignal.timeout(timeoutMs);
    const started = this.meter ? performance.now() : 0;
    const seconds = () => (performance.now() - started) / 1000;
    let outcome: Attempt<T>;
    let label: CallOutcome | undefined;
    try {
      outcome = await attempt(signal ? AbortSignal.any([signal, timeout]) : timeout, trace ? childTraceparent(trace) : undefined);
    } catch (err) {
      if (signal?.aborted) {
        this.meter?.attempt('aborted', seconds());
        throw signal.reason;
      }
      if (timeout.aborted) label = 'timeout';
      try {
        outcome = classify(err, timeout.aborted ? { failure: `no answer within ${duration(timeoutMs)}`, kind: 'failed' } : undefined);
      } catch (own) {
        // The caller's own error ends the call: an answer another attempt would not change.
        this.meter?.attempt('rejected', seconds());
        throw own;
      }
    }
    this.meter?.attempt(label ?? ('value' in outcome ? 'ok' : OUTCOME_OF[outcome.kind]), seconds());
    if ('kind' in outcome && outcome.kind === 'rate_limited' && outcome.retryAfterMs != null) {
      // The wait is the service's to ask, within our cap: the message and the pause both say the capped one.
      const capped = { ...outcome, retryAfterMs: Math.min(outcome.retryAfterMs, maxPauseMs) };
      const until = clock.now() + capped.retryAfterMs;
      if (until > (this.pause?.until ?? 0)) this.pause = { until, said: capped };
      return capped;
    }
    return outcome;
  }

  private unavailable(last: AttemptFailure): ServiceError {
    const details = last.retryAfterMs == null ? {} : { retryAfterSeconds: Math.ceil(last.retryAfterMs / 1000) };
    return new ServiceError('provider_unavailable', `${this.options.name} is unavailable (${last.failure}); try again later`, details);
  }
}
