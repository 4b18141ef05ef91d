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
import type { JournalRecord } from './mutation.ts';
import { equalityValues, Index, rangesOf, type Access, type IndexSpec } from './indexes.ts';
import { SortedKeys, type Bound } from './sorted-keys.ts';

const ID_INDEX = '_id_';

/** Below this size a full scan costs less than keeping the ids in order. */
const ORDERED_IDS_MIN = 4096;

/**
 * What a query costs is mostly memory latency. Fetching and testing a document is the unit; a hash
 * lookup costs about a third of it, and a step through rows (or ids in order) about this much.
 */
const VISIT_COST = 1 / 16;
const LOOKUP_COST = 1 / 3;

/** Candidates tested to learn how many documents match. */
const SAMPLE = 128;

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

/** Thrown on any use of a table other than bulk loading once a bulk load has started. */
export class TableUnloadedError extends Error {
  readonly code = 'COLLECTION_BULK_LOADED';

  constructor(collection: string) {
    super(`${collection} is being bulk loaded by this process, which holds only part of it; reopen the store to use it`);
  }
}

export class Table {
  /** Documents by `_id`, in the order they arrived (the natural order of a find). */
  private readonly docs = new Map<string, Doc>();
  private readonly rowOf = new Map<string, number>();
  private readonly rows: Array<Doc | undefined> = [];
  /** Rows freed by removals, taken again by insertions. */
  private readonly free: number[] = [];
  private readonly indexes = new Map<string, Index>();
  /**
   * Non-unique indexes declared but not built yet (see `createIndex`). They constrain nothing, so
   * until a query needs them they cost nothing: a one-shot command writing a million documents
   * need not maintain indexes that only queries read.
   */
  private readonly deferred = new Map<string, IndexSpec>();
  /** The ids in order, kept from the first query that needs them. */
  private order: SortedKeys<string> | undefined;
  /**
   * Set by `unload`: documents are being written past this table, so it no longer holds them,
   * only the ids it held that the load has not written again (see `forget`).
   */
  private unloaded: Set<string> | undefined;

  /**
   * `unread`: the records to read before first use (a lazy start-up; see recovery.ts). They are
   * read by whatever first needs the documents; declaring a deferred index does not.
   */
  constructor(
    readonly name: string,
    private unread?: () => Iterable<JournalRecord>,
  ) {}

  get size(): number {
    return this.whole().docs.size;
  }

  get(id: string): Doc | undefined {
    return this.whole().docs.get(id);
  }

  all(): IterableIterator<Doc> {
    return this.whole().docs.values();
  }

  private whole(): this {
    if (this.unloaded) throw new TableUnloadedError(this.name);
    if (this.unread) this.read(this.unread);
    return this;
  }

  private read(unread: () => Iterable<JournalRecord>): void {
    this.unread = undefined;
    for (const record of unread()) this.replay(record);
  }

  /** Applies a journal record as start-up does; how many stored documents it replaced or removed. */
  replay(record: JournalRecord): number {
    let superseded = 0;
    for (const id of record.del ?? []) if (this.restore(id, undefined)) superseded++;
    for (const doc of record.put ?? []) if (this.restore(doc._id, doc)) superseded++;
    return superseded;
  }

  /**
   * Hands the collection over to a bulk load (see bulk-load.ts): from here on documents are
   * written to the journal without passing through this table, so nothing may read or write it,
   * and the documents it holds are let go (a second import of a million establishments would
   * otherwise hold the first one's all along). Returns what it held, each document reduced to
   * the top-level `fields`; unread records are read for that one at a time, never all kept.
   * A unique index other than `_id` could no longer be enforced, so such a table is refused.
   */
  unload(fields: string[]): Map<string, Record<string, unknown>> {
    if (this.unloaded) throw new Error(`${this.name} is already being bulk loaded`);
    const unique = [...this.indexes.values()].find((index) => index.spec.unique);
    if (unique) throw new Error(`${this.name} cannot be bulk loaded: its unique index ${unique.spec.name} could not be enforced`);
    const pick = (doc: Doc) => Object.fromEntries(fields.filter((field) => field in doc).map((field) => [field, doc[field]]));
    const held = new Map<string, Record<string, unknown>>();
    if (this.unread) {
      for (const record of this.unread()) {
        for (const id of record.del ?? []) held.delete(id);
        for (const doc of record.put ?? []) held.set(doc._id, pick(doc));
      }
      this.unread = undefined;
    } else {
      for (const doc of this.docs.values()) held.set(doc._id, pick(doc));
    }
    this.unloaded = new Set(held.keys());
    this.docs.clear();
    this.rowOf.clear();
    this.rows.length = 0;
    this.free.length = 0;
    this.indexes.clear();
    this.deferred.clear();
    this.order = undefined;
    return held;
  }

