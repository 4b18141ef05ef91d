/**
 * Reading: which stored documents match a filter (index candidates, then mingo), and how a find
 * shapes them (sort, skip, limit, projection). Results are copies; stored documents never leave.
 */
import { Query } from 'mingo';
import type { Cursor, Document, FindOptions, Sort } from '../port.ts';
import { cloneValue, type Doc } from './codec.ts';
import type { Table } from './table.ts';

function compileFilter(filter: Document): (doc: Doc) => boolean {
  const keys = Object.keys(filter);
  if (keys.length === 0) return () => true;
  // The commonest filter, and compiling a mingo query costs more than the lookup it guards.
  if (keys.length === 1 && typeof filter._id === 'string') return (doc) => doc._id === filter._id;
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

/** Orders, skips and limits stored documents (references in, references out). */
export function arrange(docs: Doc[], options: Pick<FindOptions, 'sort' | 'skip' | 'limit'>): Doc[] {
  const sorted = options.sort === undefined ? docs : new Query({}).find<Doc>(docs).sort(sortSpec(options.sort)).all();
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
