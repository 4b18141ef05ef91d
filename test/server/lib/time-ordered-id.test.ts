/** Movement ids: UUIDs that sort as they were made, so that the ledger's B-trees are appended to. */
import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../../server/lib/time-ordered-id.ts';

describe('timeOrderedId', () => {
  it('is a UUID of version 7 and RFC 9562 variant, its first 48 bits the milliseconds given', () => {
    const ms = Date.UTC(2026, 10, 28, 7, 30);
    const id = timeOrderedId(ms);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(ms);
  });

  it('sorts as the moments it was made at, whatever its random bits', () => {
    const start = Date.UTC(2026, 0, 1);
    const made = Array.from({ length: 2000 }, (_, i) => timeOrderedId(start + i * 7));
    expect([...made].sort()).toEqual(made);
    expect(new Set(made.map((id) => id.slice(19))).size).toBeGreaterThan(1990);
  });

  it('never repeats its random bits, across the refills of the pool it draws them from', () => {
    // 10,000 ids of 16 bytes are about 40 refills of a 4 KiB pool; all in the same millisecond.
    const made = Array.from({ length: 10_000 }, () => timeOrderedId(Date.UTC(2026, 10, 28)));
    expect(new Set(made).size).toBe(made.length);
    expect(new Set(made.map((id) => id.slice(24, 30))).size).toBeGreaterThan(9_990);
  });
});
