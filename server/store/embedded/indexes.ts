/**
 * In-memory secondary indexes: hash maps from the values of the indexed fields to the rows (see
 * table.ts) of the documents holding them, as a lone row, a RowList or (for a large share of the
 * table) a bitmap. They serve two purposes: unique constraints, and picking candidates for queries
 * (every candidate is still tested against the whole filter, so an index only has to return a
 * superset of the true matches). A single-field index answers equality, `$in` and `$all` from its
 * buckets, and ranges over numbers or strings by walking its keys in order.
 *
 * Keys follow MongoDB's multikey rules closely enough for both purposes: an array contributes
 * each of its elements, a missing field indexes as null (unless the index is sparse).
 */
import type { IndexSpecification } from 'mongodb';
import type { IndexOptions } from '../port.ts';
import type { Doc } from './codec.ts';
import { RowList } from './row-list.ts';
import { safeString, SortedKeys, type Bound } from './sorted-keys.ts';

export interface IndexSpec {
  name: string;
  fields: string[];
  unique: boolean;
  sparse: boolean;
  expireAfterSeconds: number | undefined;
}

const SPECIAL_DIRECTIONS = new Set<unknown>(['2d', '2dsphere', 'text', 'geoHaystack']);

/** Reads a key specification in any of the driver's forms, the same way the driver does. */
/**
 * `sparse` is the embedded store's own: the port does not offer it (FerretDB has no sparse
 * index), so no repository asks for one, but the planner keeps handling such an index.
 */
export function indexSpec(keys: IndexSpecification, options: IndexOptions & { sparse?: boolean }): IndexSpec {
  const isTuple = (x: unknown): x is [string, unknown] =>
    Array.isArray(x) && x.length === 2 && (typeof x[1] === 'number' || SPECIAL_DIRECTIONS.has(x[1]));
  const parts = Array.isArray(keys) && !isTuple(keys) ? (keys as unknown[]) : [keys];
  const pattern = new Map<string, unknown>();
  for (const part of parts) {
    if (typeof part === 'string') pattern.set(part, 1);
    else if (isTuple(part)) pattern.set(part[0], part[1]);
    else if (part instanceof Map) for (const [field, direction] of part) pattern.set(field, direction);
    else for (const [field, direction] of Object.entries(part as object)) pattern.set(field, direction);
  }
  for (const [field, direction] of pattern) {
    if (direction !== 1 && direction !== -1) {
      throw new Error(`The embedded store supports only ascending (1) and descending (-1) indexes (got ${field}: ${String(direction)})`);
    }
  }
  if (pattern.size === 0) throw new Error('An index needs at least one field');
  if (options.expireAfterSeconds !== undefined && pattern.size !== 1) throw new Error('A TTL index must have exactly one field');
  return {
    name: options.name ?? [...pattern].flat().join('_'),
    fields: [...pattern.keys()],
    unique: options.unique ?? false,
    sparse: options.sparse ?? false,
    expireAfterSeconds: options.expireAfterSeconds,
  };
}

/**
 * A string that is the same for any two values the query engine calls equal (and, but for the
 * field order of embedded documents, only for those), so equal values share a bucket.
 */
export function valueKey(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'number':
    case 'bigint':
      return `n${value}`;
    case 'string':
      return `s${value}`;
    case 'boolean':
      return `b${value}`;
  }
  if (value instanceof Date) return `d${value.getTime()}`;
  if (Array.isArray(value)) return `a${JSON.stringify(value.map(valueKey))}`;
  // mingo compares embedded documents regardless of field order; sorting keeps the index a superset.
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `o${JSON.stringify(entries.map(([k, v]) => [k, valueKey(v)]))}`;
}

const isDocument = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

interface Found {
  present: boolean;
  /** Whether an array lay on the path. */
  multikey: boolean;
}

