/**
 * The one exponential backoff: the wait before retry number `retry + 1` is `firstMs` doubled with
 * each retry, capped at `maxMs`; with `jitter`, between half and all of that, so that instances
 * that failed together do not retry together. Outgoing calls wait it, jittered, between attempts
 * (outbound/retry.ts); `Backoff` below refuses for all of it.
 */
export function backoff(retry: number, firstMs: number, maxMs: number, jitter = true): number {
  const ceiling = Math.min(firstMs * 2 ** retry, maxMs);
  return jitter ? ceiling / 2 + Math.random() * (ceiling / 2) : ceiling;
}

/**
 * When to try a failing service again: after 1 s, 2 s, 4 s… up to a minute, and at once after a
 * success. Callers refuse in between rather than wait: the OAuth issuer's discovery and keys use
 * it so that, while the issuer is down or hanging, requests bearing a token are refused at once
 * instead of each waiting out the fetch timeout, and one fetch probes again when the wait is over.
 */
export class Backoff {
  private failures = 0;
  private until = 0;

  constructor(
    private readonly firstMs = 1_000,
    private readonly maxMs = 60_000,
  ) {}

  /** Whether a new attempt must wait. */
  get waiting(): boolean {
    return Date.now() < this.until;
  }

  failed(): void {
    this.until = Date.now() + backoff(this.failures, this.firstMs, this.maxMs, false);
    this.failures++;
  }

  succeeded(): void {
    this.failures = 0;
    this.until = 0;
  }
}
