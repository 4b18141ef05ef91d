/**
 * Distinct keys (an index's numbers or strings, or a table's ids) kept in order, for range
 * conditions and ordered scans. Sorting a million keys takes most of a second, so it is done once;
 * after that, new keys wait in a small side set, merged in (in linear time) once they and the
 * changed keys outnumber a fraction of the sorted ones: a write costs a small constant amortized,
 * and a read sorts only the keys added since the previous one. A removed key stays until the
 * merge: its owner finds nothing under it, so a scan may yield keys that are no longer live.
 *
 * A key may carry a number (the row of a table's id, or of an index key's only document), looked
 * up on first use and kept: over a large table, reading it costs far less than a hash lookup.
 *
 * Order is JavaScript's (numeric, or by UTF-16 code unit). MongoDB orders strings by UTF-8 bytes;
 * the two agree on how any string compares with a bound free of code units from U+D800 up, which
 * is why the planner passes only such string bounds.
 */
/**
 * A string whose order against any other is the same in JavaScript and in MongoDB (see above):
 * it has no code unit from U+D800 up. Here rather than with the filters that use it, so that
 * index code (which worker threads of the import load) does not load the query engine.
 */
export const safeString = (value: unknown): value is string => typeof value === 'string' && !/[\uD800-\uFFFF]/.test(value);

export interface Bound<K> {
  value: K;
  inclusive: boolean;
}

/** A carried number not looked up yet, and a key that carries none. */
const UNKNOWN = -2;
const NONE = -1;

export class SortedKeys<K extends number | string> {
  private sorted: ArrayLike<K>;
  private values: Int32Array | undefined;
  private readonly pending = new Set<K>();
  /** The pending keys in order, as of the last read; those added since wait in `tail`. */
  private pendingSorted: K[] = [];
  private tail: K[] = [];
  /** Keys removed, or whose number may have changed, since the last merge. */
  private readonly changed = new Set<K>();

  constructor(
    keys: Iterable<K>,
    /** Whether a key is still in use. */
    private readonly live: (key: K) => boolean,
    /** The number a key carries now, if any. */
    private readonly valueOf?: (key: K) => number | undefined,
  ) {
    this.sorted = order([...keys]);
    this.values = valueOf && new Int32Array(this.sorted.length).fill(UNKNOWN);
  }

  /** Records a key that has just come into use (again, perhaps: it may still be here). */
  add(key: K): void {
    if (this.pending.has(key) || this.sorted[lowerIndex(this.sorted, key, true)] === key) return;
    this.pending.add(key);
    this.tail.push(key);
    this.mergeWhenDue();
  }

  /** Records that a key has gone out of use, or that the number it carries may have changed. */
  change(key: K): void {
    this.changed.add(key);
    this.mergeWhenDue();
  }

  /** About how many keys lie within the bounds. */
  count(lower?: Bound<K>, upper?: Bound<K>): number {
    const [from, to] = span(this.sorted, lower, upper);
    const [pendingFrom, pendingTo] = span(this.inOrder(), lower, upper);
    return to - from + pendingTo - pendingFrom;
  }

  /** The keys within the bounds, in ascending (or descending) order. */
  *scan(lower?: Bound<K>, upper?: Bound<K>, descending = false): Generator<K> {
    for (const position of this.positions(lower, upper, descending)) yield this.keyAt(position);
  }

  /**
   * Where the keys within the bounds are, in order, for `keyAt` and `valueAt`: a sorted key's
   * index, or the complement of a pending one's.
   */
  *positions(lower?: Bound<K>, upper?: Bound<K>, descending = false): Generator<number> {
    const a = this.sorted;
    const b = this.inOrder();
    let [i, iEnd] = span(a, lower, upper);
    let [j, jEnd] = span(b, lower, upper);
    if (!descending) {
      while (i < iEnd || j < jEnd) yield j >= jEnd || (i < iEnd && a[i]! < b[j]!) ? i++ : ~j++;
    } else {
      while (i < iEnd || j < jEnd) yield j >= jEnd || (i < iEnd && a[iEnd - 1]! > b[jEnd - 1]!) ? --iEnd : ~--jEnd;
    }
  }

  keyAt(position: number): K {
    return position >= 0 ? this.sorted[position]! : this.pendingSorted[~position]!;
  }

  /** The number the key at `position` carries, if any. */
  valueAt(position: number): number | undefined {
    const key = this.keyAt(position);
    if (position < 0 || !this.values || (this.changed.size > 0 && this.changed.has(key))) return this.valueOf?.(key);
    let value = this.values[position]!;
    if (value === UNKNOWN) this.values[position] = value = this.valueOf!(key) ?? NONE;
    return value === NONE ? undefined : value;
  }

  private inOrder(): K[] {
    if (this.tail.length > 0) {
      this.pendingSorted = merge(this.pendingSorted, order(this.tail));
      this.tail = [];
    }
    return this.pendingSorted;
  }

  private mergeWhenDue(): void {
    if (this.pending.size + this.changed.size > 64 + this.sorted.length / 32) {
      // Only the changed keys are looked up, and found by bisection: a lookup per key would
      // cost more than the merge.
      const a = this.sorted;
      const dead = new Uint8Array(a.length);
      let deaths = 0;
      for (const key of this.changed) {
        const at = lowerIndex(a, key, true);
        if (a[at] !== key) continue;
        if (!this.live(key)) {
          dead[at] = 1;
          deaths++;
        } else if (this.values) this.values[at] = UNKNOWN;
      }
      const fresh = order([...this.pending].filter(this.live));
      const total = a.length - deaths + fresh.length;
      const sorted = (typeof (a[0] ?? fresh[0]) === 'number' ? new Float64Array(total) : new Array<K>(total)) as K[];
      const values = this.values && new Int32Array(total).fill(UNKNOWN);
      for (let i = 0, j = 0, k = 0; k < total; ) {
        if (dead[i]) i++;
        else if (j >= fresh.length || (i < a.length && a[i]! < fresh[j]!)) {
          if (values) values[k] = this.values![i]!;
          sorted[k++] = a[i++]!;
        } else {
          sorted[k++] = fresh[j++]!;
        }
      }
      this.sorted = sorted;
      this.values = values;
      this.pending.clear();
      this.changed.clear();
      this.pendingSorted = [];
      this.tail = [];
    }
  }
}

/** Numbers go in a typed array: sorted natively (several times faster than with a comparator), and unboxed. */
function order<K extends number | string>(keys: K[]): ArrayLike<K> {
  if (keys.length > 0 && typeof keys[0] === 'number') return Float64Array.from(keys as number[]).sort() as unknown as ArrayLike<K>;
  return keys.sort();
}

function merge<K extends number | string>(a: ArrayLike<K>, b: ArrayLike<K>): K[] {
  const out: K[] = [];
  for (let i = 0, j = 0; i < a.length || j < b.length; ) out.push(j >= b.length || (i < a.length && a[i]! < b[j]!) ? a[i++]! : b[j++]!);
  return out;
}

/** The first index whose key is above `key` (or at it, when `inclusive`). */
function lowerIndex<K extends number | string>(keys: ArrayLike<K>, key: K, inclusive: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key || (!inclusive && keys[mid] === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function span<K extends number | string>(keys: ArrayLike<K>, lower?: Bound<K>, upper?: Bound<K>): [number, number] {
  const from = lower ? lowerIndex(keys, lower.value, lower.inclusive) : 0;
  const to = upper ? lowerIndex(keys, upper.value, !upper.inclusive) : keys.length;
  return [from, Math.max(from, to)];
}
