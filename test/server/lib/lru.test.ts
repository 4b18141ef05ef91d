/**
 * The one in-process cache: least recently used out first, and, with a time to live, an entry
 * served only while it is younger than that (API keys and members are read again after
 * KEY_CACHE_SECONDS), a cached null included.
 */
import { describe, expect, it } from 'vitest';
import { Lru } from '../../../server/lib/lru.ts';

describe('Lru', () => {
  it('forgets the least recently used entry first', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3]);
  });

  it('serves an entry for its time to live only, a cached null too', () => {
    let now = 1_000;
    const lru = new Lru<string, string | null>(10, { ttlMs: 5_000, now: () => now });
    lru.set('known', 'key');
    lru.set('unknown', null);
    now += 4_999;
    expect([lru.get('known'), lru.get('unknown')]).toEqual(['key', null]);
    now += 1;
    expect([lru.get('known'), lru.get('unknown')]).toEqual([undefined, undefined]);
    expect(lru.size).toBe(0);
  });

  it('with a time to live of 0, caches nothing that is served', () => {
    const lru = new Lru<string, number>(10, { ttlMs: 0, now: () => 7 });
    lru.set('a', 1);
    expect(lru.get('a')).toBeUndefined();
  });
});
