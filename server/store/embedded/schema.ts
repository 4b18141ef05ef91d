/**
 * The database's layout. Each collection is a table `c:NAME (_id TEXT PRIMARY KEY, doc TEXT)`,
 * the document as the codec's JSON. Its indexes are listed in `_indexes`; each non-unique one (and
 * the first field of a unique one) has a key table `k:NAME:PATH (k, id)` (see keys.ts), and a
 * unique one is also a UNIQUE expression index over its fields' JSON, which SQLite enforces.
 *
 * Another process may add a collection or an index at any time (the CLI beside the server): every
 * write runs with the layout read again when SQLite's `schema_version` has moved, so no key table
 * is ever left behind by a writer that did not know of it.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { IndexSpecification } from 'mongodb';
import type { IndexOptions } from '../port.ts';
import { DUPLICATE_KEY } from '../port.ts';
import type { KeyTable } from './keys.ts';
import { orderTableName, type OrderTable } from './order-tables.ts';

export interface IndexSpec {
  name: string;
  fields: string[];
  unique: boolean;
  expireAfterSeconds?: number;
}

export interface Layout {
  table: string;
  indexes: IndexSpec[];
  /** Key tables by path. */
  keyTables: Map<string, KeyTable>;
  /** Order tables (order-tables.ts), one per pair of first fields of the indexes that have them. */
  orderTables: OrderTable[];
}

/** A quoted SQL identifier. */
export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A SQLite JSON path for a dotted path, each segment quoted. */
export const jsonPath = (path: string) => '$' + path.split('.').map((segment) => `.${JSON.stringify(segment)}`).join('');

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

export class DuplicateKeyError extends Error {
  readonly code = DUPLICATE_KEY;
}

/** Reads a key specification in any of the driver's forms, as the driver does. */
export function indexSpec(keys: IndexSpecification, options: IndexOptions): IndexSpec {
  const isTuple = (x: unknown): x is [string, unknown] => Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && !Array.isArray(x[1]);
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
    ...(options.expireAfterSeconds !== undefined ? { expireAfterSeconds: options.expireAfterSeconds } : {}),
  };
}

const sameSpec = (a: IndexSpec, b: IndexSpec) =>
  a.fields.join() === b.fields.join() && a.unique === b.unique && a.expireAfterSeconds === b.expireAfterSeconds;

export class Schema {
  private version = -1;
  private layouts = new Map<string, Layout>();
  private schemaVersion: Statement | undefined;

  constructor(private readonly db: Database) {
    db.exec('CREATE TABLE IF NOT EXISTS _indexes (collection TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, PRIMARY KEY (collection, name))');
  }

  /** The collection's layout, if it has a table. */
  find(collection: string): Layout | undefined {
    this.refresh();
    return this.layouts.get(collection);
  }

