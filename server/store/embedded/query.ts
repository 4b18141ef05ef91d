/**
 * Reading: which stored documents match a filter (index candidates, then mingo), and how a find
 * shapes them (sort, skip, limit, projection). Results are copies; stored documents never leave.
 */
import { Query } from 'mingo';
import type { Cursor, Document, FindOptions, Sort } from '../port.ts';
import { cloneValue, type Doc } from './codec.ts';
import type { Table } from './table.ts';

type Scalar = string | number | boolean;

const isScalar = (value: unknown): value is Scalar =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && !Number.isNaN(value));

/**
 * MongoDB equality of a top-level field with a scalar: the value itself, or an array holding it.
 * Numbers compare by value (1 and 1.0 are one number in JavaScript as in BSON).
 */
function equals(doc: Doc, field: string, value: Scalar): boolean {
  const actual = doc[field];
  return actual === value || (Array.isArray(actual) && actual.includes(value));
}

function compileFilter(filter: Document): (doc: Doc) => boolean {
  const entries = Object.entries(filter);
  if (entries.length === 0) return () => true;
  // Building a mingo Query sets up its whole operator table, which costs far more than the
  // lookups hot paths make (`{_id}`, `{hash}`, `{workspaceId, status}`): plain equality of
  // top-level fields with scalars is tested directly; everything else goes to mingo.
  if (entries.every(([field, value]) => !field.includes('.') && !field.startsWith('$') && isScalar(value))) {
    const pairs = entries as Array<[string, Scalar]>;
    return (doc) => pairs.every(([field, value]) => equals(doc, field, value));
  }
  const query = new Query(filter);
  return (doc) => query.test(doc);
}

/** Stored documents matching `filter`, lazily, so a caller wanting the first stops early. */
export function* matching(table: Table, filter: Document): Generator<Doc> {
  const test = compileFilter(filter);
  for (const doc of table.candidates(filter)) if (test(doc)) yield doc;
}

const DIRECTIONS: Record<string, 1 | -1> = { '1': 1, '-1': -1, asc: 1, desc: -1, ascending: 1, descending: -1 };

function direction(field: string, value: unknown): 1 | -1 {
  const found = DIRECTIONS[String(value).toLowerCase()];
  if (found === undefined) throw new Error(`Unsupported sort direction for ${field}: ${JSON.stringify(value)}`);
  return found;
}

/** Reads a sort in any of the driver's forms into mingo's `{ field: 1 | -1 }`. */
function sortSpec(sort: Sort): Record<string, 1 | -1> {
  const spec: Record<string, 1 | -1> = {};
  const isDirection = (v: unknown) => typeof v === 'number' || (typeof v === 'string' && v.toLowerCase() in DIRECTIONS);
  const isPair = (x: unknown): x is readonly [string, unknown] =>
    Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && isDirection(x[1]);
  if (typeof sort === 'string') spec[sort] = 1;
  else if (sort instanceof Map) for (const [field, dir] of sort) spec[field] = direction(field, dir);
  else if (isPair(sort)) spec[sort[0]] = direction(sort[0], sort[1]);
  else if (Array.isArray(sort)) {
    for (const item of sort as unknown[]) {
      if (typeof item === 'string') spec[item] = 1;
      else if (Array.isArray(item)) spec[String(item[0])] = direction(String(item[0]), item[1]);
    }
  } else if (typeof sort === 'object') {
    for (const [field, dir] of Object.entries(sort as Record<string, unknown>)) spec[field] = direction(field, dir);
  } else {
    throw new Error(`Unsupported sort: ${JSON.stringify(sort)}`);
  }
  return spec;
}

function valueAt(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Sorts natively when every sort key holds only numbers, only strings or only Dates (missing
 * allowed, first, as MongoDB orders null before them): the same order as MongoDB's, without
 * mingo's per-query setup. Mixed types, arrays and objects go to mingo's full comparison.
 */
function nativeSort(docs: Doc[], spec: Record<string, 1 | -1>): Doc[] | null {
  const fields = Object.entries(spec);
  const keyed: Array<{ doc: Doc; keys: Array<number | string | undefined> }> = [];
  const kinds = fields.map(() => new Set<string>());
  for (const doc of docs) {
    const keys = fields.map(([path], i) => {
      const value = valueAt(doc, path);
      if (value === undefined || value === null) return undefined;
      const kind = value instanceof Date ? 'date' : typeof value;
      kinds[i]!.add(kind);
      return value instanceof Date ? value.getTime() : (value as number | string);
    });
    keyed.push({ doc, keys });
  }
  if (kinds.some((k) => k.size > 1 || [...k].some((kind) => !['number', 'string', 'date'].includes(kind)))) return null;
  keyed.sort((a, b) => {
    for (let i = 0; i < fields.length; i++) {
      const x = a.keys[i];
      const y = b.keys[i];
      if (x === y) continue;
      const order = x === undefined ? -1 : y === undefined ? 1 : x < y ? -1 : 1;
      return order * fields[i]![1];
    }
    return 0;
  });
  return keyed.map((k) => k.doc);
}

/** Orders, skips and limits stored documents (references in, references out). */
export function arrange(docs: Doc[], options: Pick<FindOptions, 'sort' | 'skip' | 'limit'>): Doc[] {
  let sorted = docs;
  if (options.sort !== undefined) {
    const spec = sortSpec(options.sort);
    sorted = nativeSort(docs, spec) ?? new Query({}).find<Doc>(docs).sort(spec).all();
  }
  const skip = options.skip ?? 0;
  // As in MongoDB, a negative limit means the same as its absolute value for a plain find.
  const limit = Math.abs(options.limit ?? 0);
  return skip || limit ? sorted.slice(skip, limit ? skip + limit : undefined) : sorted;
}

/** Copies of documents for a caller, projected. */
export function project(docs: Doc[], projection: Document | undefined): Doc[] {
  const shaped = projection && Object.keys(projection).length > 0 ? new Query({}).find<Doc>(docs, projection).all() : docs;
  return shaped.map(cloneValue);
}

/** Runs its query when read, as a driver cursor does. */
export class ArrayCursor<T> implements Cursor<T> {
  constructor(private readonly run: () => T[]) {}

  async toArray(): Promise<T[]> {
    return this.run();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    yield* this.run();
  }
}
