/**
 * Documents in SQLite: reading the candidates of a filter (keys.ts) and writing a document with
 * its keys, for the collections (collection.ts) and the bulk loader. Every write here runs inside
 * the caller's transaction (`transaction`), so a document and its keys change together.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { storeWritten } from '../../lib/metrics.ts';
import type { BaseDoc, Document } from '../port.ts';
import { decode, encode, type Doc } from './codec.ts';
import { conditionsOf, keysAt, type Condition, type KeyTable, type SqlValue } from './keys.ts';
import { DuplicateKeyError, jsonPath, Schema, type IndexSpec, type Layout } from './schema.ts';
import { sameSortValue, sortRange, sortValueAt, UNORDERED, type OrderTable } from './order-tables.ts';

/** The disk (or the volume's quota) is full: writes are refused, reads go on (HTTP 507). */
export class StoreFullError extends Error {
  readonly code = 'STORE_FULL';
}

/** How many keys are counted at most when choosing which condition leads a query. */
const ESTIMATE_CAP = 10_000;
/** Statements kept prepared; past this the cache starts again (queries with long `$in` lists vary). */
const STATEMENTS_KEPT = 512;
/** Documents read at a time to fill a new key table. */
const FILL_PAGE = 1000;

export class Tables {
  readonly schema: Schema;
  private readonly statements = new Map<string, Statement>();
  /** Made once: better-sqlite3 builds a transaction's wrappers at each `db.transaction()`, a tenth of a small write. */
  private readonly write: Transaction<(change: () => unknown) => unknown>;
  /** The same, called inside `write`'s transaction: a savepoint. */
  private readonly savepoint: Transaction<(change: () => unknown) => unknown>;

  constructor(
    readonly db: Database,
    private readonly where: string,
    private readonly assertWritable: () => void,
  ) {
    this.schema = new Schema(db);
    this.write = db.transaction((change) => {
      this.schema.refresh();
      return change();
    });
    this.savepoint = db.transaction((change) => change());
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENTS_KEPT) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `change` in one immediate write transaction, with the layout as it is now. */
  transaction<R>(collection: string, change: () => R): R {
    this.assertWritable();
    const started = performance.now();
    try {
      return this.write.immediate(change) as R;
    } catch (err) {
      throw this.translate(err, collection);
    } finally {
      storeWritten((performance.now() - started) / 1000);
    }
  }

  /** Runs `change` inside the current transaction as a savepoint: a throw undoes it alone. */
  nested<R>(change: () => R): R {
    return this.savepoint(change) as R;
  }