  /** The collection's layout, creating its table on first use. */
  layout(collection: string): Layout {
    let layout = this.find(collection);
    if (!layout) {
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${ident(`c:${collection}`)} (_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`);
      this.refresh();
      layout = this.layouts.get(collection)!;
    }
    return layout;
  }

  /** Every collection there is. */
  collections(): string[] {
    this.refresh();
    return [...this.layouts.keys()];
  }

  /** Reads the layout again if any process has changed it since. */
  refresh(): void {
    // Prepared once: db.pragma() compiles its statement at every call, and this runs at every read.
    this.schemaVersion ??= this.db.prepare('PRAGMA schema_version').pluck();
    const version = this.schemaVersion.get() as number;
    if (version === this.version) return;
    const layouts = new Map<string, Layout>();
    const tables = this.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND (name LIKE 'c:%' OR name LIKE 'o:%')").pluck().all() as string[];
    for (const table of tables) if (table.startsWith('c:')) layouts.set(table.slice(2), { table: ident(table), indexes: [], keyTables: new Map(), orderTables: [] });
    const orderTables = new Set(tables.filter((table) => table.startsWith('o:')));
    for (const row of this.db.prepare('SELECT collection, spec FROM _indexes ORDER BY rowid').all() as Array<{ collection: string; spec: string }>) {
      const layout = layouts.get(row.collection);
      if (!layout) continue;
      const spec = JSON.parse(row.spec) as IndexSpec;
      layout.indexes.push(spec);
      const path = spec.fields[0]!;
      if (!layout.keyTables.has(path)) layout.keyTables.set(path, { path, table: ident(`k:${row.collection}:${path}`) });
      // An index made before order tables has none until createIndex (run at every start) makes it.
      const order = orderTableName(row.collection, spec.fields);
      if (spec.fields.length > 1 && orderTables.has(order) && !layout.orderTables.some((o) => o.table === ident(order))) {
        layout.orderTables.push({ fields: [spec.fields[0]!, spec.fields[1]!], table: ident(order) });
      }
    }
    this.layouts = layouts;
    this.version = version;
  }

  /**
   * Creates an index (its key table filled from the stored documents by `fill`), or finds the same
   * one there; in the caller's write transaction.
   */
  createIndex(collection: string, spec: IndexSpec, fill: (keyTable: KeyTable) => void, fillOrder: (orderTable: OrderTable) => void): string {
    // The table's own key, as MongoDB names it.
    if (spec.fields.length === 1 && spec.fields[0] === '_id' && !spec.expireAfterSeconds) return '_id_';
    const layout = this.layout(collection);
    const named = layout.indexes.find((index) => index.name === spec.name);
    if (named && named.fields.join() !== spec.fields.join()) {
      throw new IndexConflictError(`An index named ${spec.name} exists on other fields (${named.fields.join(', ')})`, INDEX_KEY_SPECS_CONFLICT);
    }
    const existing = named ?? layout.indexes.find((index) => index.fields.join() === spec.fields.join());
    if (existing) {
      if (existing.name === spec.name && sameSpec(existing, spec)) {
        this.ensureOrderTable(collection, layout, spec, fillOrder);
        return existing.name;
      }
      throw new IndexConflictError(`An index on ${existing.fields.join(', ')} exists with other options (${existing.name})`, INDEX_OPTIONS_CONFLICT);
    }
    const path = spec.fields[0]!;
    const keyTable = layout.keyTables.get(path) ?? { path, table: ident(`k:${collection}:${path}`) };
    if (!layout.keyTables.has(path)) {
      this.db.exec(`CREATE TABLE ${keyTable.table} (k NOT NULL, id TEXT NOT NULL, PRIMARY KEY (k, id)) WITHOUT ROWID`);
      this.db.exec(`CREATE INDEX ${ident(`k:${collection}:${path}:id`)} ON ${keyTable.table} (id)`);
      fill(keyTable);
    }
    if (spec.unique) {
      // Missing and null are one value, as in MongoDB (`->` gives a value's JSON: 'null' for null).
      const columns = spec.fields.map((field) => `coalesce(doc -> '${jsonPath(field).replaceAll("'", "''")}', 'null')`);
      try {
        this.db.exec(`CREATE UNIQUE INDEX ${ident(`u:${collection}:${spec.name}`)} ON ${layout.table} (${columns.join(', ')})`);
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
          throw new DuplicateKeyError(`E11000 duplicate key error collection: ${collection} index: ${spec.name}: stored documents share a key`);
        }
        throw err;
      }
    }
    this.ensureOrderTable(collection, layout, spec, fillOrder);
    this.db.prepare('INSERT INTO _indexes (collection, name, spec) VALUES (?, ?, ?)').run(collection, spec.name, JSON.stringify(spec));
    // Read again at the next use: the layout may have been read between the table and this row.
    this.version = -1;
    return spec.name;
  }

  /** An index of several fields gets its order table, filled from the stored documents, unless it has one. */
  private ensureOrderTable(collection: string, layout: Layout, spec: IndexSpec, fill: (orderTable: OrderTable) => void): void {
    if (spec.fields.length < 2) return;
    const name = orderTableName(collection, spec.fields);
    const present = layout.orderTables.find((o) => o.table === ident(name));
    if (present) {
      // A server of a version before order tables, run on this store since, wrote without filing
      // its documents here: one that inserted or deleted some leaves a table whose rows no longer
      // match the first field's key table's, one each, and it is filled again. (A document it
      // changed in place is not seen: operations.md tells not to go back.)
      const rows = (table: string) => this.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
      if (rows(present.table) === rows(layout.keyTables.get(present.fields[0])!.table)) return;
      this.db.exec(`DELETE FROM ${present.table}`);
      fill(present);
      return;
    }
    const orderTable: OrderTable = { fields: [spec.fields[0]!, spec.fields[1]!], table: ident(name) };
    // Not WITHOUT ROWID: `s` may be NULL (null or missing), which a primary key cannot hold.
    this.db.exec(`CREATE TABLE ${orderTable.table} (k NOT NULL, s, id TEXT NOT NULL)`);
    this.db.exec(`CREATE INDEX ${ident(`${name}:order`)} ON ${orderTable.table} (k, s, id)`);
    this.db.exec(`CREATE INDEX ${ident(`${name}:id`)} ON ${orderTable.table} (id)`);
    fill(orderTable);
    layout.orderTables.push(orderTable);
    this.version = -1;
  }
}
