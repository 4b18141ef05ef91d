/**
 * The embedded store: every document in memory, every acknowledged write in an fsynced journal
 * in the data directory, periodically folded into a snapshot. For one process; the data
 * directory is locked while open.
 */
import { join } from 'node:path';
import type { BaseDoc, BulkLoader, Collection, IndexDeclaration, Store } from '../port.ts';
import { TableLoader } from './bulk-load.ts';
import { EmbeddedCollection, type Committer } from './collection.ts';
import { indexSpec, type IndexSpec } from './indexes.ts';
import { jsonOf, memberPrefixes } from './json-members.ts';
import type { JournalEntry } from './mutation.ts';
import { ensurePrivateDir, fileName, narrowFileModes, removeSuperseded } from './data-files.ts';
import { Journal } from './journal.ts';
import { acquireLock, type DirLock } from './lock.ts';
import { recover } from './recovery.ts';
import { SnapshotAborted, writeSnapshot, writeSnapshotFile, type Captured } from './snapshot.ts';
import { DEFAULT_RESERVE_BYTES, SpaceReserve } from './space-reserve.ts';
import { Table } from './table.ts';
import { storeCompacted, watchStore } from '../../metrics.ts';

export interface EmbeddedStoreOptions {
  /**
   * Superseded bytes on disk (earlier versions of documents written again or deleted) that start
   * a compaction. They must also come to half the live data, so a large store is not rewritten
   * after every few writes. A journal of new documents only is never compacted: replaying it
   * costs what loading the same snapshot would.
   */
  compactionThresholdBytes?: number;
  /** How often documents past their TTL index's expiry are removed. */
  ttlSweepIntervalMs?: number;
  /** Receives failures of background work (compaction, TTL sweeps), which has no caller to tell. */
  onBackgroundError?: (err: Error) => void;
  /**
   * Opened by a one-shot command rather than a server: each collection is read from disk when
   * first used, non-unique indexes are built only when a query first needs them (a server builds
   * them at start, so that no request waits while one is built), collections may be bulk loaded
   * (which leaves them unreadable in the process), and nothing is compacted (the server will).
   */
  oneShot?: boolean;
  /** Receives what start-up repaired by itself (a torn last journal line), for the log. */
  onWarning?: (message: string) => void;
  /** Bytes of ballast kept in DATA_DIR for a full disk (see space-reserve.ts); 0: none. */
  reserveBytes?: number;
  /**
   * The indexes the process is about to create: a server's start-up builds them from the blocks
   * it read (see recovery.ts) rather than row by row afterwards. Creating them is still `createIndex`'s.
   */
  indexes?: readonly IndexDeclaration[];
}

const DEFAULTS = {
  compactionThresholdBytes: 64 * 1024 * 1024,
  ttlSweepIntervalMs: 30_000,
  onBackgroundError: (err: Error) => process.emitWarning(err),
  oneShot: false,
  onWarning: (message: string) => process.emitWarning(message),
  reserveBytes: DEFAULT_RESERVE_BYTES,
  indexes: [],
} satisfies Required<EmbeddedStoreOptions>;

class StoreClosedError extends Error {
  readonly code = 'STORE_CLOSED';
}

class EmbeddedStore implements Store, Committer {
  readonly kind = 'embedded';
  private readonly collections = new Map<string, EmbeddedCollection<BaseDoc>>();
  private readonly options: Required<EmbeddedStoreOptions>;
  private readonly ttlTimer: NodeJS.Timeout;
  /**
   * What is on disk: the bytes before the current journal (snapshot, older journals), the
   * documents written in all of it, and how many of those later writes superseded.
   */
  private written: { earlierBytes: number; documents: number; superseded: number };
  /** After a failed compaction, the journal size at which to try again. */
  private retryAt = 0;
  private compaction: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  /** Takes the store out of the metrics' journal gauge. */
  private readonly unwatch: () => void;
  readonly deferIndexes: boolean;
  readonly bulkLoader: (<T extends BaseDoc>(collection: string, fields?: Array<keyof T & string>) => BulkLoader<T>) | undefined;

