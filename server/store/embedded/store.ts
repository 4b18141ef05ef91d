/**
 * The embedded store: SQLite (better-sqlite3) in DATA_DIR, in WAL mode. SQLite owns durability,
 * locking, crash recovery and the reuse of freed pages; this file opens the database, holds the
 * server's lock, sweeps TTL indexes, and answers the port's store-wide calls.
 *
 * Several processes may hold the store at once (a server and CLI commands): each write is a
 * SQLite transaction, so they serialize on SQLite's write lock. Only one *server* may run on a
 * data directory (lock.ts).
 */
import { chmod, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Checkpointer } from './checkpointer.ts';
import type { OptionalUnlessRequiredId } from 'mongodb';
import { STORE_CLOSED, type AtomicWrites, type BaseDoc, type BulkLoader, type Collection, type Filter, type IndexDeclaration, type Store, type UpdateFilter } from '../port.ts';
import { DatabaseLoader } from './bulk-load.ts';
import { backupTo, isDamagedDatabaseError, type BackupResult } from './backup.ts';
import { EmbeddedCollection, written } from './collection.ts';
import type { Doc } from './codec.ts';
import { jsonOf, memberPrefixes } from './json-members.ts';
import { holdServerLock, type ServerLock } from './lock.ts';
import { convertJournalStore } from './migrate.ts';
import { Tables } from './tables.ts';
import { watchStore } from '../../lib/metrics.ts';

/** The database file in DATA_DIR (with its `-wal` and `-shm` beside it while open). */
export const DATABASE_FILE = 'store.db';

export interface EmbeddedStoreOptions {
  /** How often documents past their TTL index's expiry are removed. */
  ttlSweepIntervalMs?: number;
  /** Receives failures of background work (TTL sweeps), which has no caller to tell. */
  onBackgroundError?: (err: Error) => void;
  /**
   * Opened by a one-shot command rather than a server: it does not take the server's lock (it
   * runs beside a server), and it may bulk load a collection.
   */
  oneShot?: boolean;
  /** Receives what start-up did by itself (a journal store converted), for the log. */
  onWarning?: (message: string) => void;
  /** Kept for the caller's convenience: SQLite needs the declarations only through `createIndex`. */
  indexes?: readonly IndexDeclaration[];
  /**
   * SQLite's `synchronous`: NORMAL (the default) makes a commit durable against a process
   * killed at any point, FULL also against a power cut (an fsync per commit). See operations.md.
   */
  synchronous?: 'NORMAL' | 'FULL';
}

const DEFAULTS = {
  ttlSweepIntervalMs: 30_000,
  onBackgroundError: (err: Error) => process.emitWarning(err),
  oneShot: false,
  onWarning: (message: string) => process.emitWarning(message),
  indexes: [],
  synchronous: 'NORMAL',
} satisfies Required<EmbeddedStoreOptions>;

class StoreClosedError extends Error {
  readonly code = STORE_CLOSED;
}

/** The database file is not SQLite, or is damaged: start-up stops, naming it. */
export class StoreCorruptError extends Error {
  readonly code = 'STORE_CORRUPT';
}

