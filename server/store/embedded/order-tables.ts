/**
 * Order tables: for an index of two fields or more, a table `o:NAME:F1,F2 (k, s, id)` beside the
 * key tables, with one row per key of the first field (as its key table files it, keys.ts) and the
 * document's value of the second as `s`. A find with one equality on the first field, sorted by the
 * second, reads the documents in order through it and stops at its limit, where the key table gave
 * every document of the key, to be sorted in memory: a workspace's newest 50 ledger rows were read
 * by decoding all of its rows, 1.9 s for 110,000.
 *
 * SQLite orders `s` as MongoDB orders values: null and missing (NULL) first, then numbers, strings
 * (byte by byte, MongoDB's simple collation), booleans, then Dates (BLOBs tagged so that booleans
 * come first). Values whose place depends on the direction (arrays: the least element ascending,
 * the greatest descending), documents and NaN are filed as UNORDERED; while a key has one, its
 * queries are sorted in memory as before. Ties are in `_id` order, as the key table's were.
 *
 * A range on the second field (`$gt`, `$gte`, `$lt`, `$lte` of numbers, of strings or of Dates)
 * is read from the order table too, sorted or not: a workspace's ledger rows of the last 30 days.
 * As in MongoDB, a range of one type matches values of that type only.
 */
import type { Document } from '../port.ts';
import { RANGE } from './keys.ts';

/** An order table, for the first two fields of an index. */
export interface OrderTable {
  fields: [string, string];
  table: string;
}

export type SortValue = number | string | Buffer | null;

const BOOLEAN = 0x08;
const DATE = 0x09;
/** Greater than every other tag: `s >= UNORDERED` finds them. */
export const UNORDERED = Buffer.from([0xff]);

/** The order table's name for an index's fields (its first two). */
export const orderTableName = (collection: string, fields: readonly string[]) => `o:${collection}:${fields[0]},${fields[1]}`;

/** The value `path` holds in `doc`, as the order table files it. */
export function sortValueAt(doc: Document, path: string): SortValue {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (Array.isArray(value)) return UNORDERED;
    if (value === null || typeof value !== 'object' || value instanceof Date) return null;
    value = (value as Record<string, unknown>)[key];
  }
  return sortValue(value);
}

function sortValue(value: unknown): SortValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isNaN(value) ? UNORDERED : value;
  if (typeof value === 'boolean') return Buffer.from([BOOLEAN, value ? 1 : 0]);
  if (value instanceof Date) {
    const time = value.getTime();
    if (Number.isNaN(time)) return UNORDERED;
    // Big-endian with the sign bit flipped: bytes compare as the times do, before 1970 too.
    const tagged = Buffer.alloc(9);
    tagged[0] = DATE;
    tagged.writeBigInt64BE(BigInt(time), 1);
    tagged[1]! ^= 0x80;
    return tagged;
  }
  return UNORDERED;
}

/**
 * A range `condition` on `s` as SQL with its parameters, each bound and the type it keeps to;
 * undefined for any other condition (or bounds of several types), which the filter decides alone.
 */
export function sortRange(condition: unknown): { sql: string; params: SortValue[] } | undefined {
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition) || condition instanceof Date) return undefined;
  const entries = Object.entries(condition);
  if (entries.length === 0 || !entries.every(([op]) => op in RANGE)) return undefined;
  const kinds = new Set(entries.map(([, bound]) => (bound instanceof Date ? 'date' : typeof bound)));
  const [kind] = kinds;
  if (kinds.size !== 1 || !(kind === 'number' || kind === 'string' || kind === 'date')) return undefined;
  if (entries.some(([, bound]) => (typeof bound === 'number' && Number.isNaN(bound)) || (bound instanceof Date && Number.isNaN(bound.getTime())))) return undefined;
  const sql = entries.map(([op]) => `o.s ${RANGE[op as keyof typeof RANGE]} ?`);
  const params = entries.map(([, bound]) => sortValue(bound));
  // The type's own span: numbers sort before text, text before BLOBs, Dates' tag before the next.
  if (kind === 'number') sql.push("o.s < ''");
  else if (kind === 'string') sql.push("o.s < x''");
  else {
    sql.push('o.s >= ?', 'o.s < ?');
    params.push(Buffer.from([DATE]), Buffer.from([DATE + 1]));
  }
  return { sql: sql.join(' AND '), params };
}

/** Whether two sort values are the same (a replaced document whose rows need not change). */
export function sameSortValue(a: SortValue, b: SortValue): boolean {
  return Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b;
}