  get dataDir(): string {
    return this.dir;
  }

  constructor(
    private readonly dir: string,
    private readonly lock: DirLock,
    private readonly tables: Map<string, Table>,
    private journal: Journal,
    private generation: number,
    written: { earlierBytes: number; documents: number; superseded: number },
    options: EmbeddedStoreOptions,
    private readonly reserve: SpaceReserve | undefined,
  ) {
    this.options = { ...DEFAULTS, ...options };
    journal.reserve = reserve;
    this.deferIndexes = this.options.oneShot;
    this.bulkLoader = this.options.oneShot
      ? <T extends BaseDoc>(name: string, fields: Array<keyof T & string> = []) => new TableLoader<T>(this.table(name), this, fields)
      : undefined;
    this.written = { ...written };
    this.ttlTimer = setInterval(() => this.removeExpired(), this.options.ttlSweepIntervalMs);
    this.ttlTimer.unref();
    this.unwatch = watchStore({ journalBytes: () => this.journal.size });
  }

  collection<T extends BaseDoc>(name: string): Collection<T> {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection(this.table(name), this);
      this.collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
  }

  async jsonByIds(collection: string, ids: readonly string[], omit: readonly string[]): Promise<Map<string, Buffer>> {
    const table = this.table(collection);
    const fields = { names: new Set(omit), prefixes: memberPrefixes(omit) };
    const found = new Map<string, Buffer>();
    for (const id of ids) {
      const held = table.heldById(id);
      if (held) found.set(id, jsonOf(held, fields));
    }
    return found;
  }

  table(name: string): Table {
    let table = this.tables.get(name);
    if (!table) this.tables.set(name, (table = new Table(name)));
    return table;
  }

  assertWritable(): void {
    if (this.closing) throw new StoreClosedError('The embedded store is closed');
    this.journal.assertWritable();
  }

  commit(entry: JournalEntry): Promise<void> {
    const durable = this.journal.append(entry.line);
    this.written.documents += entry.documents;
    this.written.superseded += entry.superseded;
    // A one-shot process leaves compaction to the server: its tables are read lazily, and a bulk
    // load's documents are not in memory, so a snapshot taken from memory would miss them.
    if (!this.compaction && !this.options.oneShot && this.journal.size >= this.retryAt && this.worthCompacting()) {
      this.compaction = this.compact()
        .catch((err: Error) => {
          if (err instanceof SnapshotAborted) return;
          storeCompacted(false);
          this.options.onBackgroundError(err);
        })
        .finally(() => (this.compaction = undefined));
    }
    return durable;
  }

  /** Whether the superseded share of the bytes on disk is large enough to be worth a rewrite. */
  private worthCompacting(): boolean {
    const { earlierBytes, documents, superseded } = this.written;
    const bytes = earlierBytes + this.journal.size;
    const garbage = (bytes * superseded) / Math.max(1, documents);
    return garbage >= this.options.compactionThresholdBytes && garbage >= (bytes - garbage) / 2;
  }

