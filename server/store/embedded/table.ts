/**
 * One collection's documents and indexes. Documents are frozen in spirit: a change replaces the
 * stored object rather than editing it, so references captured for a snapshot stay valid.
 *
 * Each document has a row number while it is stored, which the indexes hold instead of its `_id`:
 * over a large table, hashing and fetching by small integers is several times faster than by
 * strings (whose hashes sit in memory that a query would otherwise never touch).
 */
import { DUPLICATE_KEY } from '../port.ts';
import type { Doc } from './codec.ts';
import { equalityValues, Index, rangesOf, type Access, type IndexSpec } from './indexes.ts';
import { SortedKeys, type Bound } from './sorted-keys.ts';

const ID_INDEX = '_id_';

/** Below this size a full scan costs less than keeping the ids in order. */
const ORDERED_IDS_MIN = 4096;

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

/** The conditions a filter puts on each field, at its top level and in `$and`s: all must hold. */
function fieldConditions(filter: Record<string, unknown>, out = new Map<string, unknown[]>()): Map<string, unknown[]> {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const part of condition) if (typeof part === 'object' && part !== null) fieldConditions(part as Record<string, unknown>, out);
    } else if (!field.startsWith('$')) {
      out.set(field, [...(out.get(field) ?? []), condition]);
    }
  }
  return out;
}

/** How a query reaches the documents that may match it. */
export interface Plan {
  /** Documents that may match, each once: through the most selective index, or all of them. */
  docs(): Iterable<Doc>;
  /**
   * The first `count` documents passing `test` in `_id` order, found by walking the ids in order;
   * undefined when that is not expected to beat `docs` (the caller then sorts those).
   */
  firstById(test: (doc: Doc) => boolean, count: number, descending: boolean): Doc[] | undefined;
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
  /** Rows by `_id`, in the order documents arrived (the natural order of a find). */
  private readonly rowOf = new Map<string, number>();
  private readonly rows: Array<Doc | undefined> = [];
  /** Rows freed by removals, taken again by insertions. */
  private readonly free: number[] = [];
  private readonly indexes = new Map<string, Index>();
  /** The ids in order, kept from the first query that needs them. */
  private order: SortedKeys<string> | undefined;

  constructor(readonly name: string) {}

  get size(): number {
    return this.rowOf.size;
  }

  get(id: string): Doc | undefined {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.rows[row];
  }

  *all(): Generator<Doc> {
    for (const row of this.rowOf.values()) yield this.rows[row]!;
  }

  /** Adds a document whose `_id` must be new; throws DuplicateKeyError having changed nothing. */
  insert(doc: Doc): void {
    if (this.rowOf.has(doc._id)) throw new DuplicateKeyError(this.name, ID_INDEX, { _id: doc._id });
    this.put(doc);
  }