class EmbeddedStore implements Store {
  readonly kind = 'embedded';
  private readonly collections = new Map<string, EmbeddedCollection>();
  private readonly ttlTimer: NodeJS.Timeout;
  private readonly unwatch: () => void;
  /** A server's WAL checkpoints, off its thread (checkpointer.ts); none for a one-shot command. */
  private readonly checkpointer: Checkpointer | undefined;
  private closed = false;
  readonly tables: Tables;
  readonly bulkLoader: (<T extends BaseDoc>(collection: string, fields?: Array<keyof T & string>) => BulkLoader<T>) | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly lock: ServerLock | undefined,
    private readonly options: Required<EmbeddedStoreOptions>,
    /** The store's folder: the registry keeps its release files beside the database (registry/). */
    readonly dataDir: string,
  ) {
    this.tables = new Tables(db, dataDir, () => {
      if (this.closed) throw new StoreClosedError('The embedded store is closed');
    });
    this.bulkLoader = options.oneShot ? <T extends BaseDoc>(name: string, fields: Array<keyof T & string> = []) => new DatabaseLoader<T>(this.tables, name, fields) : undefined;
    this.ttlTimer = setInterval(() => this.removeExpired(), options.ttlSweepIntervalMs);
    this.ttlTimer.unref();
    this.checkpointer = options.oneShot ? undefined : new Checkpointer(db, db.name, options.onBackgroundError);
    this.unwatch = watchStore({ databaseBytes: () => (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number) });
  }

  collection<T extends BaseDoc>(name: string): Collection<T> {
    // One collection object per name whatever the caller's record type, which the store cannot check.
    return this.embedded(name) as unknown as Collection<T>;
  }

  private embedded(name: string): EmbeddedCollection {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection(name, this.tables);
      this.collections.set(name, collection);
    }
    return collection;
  }

  atomically<R>(work: (writes: AtomicWrites) => R): Promise<R> {
    const writes: AtomicWrites = {
      findOneAndUpdate: (name, filter, update, options) => this.embedded(name).findOneAndUpdateNow(filter as Filter<Doc>, update as UpdateFilter<Doc>, options) as never,
      insertOne: (name, doc) => void this.embedded(name).insertNow(doc as unknown as OptionalUnlessRequiredId<Doc>),
    };
    return written(this.tables, '(several, atomically)', () => {
      const result = work(writes);
      // Work that awaits would write after the commit, outside the transaction: refused, undone.
      if (result instanceof Promise) throw new TypeError('atomically() takes synchronous work: its writes would land outside the transaction');
      return result;
    });
  }

  async jsonByIds(collection: string, ids: readonly string[], omit: readonly string[]): Promise<Map<string, Buffer>> {
    const fields = { names: new Set(omit), prefixes: memberPrefixes(omit) };
    const found = new Map<string, Buffer>();
    for (const id of ids) {
      const text = this.tables.textById(collection, id);
      if (text !== undefined) found.set(id, jsonOf(text, fields));
    }
    return found;
  }

  backup(path: string): Promise<BackupResult> {
    if (this.closed) return Promise.reject(new StoreClosedError('The embedded store is closed'));
    return backupTo(this.db, path);
  }

  private removeExpired(): void {
    if (this.closed) return;
    const now = new Date();
    for (const name of this.tables.schema.collections()) {
      this.embedded(name).removeExpired(now).catch((err: Error) => this.options.onBackgroundError(err));
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ttlTimer);
    this.unwatch();
    try {
      await this.checkpointer?.stop();
      this.db.close();
    } finally {
      this.lock?.release();
    }
  }
}

/** Opens (creating it if needed) the database, in WAL mode; a file SQLite cannot read stops here. */
export async function openDatabase(path: string, synchronous: 'NORMAL' | 'FULL'): Promise<Database.Database> {
  // Created 0600 first: SQLite gives its -wal and -shm files the database file's mode.
  await (await open(path, 'a', 0o600)).close();
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { timeout: 10_000 });
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma('cache_size = -32768');
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    return db;
  } catch (err) {
    db?.close();
    if (isDamagedDatabaseError(err)) {
      throw new StoreCorruptError(`${path} is not a SQLite database or is damaged (${(err as Error).message}): restore a backup (npx prospecta restore), or move it away to start empty.`);
    }
    throw err;
  }
}

export async function openEmbeddedStore(dir: string, options: EmbeddedStoreOptions = {}): Promise<Store> {
  const settings = { ...DEFAULTS, ...options };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  // A server holds the lock while it runs; a one-shot command only while it converts a journal store.
  let lock: ServerLock | undefined = settings.oneShot ? undefined : holdServerLock(dir);
  try {
    const converted = await convertJournalStore(dir, () => (lock ??= holdServerLock(dir)));
    if (converted) settings.onWarning(converted.message);
    if (settings.oneShot) {
      lock?.release();
      lock = undefined;
    }
    const db = await openDatabase(join(dir, DATABASE_FILE), settings.synchronous);
    return new EmbeddedStore(db, lock, settings, dir);
  } catch (err) {
    lock?.release();
    throw err;
  }
}
