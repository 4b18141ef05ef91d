/**
 * A short circuit breaker per provider: after `threshold` failures in a row (timeouts, 5xx,
 * network errors) the provider is skipped for `coolDownMs`; then one trial call decides whether it
 * closes again. A skipped provider costs the cascade nothing and spares the provider our retries.
 */
export interface BreakerOptions {
  /** @default 5 */
  threshold?: number;
  /** @default 30_000 */
  coolDownMs?: number;
  now?: () => number;
}

export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;
  private readonly threshold: number;
  private readonly coolDownMs: number;
  private readonly now: () => number;

  constructor(options: BreakerOptions = {}) {
    this.threshold = options.threshold ?? 5;
    this.coolDownMs = options.coolDownMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /** Whether a call may go ahead; while half-open only one trial call does. */
  allow(): boolean {
    if (this.failures < this.threshold) return true;
    if (this.now() < this.openUntil || this.trialInFlight) return false;
    this.trialInFlight = true;
    return true;
  }

  /** Whether it is not closed: calls skipped, or one trial call deciding (for the metrics; no side effect). */
  get open(): boolean {
    return this.failures >= this.threshold;
  }

  /** Milliseconds until a trial call is allowed; 0 when closed. */
  retryInMs(): number {
    return this.failures < this.threshold ? 0 : Math.max(0, this.openUntil - this.now());
  }

  success(): void {
    this.failures = 0;
    this.trialInFlight = false;
  }

  failure(): void {
    this.failures++;
    this.trialInFlight = false;
    if (this.failures >= this.threshold) this.openUntil = this.now() + this.coolDownMs;
  }
}
