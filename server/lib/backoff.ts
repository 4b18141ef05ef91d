/**
 * When to try the issuer again after it failed. Without this, every request bearing a token would
 * wait out the fetch timeout while the issuer is down or hanging; with it, requests in between are
 * refused at once and one fetch probes again after 1 s, 2 s, 4 s… up to a minute.
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
    this.until = Date.now() + Math.min(this.maxMs, this.firstMs * 2 ** this.failures);
    this.failures++;
  }

  succeeded(): void {
    this.failures = 0;
    this.until = 0;
  }
}
