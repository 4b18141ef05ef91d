/**
 * In-memory secondary indexes: hash maps from the serialized values of the indexed fields to the
 * ids of the documents holding them. They serve two purposes: unique constraints, and picking
 * candidates for queries with equality on every indexed field (mingo still filters them, so an
 * index only has to return a superset of the true matches).
 *
 * Keys follow MongoDB's multikey rules closely enough for both purposes: an array contributes
 * each of its elements, a missing field indexes as null (unless the index is sparse).
 */
import type { IndexSpecification } from 'mongodb';
import type { IndexOptions } from '../port.ts';
import type { Doc } from './codec.ts';

export interface IndexSpec {
  name: string;
  fields: string[];
  unique: boolean;
  sparse: boolean;
  expireAfterSeconds: number | undefined;
}

const SPECIAL_DIRECTIONS = new Set<unknown>(['2d', '2dsphere', 'text', 'geoHaystack']);

/** Reads a key specification in any of the driver's forms, the same way the driver does. */
export function indexSpec(keys: IndexSpecification, options: IndexOptions): IndexSpec {
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

const NULL_KEY = 'null';
const EMPTY_ARRAY_KEY = '[]';

/**
 * A string that is the same for any two values the query engine calls equal (and, but for the
 * field order of embedded documents, only for those), so equal values share a bucket.
 */
export function valueKey(value: unknown): string {
  if (value === null || value === undefined) return NULL_KEY;
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

/** The keys a document contributes for one (possibly dotted) field path; `found` records presence. */
function collectKeys(value: unknown, path: string[], depth: number, out: Set<string>, found: { present: boolean }): void {
  if (depth === path.length) {
    if (value !== undefined) found.present = true;
    if (!Array.isArray(value)) out.add(valueKey(value));
    else if (value.length === 0) out.add(EMPTY_ARRAY_KEY);
    else for (const element of value) out.add(valueKey(element));
    return;
  }
  const segment = path[depth]!;
  if (Array.isArray(value)) {
    if (/^\d+$/.test(segment) && Number(segment) < value.length) collectKeys(value[Number(segment)], path, depth + 1, out, found);
    if (value.length === 0) collectKeys(undefined, path, path.length, out, found);
    for (const element of value) {
      if (typeof element === 'object' && element !== null && !Array.isArray(element) && !(element instanceof Date)) {
        collectKeys((element as Record<string, unknown>)[segment], path, depth + 1, out, found);
      }
    }
    return;
  }
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    collectKeys((value as Record<string, unknown>)[segment], path, depth + 1, out, found);
  } else {
    collectKeys(undefined, path, path.length, out, found);
  }
}

/** Every combination of per-field keys (compound multikey), joined unambiguously. */
function combine(perField: string[][]): string[] {
  if (perField.length === 1) return perField[0]!;
  let combos: string[][] = [[]];
  for (const keys of perField) combos = combos.flatMap((prefix) => keys.map((key) => [...prefix, key]));
  return combos.map((combo) => JSON.stringify(combo));
}

export class Index {
  private readonly buckets = new Map<string, Set<string>>();
  private readonly paths: string[][];

  constructor(readonly spec: IndexSpec) {
    this.paths = spec.fields.map((field) => field.split('.'));
  }

  /** The keys a document is filed under; none for a sparse index on a document lacking every field. */
  keysOf(doc: Doc): string[] {
    const found = { present: false };
    const perField = this.paths.map((path) => {
      const keys = new Set<string>();
      collectKeys(doc, path, 0, keys, found);
      return [...keys];
    });
    if (this.spec.sparse && !found.present) return [];
    return combine(perField);
  }

  /** The key of `doc` that another document already holds in this unique index, if any. */
  conflict(doc: Doc): string | undefined {
    if (!this.spec.unique) return undefined;
    for (const key of this.keysOf(doc)) {
      const holders = this.buckets.get(key);
      if (holders && (holders.size > 1 || !holders.has(doc._id))) return key;
    }
    return undefined;
  }

  add(doc: Doc): void {
    for (const key of this.keysOf(doc)) {
      const holders = this.buckets.get(key);
      if (holders) holders.add(doc._id);
      else this.buckets.set(key, new Set([doc._id]));
    }
  }

  remove(doc: Doc): void {
    for (const key of this.keysOf(doc)) {
      const holders = this.buckets.get(key);
      holders?.delete(doc._id);
      if (holders?.size === 0) this.buckets.delete(key);
    }
  }

  /**
   * At most how many documents `lookup` would return for these values per field (each list is
   * the values of an equality or `$in`); undefined when this index cannot answer.
   */
  estimate(valuesPerField: unknown[][]): number | undefined {
    if (this.spec.sparse && valuesPerField.some((values) => values.some((v) => v === null))) {
      return undefined; // a sparse index does not hold the documents that lack the field
    }
    let total = 0;
    for (const key of this.lookupKeys(valuesPerField)) total += this.buckets.get(key)?.size ?? 0;
    return total;
  }

  /** Ids of the documents whose indexed fields may equal the given values; see `estimate`. */
  lookup(valuesPerField: unknown[][]): Set<string> {
    const ids = new Set<string>();
    for (const key of this.lookupKeys(valuesPerField)) {
      for (const id of this.buckets.get(key) ?? []) ids.add(id);
    }
    return ids;
  }

  private lookupKeys(valuesPerField: unknown[][]): string[] {
    return combine(valuesPerField.map((values) => values.map(valueKey)));
  }
}