  /** Stores `doc` in place of the document with its `_id`; throws DuplicateKeyError having changed nothing. */
  put(doc: Doc): Doc | undefined {
    for (const index of this.indexes.values()) {
      if (index.conflict(doc, this.rowOf.get(doc._id))) {
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
    let row = this.rowOf.get(id);
    const previous = row === undefined ? undefined : this.rows[row];
    if (previous) for (const index of this.indexes.values()) index.remove(previous, row!);
    if (doc) {
      if (row === undefined) {
        row = this.free.pop() ?? this.rows.length;
        this.rowOf.set(id, row);
        this.order?.add(id);
      }
      this.rows[row] = doc;
      for (const index of this.indexes.values()) index.add(doc, row);
    } else if (row !== undefined) {
      this.rowOf.delete(id);
      this.rows[row] = undefined;
      this.free.push(row);
      this.order?.change(id);
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
    for (const row of this.rowOf.values()) {
      const doc = this.rows[row]!;
      if (index.conflict(doc, row)) {
        const keyValue = Object.fromEntries(spec.fields.map((field) => [field, valueAt(doc, field)]));
        throw new DuplicateKeyError(this.name, spec.name, keyValue);
      }
      index.add(doc, row);
    }
    this.indexes.set(spec.name, index);
    return spec.name;
  }

  /**
   * How to find the documents that may match `filter`. Each index (and `_id`) offers an access
   * for the conditions it can serve; the smallest drives, and the others that a few hash lookups
   * can test are checked before a document is fetched, which costs more (memory, not CPU, is
   * what a query over a large table waits for).
   */
  plan(filter: Record<string, unknown>): Plan {
    const conditions = fieldConditions(filter);
    const conditionsOf = (field: string) => conditions.get(field) ?? [];
    const accesses: Access[] = [];
    const order = conditions.has('_id') ? this.idOrder() : undefined;
    let idRange: { lower?: Bound<string>; upper?: Bound<string>; access: Access } | undefined;
    for (const condition of conditionsOf('_id')) {
      const ids = equalityValues(condition);
      if (ids) {
        const rows = new Set(ids.map((id) => (typeof id === 'string' ? this.rowOf.get(id) : undefined)));
        rows.delete(undefined);
        const found = rows as Set<number>;
        accesses.push({ estimate: found.size, rows: () => found, has: (row) => found.has(row), probes: 1 });
      }
      // Ids are strings, which a number range never matches (and the filter test rejects).
      for (const [lower, upper] of order ? (rangesOf(condition, true) as Array<[Bound<string>?, Bound<string>?]>) : []) {
        if (typeof (lower ?? upper)!.value !== 'string') continue;
        const access = { estimate: order!.count(lower, upper), rows: () => this.rowsOf(order!.scan(lower, upper)), probes: 0 };
        if (!idRange || access.estimate < idRange.access.estimate) idRange = { lower, upper, access };
      }
    }
    if (idRange) accesses.push(idRange.access);
    for (const index of this.indexes.values()) {
      const access = index.access(conditionsOf);
      if (access) accesses.push(access);
    }
    accesses.sort((a, b) => a.estimate - b.estimate);
    const driver = accesses[0];
    const size = Math.max(1, this.rowOf.size);
    // Probing pays when its lookups cost less than the fetches it saves: a fetch costs about three.
    const probes = accesses.filter((a) => a.has && a.probes < 3 * (1 - a.estimate / size)).map((a) => a.has!);
    const admitted = (row: number, tests: typeof probes) => tests.every((has) => has(row));

    const docs = (): Iterable<Doc> => {
      if (!driver) return this.all();
      const others = probes.filter((has) => has !== driver.has);
      return this.fetch(driver.rows(), (row) => admitted(row, others));
    };

    const firstById = (test: (doc: Doc) => boolean, count: number, descending: boolean): Doc[] | undefined => {
      const ordered = idRange ? order : this.idOrder();
      if (!ordered) return undefined;
      // Walking the ids finds `count` matches after about count / share of them, taking the
      // indexed conditions as independent. Unless an `_id` range drives, that is tried only when
      // well below the driver's candidates, and given up at half of them.
      let budget = Infinity;
      if (driver && driver !== idRange?.access) {
        const share = accesses.reduce((product, a) => product * Math.min(1, a.estimate / size), 1);
        if (count / Math.max(share, 1 / size) > driver.estimate / 4) return undefined;
        budget = driver.estimate / 2;
      }
      const found: Doc[] = [];
      for (const at of ordered.positions(idRange?.lower, idRange?.upper, descending)) {
        if (--budget < 0) return undefined;
        const row = ordered.valueAt(at) ?? this.rowOf.get(ordered.keyAt(at));
        if (row === undefined || !admitted(row, probes)) continue;
        const doc = this.rows[row]!;
        if (test(doc) && found.push(doc) === count) break;
      }
      return found;
    };

    return { docs, firstById };
  }

  private *fetch(rows: Iterable<number>, admits: (row: number) => boolean): Generator<Doc> {
    for (const row of rows) if (admits(row)) yield this.rows[row]!;
  }

  /** The rows of the ids still stored. */
  private *rowsOf(ids: Iterable<string>): Generator<number> {
    for (const id of ids) {
      const row = this.rowOf.get(id);
      if (row !== undefined) yield row;
    }
  }

  private idOrder(): SortedKeys<string> | undefined {
    if (!this.order && this.rowOf.size >= ORDERED_IDS_MIN) {
      this.order = new SortedKeys(this.rowOf.keys(), (id) => this.rowOf.has(id), (id) => this.rowOf.get(id));
    }
    return this.order;
  }

  /** Ids of documents whose TTL has passed: the indexed date (earliest, for an array) plus the TTL. */
  expired(now: number): string[] {
    const ids: string[] = [];
    for (const { spec } of this.indexes.values()) {
      if (spec.expireAfterSeconds === undefined) continue;
      const ttl = spec.expireAfterSeconds * 1000;
      for (const doc of this.all()) {
        const value = valueAt(doc, spec.fields[0]!);
        const dates = (Array.isArray(value) ? value : [value]).filter((v): v is Date => v instanceof Date);
        if (dates.length > 0 && Math.min(...dates.map((d) => d.getTime())) + ttl <= now) ids.push(doc._id);
      }
    }
    return ids;
  }
}
