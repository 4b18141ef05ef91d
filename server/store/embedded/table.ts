/**
 * One collection's documents and indexes. Documents are frozen in spirit: a change replaces the
 * stored object rather than editing it, so references captured for a snapshot stay valid.
 *
 * Each document has a row number while it is stored, which the indexes hold instead of its `_id`:
 * over a large table, hashing and fetching by small integers is several times faster than by
 * strings (whose hashes sit in memory that a query would otherwise never touch).
 *
 * How a query reaches the documents that may match it is planned in planner.ts, which reads the
 * rows, ids and indexes kept here.
 */
import { DUPLICATE_KEY } from '../port.ts';
import { Block, claim, EncodedDoc, type Column } from './block.ts';
import type { Doc } from './codec.ts';
import { Index, type FieldValues, type IndexSpec } from './indexes.ts';
import type { JournalRecord } from './journal-line.ts';
import { planQuery, type Plan, type Stored } from './planner.ts';
import { SortedKeys } from './sorted-keys.ts';

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

/** A stored document: an object, or still the bytes of the block line it came in (see block.ts). */
export type Held = Doc | EncodedDoc;

const materialize = (held: Held): Doc => (held instanceof EncodedDoc ? held.decode() : held);

/** Files the document at a position of one block in `row`, from the keys the block keeps (see block.ts). */
type KeyFiler = (at: number, row: number) => void;

/** A block's keys for `index`'s fields, parsed once, as a filer for each of its documents; `hasKeys` must hold. */
function keyFiler(index: Index, block: Block): KeyFiler {
  const { fields } = index.spec;
  const columns: Column[] = fields.map((field) => block.column(field));
  const multikey = fields.some((field) => block.multikey(field));
  if (columns.length === 1 && columns[0]!.single) {
    const values = columns[0]!.values;
    return (at, row) => index.addValue(values[at], row, multikey);
  }
  const perField: FieldValues[] = fields.map(() => 0);
  return (at, row) => {
    columns.forEach(({ single, values }, i) => (perField[i] = single ? [values[at]] : (values[at] as FieldValues)));
    index.addValues(perField, multikey, row);
  };
}

/**
 * What parsing a document from its block costs beside reading one kept as an object, in the
 * planner's unit (see planner.ts): about 10 µs for a 2 KB registry document against a quarter.
 */
const DECODE_COST = 40;

export class Table {
  /** Rows by `_id`, in the order the documents arrived (the natural order of a find). */
  private readonly rowOf = new Map<string, number>();
  private readonly rows: Array<Held | undefined> = [];
  /** How many of the rows hold an encoded document. */
  private encodedRows = 0;
  /** Rows freed by removals, taken again by insertions. */
  private readonly free: number[] = [];
  private readonly indexes = new Map<string, Index>();
  /**
   * Non-unique indexes declared but not built yet (see `createIndex`). They constrain nothing, so
   * until a query needs them they cost nothing: a one-shot command writing a million documents
   * need not maintain indexes that only queries read.
   */
  private readonly deferred = new Map<string, IndexSpec>();
  /** Indexes declared before start-up, to build once it has read every line (see `replayBlock`). */
  private readonly unbuilt: IndexSpec[] = [];
  /** Blocks read whose documents the indexes do not hold yet, with the row of each document. */
  private toFile: Array<{ block: Block; rows: Uint32Array }> = [];
  /** The ids in order, kept from the first query that needs them. */
  private order: SortedKeys<string> | undefined;
  /**
   * Set by `unload`: documents are being written past this table, so it no longer holds them,
   * only the ids it held that the load has not written again (see `forget`).
   */
  private unloaded: Set<string> | undefined;
  /** What the planner reads: the collections themselves, which are never replaced, only changed. */
  private readonly stored: Stored = {
    doc: (row) => materialize(this.rows[row]!),
    rowOf: this.rowOf,
    byId: (id) => this.get(id),
    all: () => this.all(),
    fetchCost: () => 1 + (DECODE_COST * this.encodedRows) / Math.max(1, this.rowOf.size),
    idOrder: () => this.idOrder(),
    indexes: (conditions) => this.indexesFor(conditions),
  };

  /**
   * `unread`: the records to read before first use (a lazy start-up; see recovery.ts). They are
   * read by whatever first needs the documents; declaring a deferred index does not.
   */
  constructor(
    readonly name: string,
    private unread?: () => Iterable<JournalRecord>,
  ) {}