  /** SQLite's errors as the port's: a broken unique index is MongoDB's 11000, a full disk STORE_FULL. */
  private translate(err: unknown, collection: string): unknown {
    const code = (err as { code?: unknown }).code;
    if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return new DuplicateKeyError(`E11000 duplicate key error collection: ${collection} index: _id_`);
    if (code === 'SQLITE_CONSTRAINT_UNIQUE') {
      const index = /index '(?:u:[^:]*:)?([^']*)'/.exec((err as Error).message)?.[1] ?? 'unique';
      return new DuplicateKeyError(`E11000 duplicate key error collection: ${collection} index: ${index}`);
    }
    if (code === 'SQLITE_FULL') {
      return new StoreFullError(`The disk holding ${this.where} is full: writes are refused until space is freed; reads go on.`);
    }
    return err;
  }

  private run(collection: string, sql: string, ...params: unknown[]): void {
    try {
      this.statement(sql).run(...params);
    } catch (err) {
      throw this.translate(err, collection);
    }
  }

  layout(collection: string): Layout {
    return this.schema.layout(collection);
  }

  /** For reads: a collection never written has no table, and no documents. */
  private static readonly EMPTY: Layout = { table: '(SELECT NULL AS _id, NULL AS doc WHERE 0)', indexes: [], keyTables: new Map(), orderTables: [] };

  private readable(collection: string): Layout {
    return this.schema.find(collection) ?? Tables.EMPTY;
  }

  /**
   * The stored documents that may match `filter` (every one that does), in `_id` order when
   * `order` is given. The caller tests each; leaving the generator early ends the query.
   */
  *candidates(collection: string, filter: Document, order?: 1 | -1): Generator<Doc> {
    const layout = this.readable(collection);
    if (typeof filter._id === 'string') {
      // One document at most, by its key (most reads and writes: an account, a job, a key): the
      // general query below would build its text and walk an iterator for it.
      const text = this.textById(collection, filter._id);
      if (text !== undefined) yield decode(text) as Doc;
      return;
    }
    const where: string[] = [];
    const params: SqlValue[] = [];
    const keyed: Array<{ condition: Condition; table: string }> = [];
    for (const condition of conditionsOf(filter)) {
      if (condition.path === '_id') {
        where.push(condition.sql.replaceAll('{col}', '_id'));
        params.push(...condition.params);
      } else {
        const keyTable = layout.keyTables.get(condition.path);
        if (keyTable) keyed.push({ condition, table: keyTable.table });
        else if (condition.plain && !condition.path.includes('.')) {
          // No index: SQLite still tests a top-level field in the document's text, far faster than
          // parsing it here. An array there is left to the filter (it matches by its elements).
          const path = `'${jsonPath(condition.path).replaceAll("'", "''")}'`;
          where.push(`(${condition.sql.replaceAll('{col}', `json_extract(doc, ${path})`)} OR json_type(doc, ${path}) = 'array')`);
          params.push(...condition.params);
        }
      }
    }
    // Equalities on every field of a unique index find at most one document through its SQLite
    // index (the expression must be written as the index's own; see Schema#createIndex).
    const conditions = conditionsOf(filter);
    for (const index of layout.indexes) {
      if (!index.unique) continue;
      const values = index.fields.map((field) => conditions.find((c) => c.path === field && c.plain && c.values === 1)?.params[0]);
      if (values.some((value) => value === undefined)) continue;
      index.fields.forEach((field, i) => {
        where.push(`coalesce(doc -> '${jsonPath(field).replaceAll("'", "''")}', 'null') = ?`);
        params.push(JSON.stringify(values[i]));
      });
      keyed.length = 0;
      break;
    }
    // The condition finding the fewest keys leads; the others are looked up per document.
    if (keyed.length > 1) {
      const sized = keyed.map((k) => ({ ...k, size: this.estimate(k.table, k.condition) }));
      sized.sort((a, b) => a.size - b.size);
      keyed.splice(0, keyed.length, ...sized);
    }
    for (const [i, { condition, table }] of keyed.entries()) {
      const test = condition.sql.replaceAll('{col}', 'k');
      where.push(i === 0 ? `_id IN (SELECT id FROM ${table} WHERE ${test})` : `EXISTS (SELECT 1 FROM ${table} WHERE id = c._id AND ${test})`);
      params.push(...condition.params);
    }
    const sql =
      `SELECT doc FROM ${layout.table} AS c` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      (order ? ` ORDER BY _id ${order === 1 ? 'ASC' : 'DESC'}` : '');
    for (const text of this.statement(sql).pluck().iterate(...params) as IterableIterator<string>) yield decode(text) as Doc;
  }

  /**
   * The documents that may match `filter` (every one that does) through an order table
   * (order-tables.ts), when one can give them: the filter names the first field of an index by
   * one plain value, and sorts by its second alone or has a range on it. In the order `sort`
   * asks, or in `_id` order when it asks none; undefined where no order table serves. The caller
   * tests each and stops at its limit.
   */
  ordered(collection: string, filter: Document, sort: Record<string, 1 | -1> | undefined): Generator<Doc> | undefined {
    const fields = sort === undefined ? [] : Object.entries(sort);
    if (fields.length > 1) return undefined;
    const [by, direction] = fields[0] ?? [];
    const layout = this.readable(collection);
    const conditions = conditionsOf(filter);
    for (const orderTable of layout.orderTables) {
      const [first, second] = orderTable.fields;
      if (by !== undefined && by !== second) continue;
      const range = sortRange(filter[second]);
      if (by === undefined && !range) continue;
      const key = conditions.find((c) => c.path === first && c.plain && c.values === 1)?.params[0];
      if (key === undefined) continue;
      if (this.statement(`SELECT 1 FROM ${orderTable.table} WHERE k = ? AND s >= ?`).pluck().get(key, UNORDERED) !== undefined) return undefined;
      const order = by === undefined ? 'o.id' : `o.s ${direction === 1 ? 'ASC' : 'DESC'}, o.id`;
      const sql = `SELECT c.doc FROM ${orderTable.table} o JOIN ${layout.table} c ON c._id = o.id WHERE o.k = ?${range ? ` AND ${range.sql}` : ''} ORDER BY ${order}`;
      return this.decoded(this.statement(sql).pluck().iterate(key, ...(range?.params ?? [])) as IterableIterator<string>);
    }
    return undefined;
  }

  private *decoded(texts: IterableIterator<string>): Generator<Doc> {
    for (const text of texts) yield decode(text) as Doc;
  }

  private estimate(table: string, condition: Condition): number {
    if (condition.values < 4) return condition.values;
    const sql = `SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${condition.sql.replaceAll('{col}', 'k')} LIMIT ${ESTIMATE_CAP})`;
    return this.statement(sql).pluck().get(...condition.params) as number;
  }

  count(collection: string): number {
    return this.statement(`SELECT count(*) FROM ${this.readable(collection).table}`).pluck().get() as number;
  }

  /** A stored document's text, or undefined. */
  textById(collection: string, id: string): string | undefined {
    return this.statement(`SELECT doc FROM ${this.readable(collection).table} WHERE _id = ?`).pluck().get(id) as string | undefined;
  }

  /** Every stored document's `_id` with the values of `fields` (for a bulk load's `stored`). */
  storedFields(collection: string, fields: readonly string[]): Map<string, Record<string, unknown>> {
    const columns = fields.map((field, i) => `doc -> '${jsonPath(field).replaceAll("'", "''")}' AS f${i}`);
    const sql = `SELECT ${['_id', ...columns].join(', ')} FROM ${this.readable(collection).table}`;
    const stored = new Map<string, Record<string, unknown>>();
    for (const row of this.statement(sql).pluck(false).all() as Array<Record<string, string | null>>) {
      const doc: Record<string, unknown> = {};
      fields.forEach((field, i) => {
        const json = row[`f${i}`];
        if (json !== null && json !== undefined) doc[field] = decode(json);
      });
      stored.set(row._id!, doc);
    }
    return stored;
  }

  insert(collection: string, doc: Doc): void {
    const layout = this.layout(collection);
    this.run(collection, `INSERT INTO ${layout.table} (_id, doc) VALUES (?, ?)`, doc._id, encode(doc));
    this.addKeys(collection, layout, doc);
  }

  replace(collection: string, before: Doc, after: Doc): void {
    const layout = this.layout(collection);
    this.run(collection, `UPDATE ${layout.table} SET doc = ? WHERE _id = ?`, encode(after), after._id);
    for (const keyTable of layout.keyTables.values()) {
      const path = keyTable.path.split('.');
      const old = keysAt(before, path);
      const now = keysAt(after, path);
      if (old.size === now.size && [...now].every((k) => old.has(k))) continue;
      this.run(collection, `DELETE FROM ${keyTable.table} WHERE id = ?`, after._id);
      for (const key of now) this.run(collection, `INSERT OR IGNORE INTO ${keyTable.table} (k, id) VALUES (?, ?)`, key, after._id);
    }
    for (const orderTable of layout.orderTables) {
      const [first, by] = orderTable.fields;
      const old = keysAt(before, first.split('.'));
      const now = keysAt(after, first.split('.'));
      if (old.size === now.size && [...now].every((k) => old.has(k)) && sameSortValue(sortValueAt(before, by), sortValueAt(after, by))) continue;
      this.run(collection, `DELETE FROM ${orderTable.table} WHERE id = ?`, after._id);
      this.addOrder(collection, orderTable, after);
    }
  }

  /** Stores `doc` (its `text` when already encoded) whether or not one with its `_id` is stored. */
  put(collection: string, doc: BaseDoc & Document, text = encode(doc)): void {
    const layout = this.layout(collection);
    this.run(collection, `INSERT INTO ${layout.table} (_id, doc) VALUES (?, ?) ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc`, doc._id, text);
    for (const keyTable of layout.keyTables.values()) this.run(collection, `DELETE FROM ${keyTable.table} WHERE id = ?`, doc._id);
    for (const orderTable of layout.orderTables) this.run(collection, `DELETE FROM ${orderTable.table} WHERE id = ?`, doc._id);
    this.addKeys(collection, layout, doc);
  }

  remove(collection: string, doc: Pick<Doc, '_id'>): void {
    const layout = this.layout(collection);
    this.run(collection, `DELETE FROM ${layout.table} WHERE _id = ?`, doc._id);
    for (const keyTable of layout.keyTables.values()) this.run(collection, `DELETE FROM ${keyTable.table} WHERE id = ?`, doc._id);
    for (const orderTable of layout.orderTables) this.run(collection, `DELETE FROM ${orderTable.table} WHERE id = ?`, doc._id);
  }

  private addKeys(collection: string, layout: Layout, doc: BaseDoc & Document): void {
    for (const keyTable of layout.keyTables.values()) {
      for (const key of keysAt(doc, keyTable.path.split('.'))) {
        this.run(collection, `INSERT OR IGNORE INTO ${keyTable.table} (k, id) VALUES (?, ?)`, key, doc._id);
      }
    }
    for (const orderTable of layout.orderTables) this.addOrder(collection, orderTable, doc);
  }

  /** The document's rows in an order table: one per key of the index's first field. */
  private addOrder(collection: string, orderTable: OrderTable, doc: BaseDoc & Document): void {
    const [first, by] = orderTable.fields;
    const keys = keysAt(doc, first.split('.'));
    if (keys.size === 0) return;
    const value = sortValueAt(doc, by);
    for (const key of keys) this.run(collection, `INSERT INTO ${orderTable.table} (k, s, id) VALUES (?, ?, ?)`, key, value, doc._id);
  }

  /** In a write transaction: creates the index, filing the stored documents in its new key and order tables. */
  createIndex(collection: string, spec: IndexSpec): string {
    return this.schema.createIndex(
      collection,
      spec,
      (keyTable) => {
        const path = keyTable.path.split('.');
        for (const doc of this.stored(collection)) {
          for (const key of keysAt(doc, path)) this.run(collection, `INSERT OR IGNORE INTO ${keyTable.table} (k, id) VALUES (?, ?)`, key, doc._id);
        }
      },
      (orderTable) => {
        for (const doc of this.stored(collection)) this.addOrder(collection, orderTable, doc);
      },
    );
  }

  /** Every stored document, a page at a time. */
  private *stored(collection: string): Generator<Doc> {
    const table = this.layout(collection).table;
    let after = '';
    for (;;) {
      const page = this.statement(`SELECT _id, doc FROM ${table} WHERE _id > ? ORDER BY _id LIMIT ${FILL_PAGE}`).all(after) as Array<{ _id: string; doc: string }>;
      for (const { doc } of page) yield decode(doc) as Doc;
      if (page.length < FILL_PAGE) return;
      after = page.at(-1)!._id;
    }
  }

  /** The documents a TTL index says have expired at `now` (ms): a Date (or an array's earliest) old enough. */
  expired(collection: string, now: number): Doc[] {
    const layout = this.readable(collection);
    const found = new Map<string, Doc>();
    for (const { fields, expireAfterSeconds } of layout.indexes) {
      if (expireAfterSeconds === undefined) continue;
      const cutoff = now - expireAfterSeconds * 1000;
      const keyTable = layout.keyTables.get(fields[0]!)!;
      const ids = this.statement(`SELECT DISTINCT id FROM ${keyTable.table} WHERE k <= ? AND k < ''`).pluck().all(cutoff) as string[];
      for (const id of ids) {
        const text = this.textById(collection, id);
        if (text === undefined) continue;
        const doc = decode(text) as Doc;
        const value = valueAt(doc, fields[0]!);
        const dates = (Array.isArray(value) ? value : [value]).filter((v): v is Date => v instanceof Date);
        if (dates.length > 0 && Math.min(...dates.map((d) => d.getTime())) <= cutoff) found.set(id, doc);
      }
    }
    return [...found.values()];
  }
}

function valueAt(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
