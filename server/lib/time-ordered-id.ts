/**
 * UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids made one
 * after the other sort one after the other, so a B-tree keyed by them is appended to at its end,
 * where random (version 4) ids dirty a page anywhere in it at every insert: a ledger row is
 * written across several such B-trees, and random ids made most of its writes (issue 41).
 */
import { poolBytes } from './random-pool.ts';

export function timeOrderedId(ms = Date.now()): string {
  const bytes = poolBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
