/**
 * How a find shapes the documents it read (sort, skip, limit, projection). Every document was
 * parsed from the database for this read alone, so it is the caller's own: nothing is copied.
 */
import { Query } from 'mingo';
import type { Cursor, Document, FindOptions, Sort } from '../port.ts';
import type { Doc } from './codec.ts';

const DIRECTIONS: Record<string, 1 | -1> = { '1': 1, '-1': -1, asc: 1, desc: -1, ascending: 1, descending: -1 };

function direction(field: string, value: unknown): 1 | -1 {
  const found = DIRECTIONS[String(value).toLowerCase()];
  if (found === undefined) throw new Error(`Unsupported sort direction for ${field}: ${JSON.stringify(value)}`);
  return found;
}

/** Reads a sort in any of the driver's forms into mingo's `{ field: 1 | -1 }`. */
export function sortSpec(sort: Sort): Record<string, 1 | -1> {
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
 * mingo's per-query setup. Mixed types, arrays and objects go to mingo's full comparison. Only the
 * first `count` are returned, picked with a heap when they are few.
 */
function nativeSort(docs: Doc[], spec: Record<string, 1 | -1>, count: number): Doc[] | null {
  const fields = Object.entries(spec);
  const keyed: Array<{ doc: Doc; position: number; keys: Array<number | string | undefined> }> = [];
  const kinds = fields.map(() => new Set<string>());
  for (let position = 0; position < docs.length; position++) {
    const doc = docs[position]!;
    const keys = fields.map(([path], i) => {
      const value = valueAt(doc, path);
      if (value === undefined || value === null) return undefined;
      const kind = value instanceof Date ? 'date' : typeof value;
      kinds[i]!.add(kind);
      return value instanceof Date ? value.getTime() : (value as number | string);
    });
    keyed.push({ doc, position, keys });
  }
  if (kinds.some((k) => k.size > 1 || [...k].some((kind) => !['number', 'string', 'date'].includes(kind)))) return null;
  // Ties keep their input order, as a stable sort would, so both ways give the same result.
  const compare = (a: (typeof keyed)[number], b: (typeof keyed)[number]) => {
    for (let i = 0; i < fields.length; i++) {
      const x = a.keys[i];
      const y = b.keys[i];
      if (x === y) continue;
      const order = x === undefined ? -1 : y === undefined ? 1 : x < y ? -1 : 1;
      return order * fields[i]![1];
    }
    return a.position - b.position;
  };
  const sorted = count < keyed.length / 8 ? smallest(keyed, count, compare) : keyed.sort(compare);
  return sorted.map((k) => k.doc);
}

/** The `count` least items in order, kept in a bounded max-heap instead of sorting them all. */
function smallest<T>(items: T[], count: number, compare: (a: T, b: T) => number): T[] {
  const heap: T[] = [];
  for (const item of items) {
    if (heap.length < count) {
      // Sift up: the greatest kept stays at the root.
      let i = heap.push(item) - 1;
      while (i > 0 && compare(item, heap[(i - 1) >> 1]!) > 0) {
        heap[i] = heap[(i - 1) >> 1]!;
        i = (i - 1) >> 1;
      }
      heap[i] = item;
    } else if (compare(item, heap[0]!) < 0) {
      // Sift down from the root, which `item` replaces.
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const child = left + 1 < count && compare(heap[left + 1]!, heap[left]!) > 0 ? left + 1 : left;
        if (child >= count || compare(heap[child]!, item) <= 0) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = item;
    }
  }
  return heap.sort(compare);
}

/** Orders, skips and limits stored documents (references in, references out). */
export function arrange(docs: Doc[], options: Pick<FindOptions, 'sort' | 'skip' | 'limit'>): Doc[] {
  const skip = options.skip ?? 0;
  // As in MongoDB, a negative limit means the same as its absolute value for a plain find.
  const limit = Math.abs(options.limit ?? 0);
  let sorted = docs;
  if (options.sort !== undefined) {
    const spec = sortSpec(options.sort);
    sorted = nativeSort(docs, spec, limit ? skip + limit : Infinity) ?? new Query({}).find<Doc>(docs).sort(spec).all();
  }
  return skip || limit ? sorted.slice(skip, limit ? skip + limit : undefined) : sorted;
}

/** Documents projected as `projection` says (the inputs are the caller's own, see above). */
export function project(docs: Doc[], projection: Document | undefined): Doc[] {
  if (!projection || Object.keys(projection).length === 0) return docs;
  const fields = topLevelFields(projection);
  if (!fields) return new Query({}).find<Doc>(docs, projection).all();
  return docs.map((doc) => {
    const copy: Record<string, unknown> = {};
    for (const key in doc) if (fields.has(key) === fields.include) copy[key] = doc[key];
    return copy as Doc;
  });
}

/**
 * The fields a projection keeps (`include`) or drops when it names only top-level fields, all
 * to keep or all to drop (`_id` aside, which is kept unless dropped): the common shapes, copied
 * directly, the kept fields in the document's order as MongoDB returns them. Undefined for
 * anything else (paths, operators, expressions), which mingo evaluates.
 */
function topLevelFields(projection: Document): { has(key: string): boolean; include: boolean } | undefined {
  const entries = Object.entries(projection);
  if (entries.some(([key, value]) => key.includes('.') || key.startsWith('$') || !(value === 0 || value === 1 || value === true || value === false))) {
    return undefined;
  }
  const others = entries.filter(([key]) => key !== '_id');
  const include = others.length > 0 ? Boolean(others[0]![1]) : Boolean(projection._id);
  if (others.some(([, value]) => Boolean(value) !== include)) return undefined;
  const named = new Set(others.map(([key]) => key));
  const idKept = projection._id === undefined ? true : Boolean(projection._id);
  if (include) {
    if (idKept) named.add('_id');
  } else if (!idKept) {
    named.add('_id');
  }
  return { has: (key) => named.has(key), include };
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
