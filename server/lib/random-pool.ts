/**
 * Random bytes for identifiers (trace and span ids, time-ordered ids), drawn from a pool that the
 * operating system's generator refills 4 KiB at a time: one call into it per few hundred ids,
 * where `randomBytes(16)` costs about 5 µs each (a charge makes one such id). Never for secrets:
 * keys, tokens and nonces take `randomBytes` of their own, so no two secrets share a buffer.
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.allocUnsafe(4096);
let used = pool.length;

/** Where `count` (at most 4,096) unused bytes start in the pool, refilled first if too few are left. */
function take(count: number): number {
  if (used + count > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += count;
  return used - count;
}

/** `count` random bytes, in a buffer of their own. */
export function poolBytes(count: number): Buffer {
  const at = take(count);
  return Buffer.from(pool.subarray(at, at + count));
}

/** `count` random bytes as lowercase hex. */
export function poolHex(count: number): string {
  const at = take(count);
  return pool.toString('hex', at, at + count);
}
