/**
 * The append-only journal with group commit. A write is acknowledged only once its line is on
 * disk (fdatasync). Lines appended while a sync is in flight wait and go out together in the
 * next write+sync, so concurrent writers share syncs instead of queueing one sync each.
 *
 * A failed write or sync leaves memory ahead of the disk with no way to tell which lines made
 * it, so the journal stops: that write and every later one is refused until a restart replays
 * what is really on disk.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FILE_MODE, syncDir } from './data-files.ts';
import { isNoSpace, type SpaceReserve } from './space-reserve.ts';
import { storeWritten } from '../../metrics.ts';

export class JournalFailedError extends Error {
  readonly code = 'STORE_JOURNAL_FAILED';
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

export class Journal {
  private queue: Uint8Array[] = [];
  private waiters: Waiter[] = [];
  private flushing: Promise<void> | undefined;
  private failure: JournalFailedError | undefined;
  /** Settles when earlier journals are on disk; this one's first sync must not overtake them. */
  private predecessor: Promise<unknown> = Promise.resolve();
  /** Bytes known to be on disk: where a write cut short by a full disk is cut back to. */
  private durable: number;
  /** The ballast given back when the disk fills (see space-reserve.ts); none in some tests. */
  reserve: SpaceReserve | undefined;

  private constructor(
    private readonly handle: FileHandle,
    readonly path: string,
    /** Bytes appended so far, counting lines still queued. */
    public size: number,
  ) {
    this.durable = size;
  }

  /** Continues a journal found at start-up, whose first `size` bytes are complete lines. */
  static async resume(path: string, size: number): Promise<Journal> {
    return new Journal(await open(path, 'a'), path, size);
  }

  /** Starts a new, empty journal file. */
  static async create(path: string): Promise<Journal> {
    const handle = await open(path, 'wx', FILE_MODE);
    try {
      await syncDir(dirname(path));
    } catch (err) {
      await handle.close();
      throw err;
    }
    return new Journal(handle, path, 0);
  }

  follow(predecessor: Promise<unknown>): void {
    this.predecessor = predecessor;
  }

  /** Throws when the journal can no longer accept writes, before a caller changes memory. */
  assertWritable(): void {
    if (this.failure) throw this.failure;
    this.reserve?.assertRoom();
  }

  /** `line`: text, or its UTF-8 bytes (a bulk load's, which never become one large string). */
  append(line: string | Uint8Array): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const bytes = typeof line === 'string' ? Buffer.from(line) : line;
    this.size += bytes.length;
    return new Promise<void>((resolve, reject) => {
      this.queue.push(bytes);
      this.waiters.push({ resolve, reject });
      // Waiting one turn of the event loop lets every write issued in this turn share the sync.
      this.flushing ??= new Promise((next) => setImmediate(next)).then(() => this.flush());
    });
  }

  private async flush(): Promise<void> {
    let batch: Waiter[] = [];
    try {
      await this.predecessor;
      while (this.queue.length > 0) {
        const bytes = this.queue.length === 1 ? this.queue[0]! : Buffer.concat(this.queue);
        batch = this.waiters;
        this.queue = [];
        this.waiters = [];
        await this.write(bytes);
        for (const waiter of batch) waiter.resolve();
        batch = [];
      }
    } catch (err) {
      this.failure = new JournalFailedError(
        `The embedded store could not write its journal ${this.path} (${(err as Error).message}); ` +
          'it accepts no more writes. Restart it once the cause is fixed.',
        { cause: err },
      );
      for (const waiter of [...batch, ...this.waiters]) waiter.reject(this.failure);
      this.queue = [];
      this.waiters = [];
    } finally {
      this.flushing = undefined;
    }
  }

  /**
   * Appends and syncs. On a full disk the partial write is cut off, the reserve given back and
   * the write made again: its changes are in memory already, so it must land or stop the journal.
   */
  private async write(bytes: Uint8Array): Promise<void> {
    const started = performance.now();
    try {
      await this.handle.appendFile(bytes);
      await this.handle.datasync();
    } catch (err) {
      if (!isNoSpace(err) || !this.reserve) throw err;
      await this.handle.truncate(this.durable);
      await this.reserve.release();
      await this.handle.appendFile(bytes);
      await this.handle.datasync();
    }
    storeWritten((performance.now() - started) / 1000);
    this.durable += bytes.length;
  }

  /** Resolves once every appended line is on disk or refused; rejects if any was refused. */
  async drain(): Promise<void> {
    await this.flushing;
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    try {
      await this.drain();
    } finally {
      await this.handle.close();
    }
  }
}
