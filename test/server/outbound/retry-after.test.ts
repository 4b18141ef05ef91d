import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../../server/outbound/retry-after.ts';

const headers = (values: Record<string, string>) => new Headers(values);

describe('retryAfterMs', () => {
  it('reads Retry-After in seconds, whole or not', () => {
    expect(retryAfterMs(headers({ 'Retry-After': '2' }))).toBe(2000);
    expect(retryAfterMs(headers({ 'Retry-After': ' 1.5 ' }))).toBe(1500);
    expect(retryAfterMs(headers({ 'Retry-After': '0' }))).toBe(0);
  });

  it('reads Retry-After as an HTTP date; one in the past means now', () => {
    const wait = retryAfterMs(headers({ 'Retry-After': new Date(Date.now() + 30_000).toUTCString() }));
    expect(wait).toBeGreaterThan(28_000);
    expect(wait).toBeLessThanOrEqual(30_000);
    expect(retryAfterMs(headers({ 'Retry-After': new Date(Date.now() - 60_000).toUTCString() }))).toBe(0);
  });

  it("prefers OpenAI's retry-after-ms, and falls back to Retry-After when it is unreadable", () => {
    expect(retryAfterMs(headers({ 'retry-after-ms': '250', 'Retry-After': '2' }))).toBe(250);
    expect(retryAfterMs(headers({ 'retry-after-ms': '12.4' }))).toBe(13);
    expect(retryAfterMs(headers({ 'retry-after-ms': 'soon', 'Retry-After': '2' }))).toBe(2000);
  });

  it('is null when nothing readable says how long', () => {
    expect(retryAfterMs(headers({}))).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
    expect(retryAfterMs(headers({ 'Retry-After': 'later' }))).toBeNull();
  });
});