/** The values a document holds at one (possibly dotted) field path; an empty array is a value of its own. */
function collectValues(value: unknown, path: readonly string[], depth: number, out: unknown[], found: Found): void {
  if (depth === path.length) {
    if (value !== undefined) found.present = true;
    if (!Array.isArray(value) || value.length === 0) out.push(value);
    else out.push(...value);
    found.multikey ||= Array.isArray(value);
    return;
  }
  const segment = path[depth]!;
  if (Array.isArray(value)) {
    found.multikey = true;
    if (/^\d+$/.test(segment) && Number(segment) < value.length) collectValues(value[Number(segment)], path, depth + 1, out, found);
    if (value.length === 0) collectValues(undefined, path, path.length, out, found);
    for (const element of value) if (isDocument(element)) collectValues(element[segment], path, depth + 1, out, found);
    return;
  }
  if (isDocument(value)) collectValues(value[segment], path, depth + 1, out, found);
  else collectValues(undefined, path, path.length, out, found);
}

/**
 * A document's values at one field, as an index files them: 0 when it lacks the field (which a
 * sparse index skips; any other files it under null). Kept beside bulk-loaded documents (see
 * block.ts), so their indexes are built without parsing them.
 */
export type FieldValues = unknown[] | 0;

/** A document's values at a field's path (the field split at its dots). */
export function collectFieldValues(doc: Doc, path: readonly string[]): { values: FieldValues; multikey: boolean } {
  const found: Found = { present: false, multikey: false };
  const values: unknown[] = [];
  collectValues(doc, path, 0, values, found);
  return { values: found.present ? values : 0, multikey: found.multikey };
}

/** Every combination of per-field keys (compound multikey), joined unambiguously. */
function combine(perField: string[][]): string[] {
  let combos: string[][] = [[]];
  for (const keys of perField) combos = combos.flatMap((prefix) => keys.map((key) => [...prefix, key]));
  return combos.map((combo) => JSON.stringify(combo));
}

const literal = (v: unknown) => !(v instanceof RegExp) && !Array.isArray(v); // arrays match as whole values

/** The values of a filter condition on one field when it is an equality (or `$in`) an index can serve. */
export function equalityValues(condition: unknown): unknown[] | undefined {
  if (condition === undefined || !literal(condition)) return undefined;
  if (typeof condition !== 'object' || condition === null || condition instanceof Date) return [condition];
  const keys = Object.keys(condition);
  if (!keys.some((k) => k.startsWith('$'))) return [condition];
  const ops = condition as { $eq?: unknown; $in?: unknown };
  if ('$eq' in ops) return ops.$eq !== undefined && literal(ops.$eq) ? [ops.$eq] : undefined;
  if (Array.isArray(ops.$in) && ops.$in.every(literal)) return ops.$in;
  return undefined;
}

/** The values of an `$all` of plain scalars: each must be held, so each narrows alone. */
function allValues(condition: unknown): unknown[] | undefined {
  const all = typeof condition === 'object' && condition !== null ? (condition as { $all?: unknown }).$all : undefined;
  const scalar = (v: unknown) => ['string', 'number', 'boolean'].includes(typeof v) || v instanceof Date;
  return Array.isArray(all) && all.length > 0 && all.every(scalar) ? all : undefined;
}

type RangeKey = number | string;
type Range = [lower: Bound<RangeKey> | undefined, upper: Bound<RangeKey> | undefined];

const rangeKey = (value: unknown): value is RangeKey => (typeof value === 'number' && !Number.isNaN(value)) || safeString(value);

/**
 * The ranges a condition's `$gt`/`$gte`/`$lt`/`$lte` on numbers or strings bound: each operator
 * alone, and each lower with an upper of its type when `paired`. MongoDB compares only within a
 * type, so a number bound never admits a string. An array may satisfy a lower and an upper bound
 * with different elements, so on a multikey field the bounds must not be paired.
 */
export function rangesOf(condition: unknown, paired: boolean): Range[] {
  if (typeof condition !== 'object' || condition === null) return [];
  const ops = condition as Record<string, unknown>;
  const bounds = (names: string[]) =>
    names.filter((op) => rangeKey(ops[op])).map((op) => ({ value: ops[op] as RangeKey, inclusive: op.endsWith('e') }));
  const lowers = bounds(['$gt', '$gte']);
  const uppers = bounds(['$lt', '$lte']);
  const ranges: Range[] = [...lowers.map((l): Range => [l, undefined]), ...uppers.map((u): Range => [undefined, u])];
  if (paired) {
    for (const l of lowers) for (const u of uppers) if (typeof l.value === typeof u.value) ranges.push([l, u]);
  }
  return ranges;
}