  /** For a bulk load: whether the table held a document under `id`, which the load now writes again or removes. */
  forget(id: string): boolean {
    return this.unloaded?.delete(id) ?? false;
  }

  /** Adds a document whose `_id` must be new; throws DuplicateKeyError having changed nothing. */
  insert(doc: Doc): void {
    if (this.whole().docs.has(doc._id)) throw new DuplicateKeyError(this.name, ID_INDEX, { _id: doc._id });
    this.put(doc);
  }

  /** Stores `doc` in place of the document with its `_id`; throws DuplicateKeyError having changed nothing. */
  put(doc: Doc): Doc | undefined {
    this.whole();
    for (const index of this.indexes.values()) {
      if (index.conflict(doc, this.rowOf.get(doc._id))) {
        const keyValue = Object.fromEntries(index.spec.fields.map((field) => [field, valueAt(doc, field)]));
        throw new DuplicateKeyError(this.name, index.spec.name, keyValue);
      }
    }
    return this.restore(doc._id, doc);
  }

  remove(id: string): Doc | undefined {
    return this.whole().restore(id, undefined);
  }

  /**
   * Sets the document stored under `id` without checking constraints: for replay and rollback,
   * whose target states were valid when first reached.
   */
  restore(id: string, doc: Doc | undefined): Doc | undefined {
    const previous = this.docs.get(id);
    let row = this.rowOf.get(id);
    if (previous) for (const index of this.indexes.values()) index.remove(previous, row!);
    if (doc) {
      if (row === undefined) {
        row = this.free.pop() ?? this.rows.length;
        this.rowOf.set(id, row);
        this.order?.add(id);
      }
      this.docs.set(id, doc);
      this.rows[row] = doc;
      for (const index of this.indexes.values()) index.add(doc, row);
    } else if (row !== undefined) {
      this.docs.delete(id);
      this.rowOf.delete(id);
      this.rows[row] = undefined;
      this.free.push(row);
      this.order?.change(id);
    }
    return previous;
  }

  /**
   * Declares an index; a no-op when an identical one exists. A unique index is built at once (it
   * constrains writes); with `defer`, any other waits until a query first filters on its field.
   */
  createIndex(spec: IndexSpec, defer = false): string {
    if (spec.fields.length === 1 && spec.fields[0] === '_id') return ID_INDEX;
    if (!(defer && !spec.unique)) this.whole();
    const existing = this.indexes.get(spec.name)?.spec ?? this.deferred.get(spec.name);
    if (existing) {
      if (sameSpec(existing, spec)) return spec.name;
      throw new IndexConflictError(
        `An existing index has the same name as the requested index but different keys or options: ${spec.name}`,
        INDEX_KEY_SPECS_CONFLICT,
      );
    }
    for (const other of this.specs()) {
      if (other.fields.join() === spec.fields.join()) {
        throw new IndexConflictError(`Index already exists with a different name or options: ${other.name}`, INDEX_OPTIONS_CONFLICT);
      }
    }
    if (defer && !spec.unique) this.deferred.set(spec.name, spec);
    else this.build(spec);
    return spec.name;
  }

  private specs(): IndexSpec[] {
    return [...[...this.indexes.values()].map((index) => index.spec), ...this.deferred.values()];
  }

  private build(spec: IndexSpec): void {
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
  }

