/**
 * The embedded store: every document in memory, every acknowledged write in an fsynced journal
 * in the data directory, periodically folded into a snapshot. For one process; the data
 * directory is locked while open.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BaseDoc, Collection, Store } from '../port.ts';
import { EmbeddedCollection, type Committer } from './collection.ts';
import { fileName, removeSuperseded } from './files.ts';
import { Journal } from './journal.ts';
import { acquireLock, type DirLock } from './lock.ts';
import { recover } from './recovery.ts';
import { SnapshotAborted, writeSnapshot, type Captured } from './snapshot.ts';
import { Table } from './table.ts';

export interface EmbeddedStoreOptions {
  /**
   * Journal size that starts a compaction. The journal must also have outgrown the last
   * snapshot, so a store larger than the threshold is not rewritten after every few writes.
   */
  compactionThresholdBytes?: number;
  /** How often documents past their TTL index's expiry are removed. */
  ttlSweepIntervalMs?: number;
  /** Receives failures of background work (compaction, TTL sweeps), which has no caller to tell. */
  onBackgroundError?: (err: Error) => void;
}

const DEFAULTS = {
  compactionThresholdBytes: 64 * 1024 * 1024,
  ttlSweepIntervalMs: 30_000,
  onBackgroundError: (err: Error) => process.emitWarning(err),
} satisfies Required<EmbeddedStoreOptions>;

class StoreClosedError extends Error {
  readonly code = 'STORE_CLOSED';
}

class EmbeddedStore implements Store, Committer {
  readonly kind = 'embedded';
  private readonly collections = new Map<string, EmbeddedCollection<BaseDoc>>();
  private readonly options: Required<EmbeddedStoreOptions>;
  private readonly ttlTimer: NodeJS.Timeout;
  /** Journal size at which the next compaction starts. */
  private compactAt: number;
  private compaction: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly lock: DirLock,
    private readonly tables: Map<string, Table>,
    private journal: Journal,
    private generation: number,
    snapshotBytes: number,
    options: EmbeddedStoreOptions,
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.compactAt = Math.max(this.options.compactionThresholdBytes, snapshotBytes);
    this.ttlTimer = setInterval(() => this.removeExpired(), this.options.ttlSweepIntervalMs);
    this.ttlTimer.unref();
  }

  collection<T extends BaseDoc>(name: string): Collection<T> {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection(this.table(name), this);
      this.collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
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

  commit(line: string): Promise<void> {
    const durable = this.journal.append(line);
    if (!this.compaction && this.journal.size >= this.compactAt) {
      this.compaction = this.compact()
        .catch((err: Error) => {
          if (!(err instanceof SnapshotAborted)) this.options.onBackgroundError(err);
        })
        .finally(() => (this.compaction = undefined));
    }
    return durable;
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
    const captured: Captured = [...this.tables].map(([name, table]) => [name, [...table.all()]]);
    try {
      await previousDone;
      const snapshotBytes = await writeSnapshot(this.dir, generation, captured, () => this.closing !== undefined);
      await removeSuperseded(this.dir, generation);
      this.compactAt = Math.max(this.options.compactionThresholdBytes, snapshotBytes);
    } catch (err) {
      // Try again once the journal has grown by another threshold, not at every write.
      this.compactAt = this.journal.size + this.options.compactionThresholdBytes;
      throw err;
    }
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

export async function openEmbeddedStore(dir: string, options: EmbeddedStoreOptions = {}): Promise<Store> {
  await mkdir(dir, { recursive: true });
  const lock = await acquireLock(dir);
  try {
    const { tables, generation, journalBytes, snapshotBytes } = await recover(dir);
    const path = join(dir, fileName('journal', generation));
    const journal = journalBytes === undefined ? await Journal.create(path) : await Journal.resume(path, journalBytes);
    return new EmbeddedStore(dir, lock, tables, journal, generation, snapshotBytes, options);
  } catch (err) {
    await lock.release();
    throw err;
  }
}