/**
 * A set of row numbers as bits. A bucket holding a good share of the table is smaller this way
 * than as a RowList, and testing a row costs one memory access instead of a search.
 */
class Bitmap {
  private words = new Uint32Array(64);
  size = 0;

  has(row: number): boolean {
    return ((this.words[row >>> 5]! >>> (row & 31)) & 1) === 1;
  }

  add(row: number): void {
    if (row >>> 5 >= this.words.length) {
      const words = new Uint32Array(Math.max(this.words.length * 2, (row >>> 5) + 1));
      words.set(this.words);
      this.words = words;
    }
    const bit = 1 << (row & 31);
    if ((this.words[row >>> 5]! & bit) === 0) this.size++;
    this.words[row >>> 5]! |= bit;
  }

  delete(row: number): boolean {
    if (!this.has(row)) return false;
    this.words[row >>> 5]! &= ~(1 << (row & 31));
    this.size--;
    return true;
  }

  *[Symbol.iterator](): Generator<number> {
    for (let w = 0; w < this.words.length; w++) {
      for (let word = this.words[w]!; word !== 0; word &= word - 1) yield w * 32 + 31 - Math.clz32(word & -word);
    }
  }
}

/** The rows filed under one key: a lone row as itself (most keys of a near-unique field), a RowList, or a Bitmap. */
type Bucket = number | RowList | Bitmap;

/** A RowList this large becomes a Bitmap when it holds over 1/128 of the rows: a test then costs one memory access. */
const BITMAP_MIN = 1024;

const sizeOf = (bucket: Bucket | undefined): number => (bucket === undefined ? 0 : typeof bucket === 'number' ? 1 : bucket.size);

const holds = (bucket: Bucket | undefined, row: number): boolean =>
  bucket === row || (typeof bucket === 'object' && bucket.has(row));

function* rowsIn(buckets: Iterable<Bucket | undefined>): Generator<number> {
  for (const bucket of buckets) {
    if (typeof bucket === 'number') yield bucket;
    else if (bucket) yield* bucket;
  }
}

/** One way to narrow a query: the rows that may match and about how many there are. */
export interface Access {
  /** About how many rows `rows` yields. */
  estimate: number;
  /** About how many of those pass the condition (fewer than `estimate` for an intersection). */
  matches: number;
  /** Each row once (or, unless `distinct`, perhaps more, which costs less for a multikey field). */
  rows(distinct?: boolean): Iterable<number>;
  /** Whether a row passes, where lookups costing about `probes` hash lookups tell. */
  has?: (row: number) => boolean;
  probes: number;
}

/** What testing a bucket for a row costs, in hash lookups: a lone row or a bitmap needs none. */
const probeCost = (bucket: Bucket | undefined) => (bucket instanceof RowList ? 1 : 0.1);

/** The rows in any of the buckets; `disjoint` when no row can be in two of them. */
function union(buckets: Array<Bucket | undefined>, disjoint: boolean): Access {
  const present = [...new Set(buckets)].filter((bucket) => bucket !== undefined);
  const estimate = present.reduce<number>((sum, bucket) => sum + sizeOf(bucket), 0);
  return {
    estimate,
    matches: estimate,
    rows: (distinct = true) => (distinct && !disjoint && present.length > 1 ? new Set(rowsIn(present)) : rowsIn(present)),
    has: (row) => present.some((bucket) => holds(bucket, row)),
    probes: present.reduce<number>((sum, bucket) => sum + probeCost(bucket), 0),
  };
}

/** The rows in every bucket: those of the smallest that the others hold too. */
function intersection(buckets: Array<Bucket | undefined>, tableSize: number): Access {
  const [smallest, ...rest] = [...buckets].sort((a, b) => sizeOf(a) - sizeOf(b));
  return {
    estimate: sizeOf(smallest),
    matches: buckets.reduce<number>((product, bucket) => product * Math.min(1, sizeOf(bucket) / tableSize), tableSize),
    *rows() {
      for (const row of rowsIn([smallest])) if (rest.every((bucket) => holds(bucket, row))) yield row;
    },
    has: (row) => holds(smallest, row) && rest.every((bucket) => holds(bucket, row)),
    probes: buckets.reduce<number>((sum, bucket) => sum + probeCost(bucket), 0),
  };
}