  get size(): number {
    return this.whole().rowOf.size;
  }

  get(id: string): Doc | undefined {
    const row = this.whole().rowOf.get(id);
    return row === undefined ? undefined : materialize(this.rows[row]!);
  }

  /** The document stored under `id` as it is held: an object, or still encoded in its block. */
  heldById(id: string): Held | undefined {
    const row = this.whole().rowOf.get(id);
    return row === undefined ? undefined : this.rows[row];
  }

  *all(): Generator<Doc> {
    for (const row of this.whole().rowOf.values()) yield materialize(this.rows[row]!);
  }

  /** Every document as stored (encoded ones still encoded), for a snapshot. */
  held(): Held[] {
    const rows = this.whole().rows;
    return Array.from(this.rowOf.values(), (row) => rows[row]!);
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
   * Stores a block's documents as they are, encoded (see block.ts); how many stored documents
   * they replaced. Indexes declared before start-up reads the store (see recovery.ts) get the
   * block's documents from its keys once every line is read (`finishReplay`), block by block
   * rather than row by row. A block that replaces documents (a re-import) would have to parse
   * each replaced one to take it out of them, so then its table's indexes are built from the
   * final rows instead, as for indexes declared after start-up.
   */
  replayBlock(block: Block): number {
    let superseded = 0;
    const rows = new Uint32Array(block.count);
    for (let at = 0; at < block.count; at++) {
      const id = block.ids[at]!;
      const row = this.rowOf.get(id);
      if (row !== undefined) {
        superseded++;
        if (this.rows[row] instanceof EncodedDoc) this.encodedRows--;
      }
      rows[at] = this.place(id, new EncodedDoc(block, at), row);
    }
    this.encodedRows += block.count;
    // What the indexes hold of the replaced documents goes with them, all rebuilt from the final rows.
    if (superseded > 0 && this.indexes.size > 0) this.buildAfterReplay();
    if (this.indexes.size > 0) this.toFile.push({ block, rows });
    return superseded;
  }

  /**
   * Files the blocks read so far, one index at a time: filing each block in every index as it was
   * read cost a third more (at 1,000,000 documents, eleven large hash tables in turn do not stay
   * in the processor's cache), and reading the file does not wait on it.
   */
  private fileBlocks(): void {
    for (const index of this.indexes.values()) {
      for (const { block, rows } of this.toFile) {
        if (block.hasKeys(index.spec.fields)) {
          const filer = keyFiler(index, block);
          for (let at = 0; at < block.count; at++) filer(at, rows[at]!);
        } else {
          for (let at = 0; at < block.count; at++) index.add(block.decodeAt(at), rows[at]!);
        }
      }
    }
    this.toFile = [];
  }

  /** The indexes to build once start-up has read every line, instead of filing each line's documents. */
  private buildAfterReplay(): void {
    this.toFile = [];
    for (const index of this.indexes.values()) this.unbuilt.push(index.spec);
    this.indexes.clear();
  }

  /** Builds what `buildAfterReplay` set aside; start-up calls it once every line is read. */
  finishReplay(): void {
    this.fileBlocks();
    for (const spec of this.unbuilt.splice(0)) this.build(spec);
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
      for (const doc of this.all()) held.set(doc._id, pick(doc));
    }
    this.unloaded = new Set(held.keys());
    this.rowOf.clear();
    this.rows.length = 0;
    this.encodedRows = 0;
    this.free.length = 0;
    this.indexes.clear();
    this.deferred.clear();
    this.unbuilt.length = 0;
    this.toFile = [];
    this.order = undefined;
    return held;
  }

  /** For a bulk load: whether the table held a document under `id`, which the load now writes again or removes. */
  forget(id: string): boolean {
    return this.unloaded?.delete(id) ?? false;
  }

  /** Adds a document whose `_id` must be new; throws DuplicateKeyError having changed nothing. */
  insert(doc: Doc): void {
    if (this.whole().rowOf.has(doc._id)) throw new DuplicateKeyError(this.name, ID_INDEX, { _id: doc._id });
    this.put(doc);
  }

  /** Stores `doc` in place of the document with its `_id`; throws DuplicateKeyError having changed nothing. */
  put(doc: Doc): Held | undefined {
    this.whole();
    for (const index of this.indexes.values()) {
      if (index.conflict(doc, this.rowOf.get(doc._id))) {
        const keyValue = Object.fromEntries(index.spec.fields.map((field) => [field, valueAt(doc, field)]));
        throw new DuplicateKeyError(this.name, index.spec.name, keyValue);
      }
    }
    return this.restore(doc._id, doc);
  }