  /**
   * Starts a new journal generation and writes the state at the switch as its snapshot. Every
   * write before the switch is in the old journal and the snapshot; every write after, in the
   * new journal. Until the snapshot is renamed into place the old files still describe the
   * state, and after it they are superseded, so a crash at any point loses nothing.
   */
  private async compact(): Promise<void> {
    const generation = this.generation + 1;
    const next = await Journal.create(join(this.dir, fileName('journal', generation)));
    next.reserve = this.reserve;
    if (this.closing) {
      await next.close();
      return;
    }
    // From here to the capture nothing awaits, so no write falls between the two.
    const previous = this.journal;
    this.journal = next;
    this.generation = generation;
    const previousDone = previous.close();
    next.follow(previousDone);
    const captured: Captured = [...this.tables].map(([name, table]) => [name, table.held()]);
    const before = this.written;
    const capturedDocuments = captured.reduce((n, [, docs]) => n + docs.length, 0);
    // The new journal holds only writes after the capture, so they are counted from here.
    this.written = { earlierBytes: 0, documents: capturedDocuments, superseded: 0 };
    try {
      await previousDone;
      this.written.earlierBytes = await writeSnapshot(this.dir, generation, captured, () => this.closing !== undefined);
      await removeSuperseded(this.dir, generation);
      storeCompacted(true);
    } catch (err) {
      // The old files still hold the state: their garbage is still there, and so are the new writes.
      const since = this.written;
      this.written = {
        earlierBytes: before.earlierBytes + previous.size,
        documents: before.documents + since.documents - capturedDocuments,
        superseded: before.superseded + since.superseded,
      };
      // Try again once the journal has grown by another threshold, not at every write.
      this.retryAt = this.journal.size + this.options.compactionThresholdBytes;
      throw err;
    }
  }

  /**
   * A consistent copy of every collection as one snapshot file at `path`, while the store keeps
   * serving: the documents are captured in one synchronous step (they are never mutated, so the
   * capture is references), then written out in slices. Every write it holds is durable first.
   */
  async backup(path: string): Promise<{ path: string; collections: number; documents: number; bytes: number }> {
    if (this.closing) throw new StoreClosedError('The embedded store is closed');
    const captured: Captured = [...this.tables].map(([name, table]) => [name, table.held()]);
    await this.journal.drain();
    const bytes = await writeSnapshotFile(path, captured, () => this.closing !== undefined, { backup: true });
    const documents = captured.reduce((n, [, docs]) => n + docs.length, 0);
    return { path, collections: captured.length, documents, bytes };
  }

  private removeExpired(): void {
    if (this.closing) return;
    const now = new Date();
    for (const collection of this.collections.values()) {
      collection.removeExpired(now).catch((err: Error) => this.options.onBackgroundError(err));
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.ttlTimer);
      this.unwatch();
      try {
        await this.compaction;
        await this.journal.close();
      } finally {
        await this.lock.release();
      }
    })();
    return this.closing;
  }
}

/** The ballast for a full disk; a store that opens on a full disk starts full (reads only). */
async function spaceReserve(dir: string, options: EmbeddedStoreOptions): Promise<SpaceReserve | undefined> {
  const bytes = options.reserveBytes ?? DEFAULTS.reserveBytes;
  if (bytes <= 0) return undefined;
  const warn = options.onWarning ?? DEFAULTS.onWarning;
  const reserve = new SpaceReserve(dir, bytes, (full) =>
    warn(full ? `The disk holding ${dir} is full: writes are refused (507) until space is freed; reads go on.` : `Space has returned in ${dir}: writes are accepted again.`),
  );
  if (!(await reserve.fill())) await reserve.release();
  return reserve;
}

export async function openEmbeddedStore(dir: string, options: EmbeddedStoreOptions = {}): Promise<Store> {
  await ensurePrivateDir(dir);
  const lock = await acquireLock(dir);
  try {
    await narrowFileModes(dir);
    const indexes = new Map<string, IndexSpec[]>();
    for (const { collection, keys, options: indexOptions } of options.indexes ?? []) {
      indexes.set(collection, [...(indexes.get(collection) ?? []), indexSpec(keys, indexOptions ?? {})]);
    }
    const { tables, generation, journalBytes, written } = await recover(dir, {
      lazy: options.oneShot ?? false,
      onWarning: options.onWarning ?? DEFAULTS.onWarning,
      indexes,
    });
    const path = join(dir, fileName('journal', generation));
    const journal = journalBytes === undefined ? await Journal.create(path) : await Journal.resume(path, journalBytes);
    const reserve = await spaceReserve(dir, options);
    return new EmbeddedStore(dir, lock, tables, journal, generation, written, options, reserve);
  } catch (err) {
    await lock.release();
    throw err;
  }
}