export class Index {
  /** Strings and numbers are filed as themselves: no key to build, and ranges can walk them in order. */
  private readonly plain = new Map<string | number, Bucket>();
  /** Everything else (null, booleans, Dates, arrays, documents), and compound keys, by `valueKey`. */
  private readonly encoded = new Map<string | number, Bucket>();
  /** Rows filed in `plain`, counted once per key, to estimate ranges. */
  private plainRows = 0;
  /** The highest row filed, to size bitmaps. */
  private lastRow = 0;
  /** The keys of `plain` of each type, in order, made when a range first needs them. */
  private readonly ordered = new Map<string, SortedKeys<RangeKey>>();
  private readonly paths: string[][];
  /** Whether a document has held an array on an indexed path, as in MongoDB. */
  private multikey = false;

  constructor(readonly spec: IndexSpec) {
    this.paths = spec.fields.map((field) => field.split('.'));
  }

  /** The keys a document is filed under; none for a sparse index on a document lacking every field. */
  private keysOf(doc: Doc, found: Found): Array<[Map<string | number, Bucket>, string | number]> {
    const perField = this.paths.map((path) => {
      const values: unknown[] = [];
      collectValues(doc, path, 0, values, found);
      return values;
    });
    return this.keysFrom(perField, found.present);
  }

  private keysFrom(perField: unknown[][], present: boolean): Array<[Map<string | number, Bucket>, string | number]> {
    if (this.spec.sparse && !present) return [];
    if (perField.length > 1) return combine(perField.map((values) => values.map(valueKey))).map((key) => [this.encoded, key]);
    const keys = new Map<string | number, Map<string | number, Bucket>>();
    for (const value of perField[0]!) {
      if (typeof value === 'string' || typeof value === 'number') keys.set(value, this.plain);
      else keys.set(valueKey(value), this.encoded);
    }
    return [...keys].map(([key, map]) => [map, key]);
  }

  /** Whether a document other than the one at `row` (if any) already holds a key of `doc` in this unique index. */
  conflict(doc: Doc, row: number | undefined): boolean {
    if (!this.spec.unique) return false;
    return this.keysOf(doc, { present: false, multikey: false }).some(([map, key]) => {
      const holders = map.get(key);
      return holders !== undefined && (sizeOf(holders) > 1 || row === undefined || !holds(holders, row));
    });
  }

  add(doc: Doc, row: number): void {
    const found = { present: false, multikey: false };
    this.file(this.keysOf(doc, found), row);
    this.multikey ||= found.multikey;
  }

  /**
   * Files a document by the values its block kept for each of this index's fields (see
   * block.ts), in the order of `spec.fields`; `multikey` when its block held arrays there.
   */
  addValues(perField: FieldValues[], multikey: boolean, row: number): void {
    this.multikey ||= multikey;
    if (perField.length > 1) {
      const present = perField.some((values) => values !== 0);
      this.file(this.keysFrom(perField.map((values) => (values === 0 ? [null] : values)), present), row);
      return;
    }
    // One field, as every registry index: filed straight from the values, since a build files a
    // million documents this way and allocating keys for each was half its time.
    const values = perField[0]!;
    if (values === 0) {
      if (!this.spec.sparse) this.fileKey(this.encoded, valueKey(null), row);
      return;
    }
    for (const value of values) this.addValue(value, row);
  }

  /** Files a document of a one-field index under one of its values (one scalar, for a block's `single` field). */
  addValue(value: unknown, row: number, multikey = false): void {
    this.multikey ||= multikey;
    if (typeof value === 'string' || typeof value === 'number') this.fileKey(this.plain, value, row);
    else this.fileKey(this.encoded, valueKey(value), row);
  }

  private file(keys: Array<[Map<string | number, Bucket>, string | number]>, row: number): void {
    for (const [map, key] of keys) this.fileKey(map, key, row);
  }