  remove(id: string): Held | undefined {
    return this.whole().restore(id, undefined);
  }

  /**
   * Sets the document stored under `id` without checking constraints: for replay and rollback,
   * whose target states were valid when first reached.
   */
  restore(id: string, doc: Held | undefined): Held | undefined {
    let row = this.rowOf.get(id);
    const previous = row === undefined ? undefined : this.rows[row];
    // Start-up files blocks' documents in the indexes from their keys (see `replayBlock`), so an
    // encoded document is parsed here only when an ordinary write replaces or removes it.
    const indexed = this.indexes.size > 0;
    // A row of a block not filed yet is taken out of the indexes below, so they must hold it first.
    if (this.toFile.length > 0) this.fileBlocks();
    if (previous && indexed) {
      const old = materialize(previous);
      for (const index of this.indexes.values()) index.remove(old, row!);
    }
    if (previous instanceof EncodedDoc) this.encodedRows--;
    if (doc instanceof EncodedDoc) this.encodedRows++;
    if (doc) {
      if (!(doc instanceof EncodedDoc)) claim(doc);
      row = this.place(id, doc, row);
      if (indexed) {
        const added = materialize(doc);
        for (const index of this.indexes.values()) index.add(added, row);
      }
    } else if (row !== undefined) {
      this.rowOf.delete(id);
      this.rows[row] = undefined;
      this.free.push(row);
      this.order?.change(id);
    }
    return previous;
  }

  /** Puts `doc` in its row (`row`, or a new one for a new id), touching no index. */
  private place(id: string, doc: Held, row = this.rowOf.get(id)): number {
    if (row === undefined) {
      row = this.free.pop() ?? this.rows.length;
      this.rowOf.set(id, row);
      this.order?.add(id);
    }
    this.rows[row] = doc;
    return row;
  }

  /**
   * Declares an index; a no-op when an identical one exists. A unique index is built at once (it
   * constrains writes); with `defer`, any other waits until a query first filters on its field.
   */
  createIndex(spec: IndexSpec, defer = false): string {
    if (spec.fields.length === 1 && spec.fields[0] === '_id') return ID_INDEX;
    if (!(defer && !spec.unique)) this.whole();
    const existing = this.indexes.get(spec.name)?.spec ?? this.deferred.get(spec.name) ?? this.unbuilt.find((other) => other.name === spec.name);
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

  /** The fields its indexes (built or deferred) file documents by: what a block line keeps beside its documents. */
  indexedFields(): string[] {
    return [...new Set(this.specs().flatMap((spec) => spec.fields))];
  }

  private specs(): IndexSpec[] {
    return [...[...this.indexes.values()].map((index) => index.spec), ...this.deferred.values(), ...this.unbuilt];
  }

  private build(spec: IndexSpec): void {
    const index = new Index(spec);
    // The keys of an encoded document come from its block, a block's keys parsed once for the run of rows it holds.
    let block: Block | undefined;
    let filer: KeyFiler = () => {};
    for (const row of this.rowOf.values()) {
      const held = this.rows[row]!;
      if (!spec.unique && held instanceof EncodedDoc && held.block.hasKeys(spec.fields)) {
        if (held.block !== block) filer = keyFiler(index, (block = held.block));
        filer(held.at, row);
        continue;
      }
      const doc = materialize(held);
      if (index.conflict(doc, row)) {
        const keyValue = Object.fromEntries(spec.fields.map((field) => [field, valueAt(doc, field)]));
        throw new DuplicateKeyError(this.name, spec.name, keyValue);
      }
      index.add(doc, row);
    }
    this.indexes.set(spec.name, index);
  }

  /** How to find the documents that may match `filter` (see planner.ts). */
  plan(filter: Record<string, unknown>): Plan {
    return planQuery(filter, this.whole().stored);
  }

  /** The indexes, once the deferred ones led by a field the query filters on are built (see `createIndex`). */
  private indexesFor(conditions: ReadonlyMap<string, unknown[]>): IterableIterator<Index> {
    for (const spec of this.deferred.values()) {
      if (conditions.has(spec.fields[0]!)) {
        this.deferred.delete(spec.name);
        this.build(spec);
      }
    }
    return this.indexes.values();
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
