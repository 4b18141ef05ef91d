/**
 * One collection's documents and indexes. Documents are frozen in spirit: a change replaces the
 * stored object rather than editing it, so references captured for a snapshot stay valid.
 */
import { DUPLICATE_KEY } from '../port.ts';
import type { Doc } from './codec.ts';
import { Index, type IndexSpec } from './indexes.ts';

const ID_INDEX = '_id_';

export class DuplicateKeyError extends Error {
  readonly code = DUPLICATE_KEY;
  readonly keyPattern: Record<string, 1>;

  constructor(
    collection: string,
    index: string,
    readonly keyValue: Record<string, unknown>,
  ) {
    const shown = Object.entries(keyValue)
      .map(([field, value]) => `${field}: ${value === undefined ? 'null' : JSON.stringify(value)}`)
      .join(', ');
    super(`E11000 duplicate key error collection: ${collection} index: ${index} dup key: { ${shown} }`);
    this.keyPattern = Object.fromEntries(Object.keys(keyValue).map((field) => [field, 1 as const]));
  }
}

/** Error codes MongoDB uses when createIndex conflicts with an existing index. */
const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

export class IndexConflictError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

function valueAt(doc: Doc, field: string): unknown {
  let value: unknown = doc;
  for (const segment of field.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** The values of a filter condition on one field when it is an equality (or `$in`) an index can serve. */
function equalityValues(condition: unknown): unknown[] | undefined {
  const literal = (v: unknown) => !(v instanceof RegExp) && !Array.isArray(v); // arrays match as whole values
  if (condition === undefined || !literal(condition)) return undefined;
  if (typeof condition !== 'object' || condition === null || condition instanceof Date) return [condition];
  const keys = Object.keys(condition);
  if (!keys.some((k) => k.startsWith('$'))) return [condition];
  const ops = condition as { $eq?: unknown; $in?: unknown };
  if ('$eq' in ops) return ops.$eq !== undefined && literal(ops.$eq) ? [ops.$eq] : undefined;
  if (Array.isArray(ops.$in) && ops.$in.every(literal)) return ops.$in;
  return undefined;
}

function sameSpec(a: IndexSpec, b: IndexSpec): boolean {
  return (
    a.fields.join() === b.fields.join() &&
    a.unique === b.unique &&
    a.sparse === b.sparse &&
    a.expireAfterSeconds === b.expireAfterSeconds
  );
}

export class Table {
  private readonly docs = new Map<string, Doc>();
  private readonly indexes = new Map<string, Index>();

  constructor(readonly name: string) {}

  get size(): number {
    return this.docs.size;
  }

  get(id: string): Doc | undefined {
    return this.docs.get(id);
  }

  all(): IterableIterator<Doc> {
    return this.docs.values();
  }

  /** Adds a document whose `_id` must be new; throws DuplicateKeyError having changed nothing. */
  insert(doc: Doc): void {
    if (this.docs.has(doc._id)) throw new DuplicateKeyError(this.name, ID_INDEX, { _id: doc._id });
    this.put(doc);
  }

  /** Stores `doc` in place of the document with its `_id`; throws DuplicateKeyError having changed nothing. */
  put(doc: Doc): Doc | undefined {
    for (const index of this.indexes.values()) {
      if (index.conflict(doc) !== undefined) {
        const keyValue = Object.fromEntries(index.spec.fields.map((field) => [field, valueAt(doc, field)]));
        throw new DuplicateKeyError(this.name, index.spec.name, keyValue);
      }
    }
    return this.restore(doc._id, doc);
  }

  remove(id: string): Doc | undefined {
    return this.restore(id, undefined);
  }

  /**
   * Sets the document stored under `id` without checking constraints: for replay and rollback,
   * whose target states were valid when first reached.
   */
  restore(id: string, doc: Doc | undefined): Doc | undefined {
    const previous = this.docs.get(id);
    if (previous) for (const index of this.indexes.values()) index.remove(previous);
    if (doc) {
      this.docs.set(id, doc);
      for (const index of this.indexes.values()) index.add(doc);
    } else {
      this.docs.delete(id);
    }
    return previous;
  }

  /** Builds the index over the current documents; a no-op when an identical one exists. */
  createIndex(spec: IndexSpec): string {
    if (spec.fields.length === 1 && spec.fields[0] === '_id') return ID_INDEX;
    const existing = this.indexes.get(spec.name);
    if (existing) {
      if (sameSpec(existing.spec, spec)) return spec.name;
      throw new IndexConflictError(
        `An existing index has the same name as the requested index but different keys or options: ${spec.name}`,
        INDEX_KEY_SPECS_CONFLICT,
      );
    }
    for (const other of this.indexes.values()) {
      if (other.spec.fields.join() === spec.fields.join()) {
        throw new IndexConflictError(
          `Index already exists with a different name or options: ${other.spec.name}`,
          INDEX_OPTIONS_CONFLICT,
        );
      }
    }
    const index = new Index(spec);
    for (const doc of this.docs.values()) {
      if (index.conflict(doc) !== undefined) {
        const keyValue = Object.fromEntries(spec.fields.map((field) => [field, valueAt(doc, field)]));
        throw new DuplicateKeyError(this.name, spec.name, keyValue);
      }
      index.add(doc);
    }
    this.indexes.set(spec.name, index);
    return spec.name;
  }

  /**
   * Documents that may match `filter`: found through `_id` or the most selective index whose
   * every field the filter constrains to equal values, else all of them. The caller still tests
   * each one against the whole filter.
   */
  candidates(filter: Record<string, unknown>): Iterable<Doc> {
    const ids = equalityValues(filter._id);
    if (ids) return this.byIds(new Set(ids.filter((id): id is string => typeof id === 'string')));
    let best: { index: Index; values: unknown[][]; estimate: number } | undefined;
    for (const index of this.indexes.values()) {
      const values = index.spec.fields.map((field) => equalityValues(filter[field]));
      if (values.some((v) => v === undefined)) continue;
      const usable = values as unknown[][];
      const estimate = index.estimate(usable);
      if (estimate !== undefined && (!best || estimate < best.estimate)) best = { index, values: usable, estimate };
    }
    return best ? this.byIds(best.index.lookup(best.values)) : this.docs.values();
  }

  private *byIds(ids: Iterable<string>): Iterable<Doc> {
    for (const id of ids) {
      const doc = this.docs.get(id);
      if (doc) yield doc;
    }
  }

  /** Ids of documents whose TTL has passed: the indexed date (earliest, for an array) plus the TTL. */
  expired(now: number): string[] {
    const ids: string[] = [];
    for (const { spec } of this.indexes.values()) {
      if (spec.expireAfterSeconds === undefined) continue;
      const ttl = spec.expireAfterSeconds * 1000;
      for (const doc of this.docs.values()) {
        const value = valueAt(doc, spec.fields[0]!);
        const dates = (Array.isArray(value) ? value : [value]).filter((v): v is Date => v instanceof Date);
        if (dates.length > 0 && Math.min(...dates.map((d) => d.getTime())) + ttl <= now) ids.push(doc._id);
      }
    }
    return ids;
  }
}