  /** Files `row` under `key` (nothing when it is already there). */
  private fileKey(map: Map<string | number, Bucket>, key: string | number, row: number): void {
    if (row > this.lastRow) this.lastRow = row;
    const bucket = map.get(key);
    if (bucket === undefined) {
      map.set(key, row);
      if (map === this.plain && !Number.isNaN(key)) this.ordered.get(typeof key)?.add(key);
    } else if (typeof bucket === 'number') {
      if (bucket === row) return;
      map.set(key, new RowList(bucket, row));
      if (map === this.plain) this.ordered.get(typeof key)?.change(key); // no longer a lone row
    } else {
      // No search first: a build files rows in increasing order, which a RowList appends at once.
      const size = bucket.size;
      bucket.add(row);
      if (bucket.size === size) return;
      if (bucket instanceof RowList && bucket.size >= BITMAP_MIN && bucket.size * 128 > this.lastRow) {
        const bitmap = new Bitmap();
        for (const held of bucket) bitmap.add(held);
        map.set(key, bitmap);
      }
    }
    if (map === this.plain) this.plainRows++;
  }

  remove(doc: Doc, row: number): void {
    for (const [map, key] of this.keysOf(doc, { present: false, multikey: false })) {
      const bucket = map.get(key);
      if (!holds(bucket, row)) continue;
      if (sizeOf(bucket) === 1) {
        map.delete(key);
        if (map === this.plain) this.ordered.get(typeof key)?.change(key);
      } else if (typeof bucket === 'object') {
        bucket.delete(row);
        if (bucket instanceof RowList && bucket.size === 1) map.set(key, bucket.first());
      }
      if (map === this.plain) this.plainRows--;
    }
  }

  /** The cheapest way this index narrows a filter that puts `conditionsOf(field)` on each field. */
  access(conditionsOf: (field: string) => unknown[], tableSize: number): Access | undefined {
    if (this.paths.length > 1) {
      const values = this.spec.fields.map((field) => conditionsOf(field).map(equalityValues).find((v) => v !== undefined));
      if (values.some((v) => v === undefined || !this.serves(v))) return undefined;
      const keys = combine((values as unknown[][]).map((vs) => vs.map(valueKey)));
      return union(keys.map((key) => this.encoded.get(key)), !this.multikey);
    }
    let best: Access | undefined;
    for (const condition of conditionsOf(this.spec.fields[0]!)) {
      for (const access of this.accesses(condition, tableSize)) if (!best || access.estimate < best.estimate) best = access;
    }
    return best;
  }

  /** A sparse index does not hold the documents that lack the field, which equality to null matches. */
  private serves(values: unknown[]): boolean {
    return !this.spec.sparse || values.every((v) => v !== null && v !== undefined);
  }

  private *accesses(condition: unknown, tableSize: number): Generator<Access> {
    const values = equalityValues(condition);
    if (values && this.serves(values)) yield union(values.map((v) => this.bucket(v)), !this.multikey);
    const all = allValues(condition);
    if (all) yield intersection(all.map((v) => this.bucket(v)), tableSize);
    for (const [lower, upper] of rangesOf(condition, !this.multikey)) yield this.range(lower, upper);
  }

  private bucket(value: unknown): Bucket | undefined {
    return typeof value === 'string' || typeof value === 'number' ? this.plain.get(value) : this.encoded.get(valueKey(value));
  }

  private range(lower: Bound<RangeKey> | undefined, upper: Bound<RangeKey> | undefined): Access {
    const type = typeof (lower ?? upper)!.value;
    let keys = this.ordered.get(type);
    if (!keys) {
      const ofType = [...this.plain.keys()].filter((key) => typeof key === type && !Number.isNaN(key));
      const loneRow = (key: RangeKey) => {
        const bucket = this.plain.get(key);
        return typeof bucket === 'number' ? bucket : undefined;
      };
      this.ordered.set(type, (keys = new SortedKeys(ofType, (key) => this.plain.has(key), loneRow)));
    }
    const estimate = Math.ceil(keys.count(lower, upper) * (this.plainRows / Math.max(1, this.plain.size)));
    return {
      estimate,
      matches: estimate,
      rows: (distinct = true) => {
        const rows = this.rowsInRange(keys, lower, upper);
        return distinct && this.multikey ? new Set(rows) : rows;
      },
      probes: 0,
    };
  }

  private *rowsInRange(keys: SortedKeys<RangeKey>, lower?: Bound<RangeKey>, upper?: Bound<RangeKey>): Generator<number> {
    for (const at of keys.positions(lower, upper)) {
      const row = keys.valueAt(at);
      if (row !== undefined) yield row;
      else yield* rowsIn([this.plain.get(keys.keyAt(at))]);
    }
  }
}