  /**
   * How to find the documents that may match `filter`. Each index (and `_id`) offers an access
   * for the conditions it can serve; the smallest drives, and the others that a few hash lookups
   * can test are checked before a document is fetched, which costs more (memory, not CPU, is
   * what a query over a large table waits for).
   */
  plan(filter: Record<string, unknown>): Plan {
    this.whole();
    // Documents by id need no index: a lookup each is as cheap as it gets.
    const ids = equalityValues(filter._id);
    if (ids) return { docs: () => this.byIds(ids), firstById: () => undefined };
    const conditions = fieldConditions(filter);
    for (const spec of this.deferred.values()) {
      if (conditions.has(spec.fields[0]!)) {
        this.deferred.delete(spec.name);
        this.build(spec);
      }
    }
    const conditionsOf = (field: string) => conditions.get(field) ?? [];
    const accesses: Access[] = [];
    const order = conditions.has('_id') ? this.idOrder() : undefined;
    let idRange: { lower?: Bound<string>; upper?: Bound<string>; access: Access } | undefined;
    for (const condition of conditionsOf('_id')) {
      // Ids are strings, which a number range never matches (and the filter test rejects).
      for (const [lower, upper] of order ? (rangesOf(condition, true) as Array<[Bound<string>?, Bound<string>?]>) : []) {
        if (typeof (lower ?? upper)!.value !== 'string') continue;
        const estimate = order!.count(lower, upper);
        const access = { estimate, matches: estimate, rows: () => this.rowsOf(order!.scan(lower, upper)), probes: 0 };
        if (!idRange || access.estimate < idRange.access.estimate) idRange = { lower, upper, access };
      }
    }
    if (idRange) accesses.push(idRange.access);
    const size = Math.max(1, this.rowOf.size);
    for (const index of this.indexes.values()) {
      const access = index.access(conditionsOf, size);
      if (access) accesses.push(access);
    }
    const passing = (list: Access[]) => list.reduce((share, a) => share * Math.min(1, a.matches / size), 1);
    // Probing pays when its lookups cost less than the fetches it saves; the most selective goes first.
    const probed = accesses.filter((a) => a.has && a.probes * LOOKUP_COST < 1 - passing([a])).sort((a, b) => a.matches - b.matches);
    const probeCost = (list: Access[]) => list.reduce((sum, a) => sum + a.probes * LOOKUP_COST, 0);
    // The driver's rows are each probed by the others, and fetched when they pass.
    const costOf = (a: Access) => {
      const others = probed.filter((o) => o !== a);
      return a.estimate * (VISIT_COST + probeCost(others)) + a.matches * passing(others);
    };
    const driver = accesses.reduce<Access | undefined>((best, a) => (best && costOf(best) <= costOf(a) ? best : a), undefined);
    const others = probed.filter((a) => a !== driver);
    const admitted = (row: number, list: Access[]) => list.every((a) => a.has!(row));

    const docs = (): Iterable<Doc> => (driver ? this.fetch(driver.rows(), (row) => admitted(row, others)) : this.all());

    const firstById = (test: (doc: Doc) => boolean, count: number, descending: boolean): Doc[] | undefined => {
      const ordered = idRange ? order : this.idOrder();
      if (!ordered) return undefined;
      // Walking the ids finds `count` matches after about count / share of them. Unless an `_id`
      // range drives, that is tried only when expected to cost well below taking the driver's
      // candidates, and given up at half of that; a small driver is simply taken.
      let budget = Infinity;
      if (driver && driver !== idRange?.access) {
        if (driver.estimate <= 4 * SAMPLE) return undefined;
        // Testing the first candidates of the most selective access tells the share that matches
        // far better than multiplying estimates: conditions correlate (a city and its state), and
        // some have no index.
        const source = accesses.reduce((best, a) => (a.matches < best.matches ? a : best));
        let sampled = 0;
        let matched = 0;
        for (const row of source.rows(false)) {
          if (sampled === SAMPLE) break;
          sampled++;
          if (test(this.rows[row]!)) matched++;
        }
        const share = (source.matches / size) * ((matched + 0.5) / Math.max(1, sampled));
        const cost = costOf(driver);
        const visit = VISIT_COST + probeCost(probed.slice(0, 1)) + passing(probed);
        if ((count / share) * visit > cost / 2) return undefined;
        budget = cost / 2;
      }
      const found: Doc[] = [];
      for (const at of ordered.positions(idRange?.lower, idRange?.upper, descending)) {
        if ((budget -= VISIT_COST) < 0) return undefined;
        const row = ordered.valueAt(at) ?? this.rowOf.get(ordered.keyAt(at));
        if (row === undefined || !admitted(row, probed)) continue;
        const doc = this.rows[row]!;
        budget--;
        if (test(doc) && found.push(doc) === count) break;
      }
      return found;
    };

    return { docs, firstById };
  }

  private *byIds(ids: unknown[]): Generator<Doc> {
    for (const id of new Set(ids)) {
      const doc = typeof id === 'string' ? this.docs.get(id) : undefined;
      if (doc) yield doc;
    }
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
    // What a bulk load writes is not here to expire; the next process to open the store sweeps it.
    if (this.unloaded) return ids;
    for (const spec of this.specs()) {
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
