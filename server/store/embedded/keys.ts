/**
 * Index keys and the SQL that finds candidates by them.
 *
 * A non-unique index is a key table beside its collection, `(k, id)`, with one row per value the
 * indexed path reaches in a document: through arrays of documents on the way, and each element of
 * an array at its end (MongoDB's multikey rule). SQLite's expression indexes cannot do that: a
 * `json_extract` of an array is the whole array, so `{tags: 'x'}` would miss `tags: ['x', 'y']`.
 * Values are kept as SQLite values: strings as text, numbers, Dates as their milliseconds and
 * booleans as 0 or 1 (so a key may stand for several MongoDB values; see below). Null, documents
 * and arrays inside arrays get no row: queries on them are not answered from the index.
 *
 * A filter's conditions on indexed paths (and on `_id`, the table's own key) become SQL that finds
 * a superset of the matching documents; the filter itself (predicate.ts, mingo) then decides on
 * each. So SQL only ever has to be generous: a Date key also finds the number of its milliseconds,
 * a range on numbers stops where SQLite's text begins, and anything harder (`$ne`, `$regex`,
 * `$elemMatch`, `$or`, null) is left to the filter over what the other conditions found.
 */
import type { Document } from '../port.ts';

export type SqlValue = string | number;

/** A path's key table, for the collection's first field of an index. */
export interface KeyTable {
  path: string;
  table: string;
}

const isDocument = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** A scalar as the key table holds it; undefined for what gets no key (null, documents, arrays, NaN). */
export function keyOf(value: unknown): SqlValue | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  return undefined;
}

/** The keys a document files under `path` (split on dots). */
export function keysAt(doc: Document, path: readonly string[]): Set<SqlValue> {
  const keys = new Set<SqlValue>();
  const add = (value: unknown) => {
    const key = keyOf(value);
    if (key !== undefined) keys.add(key);
  };
  const walk = (value: unknown, i: number): void => {
    if (i === path.length) {
      if (Array.isArray(value)) value.forEach(add);
      else add(value);
    } else if (Array.isArray(value)) {
      for (const element of value) if (isDocument(element)) walk(element, i);
      if (/^\d+$/.test(path[i]!)) walk(value[Number(path[i])], i + 1);
    } else if (isDocument(value)) {
      walk(value[path[i]!], i + 1);
    }
  };
  walk(doc, 0);
  return keys;
}

/** One condition as SQL over a column (`k` of a key table, or the collection's `_id`). */
export interface Condition {
  path: string;
  /** SQL with `?` for `params`, over the column named `{col}`. */
  sql: string;
  params: SqlValue[];
  /** How many values it names (equality, `$in`); Infinity for a range. */
  values: number;
  /** An equality with strings and numbers only, which the document's JSON spells the same way. */
  plain?: boolean;
}

/** MongoDB's range operators as SQL's. */
export const RANGE = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/**
 * The conditions of `filter` SQL can answer: equality, `$eq`, `$in`, `$all` and ranges on a path,
 * at the top level or inside `$and`. Each is true of every document the filter matches.
 */
export function conditionsOf(filter: Document, into: Condition[] = []): Condition[] {
  for (const [path, condition] of Object.entries(filter)) {
    if (path === '$and' && Array.isArray(condition)) {
      for (const clause of condition) if (isDocument(clause)) conditionsOf(clause, into);
      continue;
    }
    if (path.startsWith('$')) continue;
    const key = keyOf(condition);
    if (key !== undefined) {
      into.push(equality(path, [key], isPlain(condition)));
      continue;
    }
    if (!isDocument(condition) || !Object.keys(condition).every((op) => op.startsWith('$'))) continue;
    if ('$eq' in condition) pushValues(into, path, [condition.$eq]);
    if (Array.isArray(condition.$in)) pushValues(into, path, condition.$in);
    if (Array.isArray(condition.$all)) for (const value of condition.$all) pushValues(into, path, [value]);
    rangeOf(path, condition, into);
  }
  return into;
}

const isPlain = (value: unknown) => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function equality(path: string, keys: SqlValue[], plain: boolean): Condition {
  const sql = keys.length === 1 ? '{col} = ?' : `{col} IN (${keys.map(() => '?').join(',')})`;
  return { path, sql, params: keys, values: keys.length, plain };
}

/** Equality with any of `values`, when every one has a key (one without, e.g. null, could match what has none). */
function pushValues(into: Condition[], path: string, values: unknown[]): void {
  const keys = values.map(keyOf);
  if (values.length > 0 && keys.every((k) => k !== undefined)) into.push(equality(path, [...new Set(keys as SqlValue[])], values.every(isPlain)));
}

/**
 * A range's bounds. SQLite orders numbers before text, so a numeric bound stops where text begins
 * (`< ''`) and a text bound stays between text's start (`>= ''`) and where blobs begin (`< x''`):
 * MongoDB compares only values of one type.
 */
function rangeOf(path: string, condition: Record<string, unknown>, into: Condition[]): void {
  const bounds: Array<[string, SqlValue]> = [];
  for (const [op, sign] of Object.entries(RANGE)) {
    if (!(op in condition)) continue;
    const bound = condition[op];
    const key = typeof bound === 'boolean' ? undefined : keyOf(bound);
    if (key === undefined) return;
    bounds.push([sign, key]);
  }
  // Each bound is its own condition: over an array, MongoDB lets each be met by a different element.
  for (const [sign, key] of bounds) {
    const closing = typeof key === 'number' ? "{col} < ''" : "{col} >= '' AND {col} < x''";
    into.push({ path, sql: `{col} ${sign} ? AND ${closing}`, params: [key], values: Infinity });
  }
}
