/**
 * Answers already paid for, kept so a recalculated formula is served again instead of charged
 * again: in the document's cache (fast, up to 6 hours) and in the document's properties (lasting),
 * within Apps Script's limits (9 KB a property value, 500 KB a document's properties in all). The
 * properties hold at most MAX_BYTES of answers, the oldest dropped first; a dropped answer is
 * still replayed by the server for a day (its `Idempotency-Key` is derived from the input).
 */
import type { CachePort, LockPort, PropertiesPort } from './ports.ts';

const PREFIX = 'prospecta.paid.';
const INDEX = 'prospecta.paid';
/** Room left in the document's 500 KB for runs, campaigns and settings. */
const MAX_BYTES = 200 * 1024;
/** The index is one property value (9 KB): about 20 bytes an entry. */
const MAX_ENTRIES = 350;
/** A larger answer is kept in the cache only. */
const MAX_VALUE = 2 * 1024;
const CACHE_SECONDS = 6 * 60 * 60;

export interface PaidResults {
  get(key: string): string | null;
  put(key: string, value: string): void;
}

export function paidResults(cache: CachePort, props: PropertiesPort, lock: LockPort): PaidResults {
  return {
    get(key) {
      const cached = cache.get(PREFIX + key);
      if (cached !== null) return cached;
      const kept = props.get(PREFIX + key);
      if (kept !== null) cache.put(PREFIX + key, kept, CACHE_SECONDS);
      return kept;
    },
    put(key, value) {
      try {
        cache.put(PREFIX + key, value, CACHE_SECONDS);
      } catch {
        // Over the cache's 100 KB: the properties below are smaller still, so nothing is kept.
        return;
      }
      if (value.length > MAX_VALUE || !lock.tryLock(5_000)) return;
      try {
        const index: Array<[string, number]> = JSON.parse(props.get(INDEX) ?? '[]');
        const entries = index.filter(([k]) => k !== key);
        entries.push([key, value.length]);
        let total = entries.reduce((sum, [, n]) => sum + n, 0);
        while (entries.length > MAX_ENTRIES || total > MAX_BYTES) {
          const [oldest, size] = entries.shift()!;
          props.delete(PREFIX + oldest);
          total -= size;
        }
        props.set(PREFIX + key, value);
        props.set(INDEX, JSON.stringify(entries));
      } catch {
        // Where Apps Script refuses the write, the cache and the server's replay still hold it.
      } finally {
        lock.release();
      }
    },
  };
}
