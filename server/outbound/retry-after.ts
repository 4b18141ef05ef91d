/** A number of seconds or milliseconds, as these headers spell them. */
const NUMBER = /^\d+(\.\d+)?$/;

/**
 * How long an answer asks us to wait before calling again, or null when it does not say:
 * OpenAI's `retry-after-ms` when present (finer than seconds), else the standard `Retry-After`
 * (seconds, or an HTTP date).
 */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined): number | null {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && NUMBER.test(ms)) return Math.ceil(Number(ms));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return null;
  if (NUMBER.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
