/**
 * A full disk, survived. The store keeps a ballast file (`space-reserve`, a few MiB of zeros) in
 * DATA_DIR. When a journal write fails with ENOSPC, the journal cuts the partial write off,
 * deletes the ballast and writes the same lines again: that write, whose changes are already in
 * memory, becomes durable and is acknowledged honestly. The store is then *full*: every later
 * write is refused before it changes anything (`StoreFullError`, answered 507
 * `insufficient_storage`) while reads go on. At most once a second a refused write tries to
 * write the ballast again; once it fits, space has returned and writes are accepted again.
 */
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE, syncDir } from './data-files.ts';

export const RESERVE_FILE = 'space-reserve';
export const DEFAULT_RESERVE_BYTES = 4 * 1024 * 1024;
const RETRY_MS = 1000;

export class StoreFullError extends Error {
  readonly code = 'STORE_FULL';
}

export const isNoSpace = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code === 'ENOSPC';

export class SpaceReserve {
  private full = false;
  private lastTry = 0;
  private trying: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly bytes: number,
    private readonly onChange: (full: boolean) => void = () => undefined,
  ) {}

  get path(): string {
    return join(this.dir, RESERVE_FILE);
  }

  /** Writes the ballast if it is missing or short; false when the disk has no room for it. */
  async fill(): Promise<boolean> {
    let handle;
    try {
      handle = await open(this.path, 'a+', FILE_MODE);
      const have = (await handle.stat()).size;
      if (have < this.bytes) await handle.writeFile(Buffer.alloc(this.bytes - have));
      await handle.sync();
      return true;
    } catch (err) {
      if (isNoSpace(err)) return false;
      throw err;
    } finally {
      await handle?.close();
    }
  }

  /** The journal ran out of space: give the ballast back so its pending write can land. */
  async release(): Promise<void> {
    await unlink(this.path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await syncDir(this.dir);
    this.setFull(true);
  }

  /** Throws StoreFullError while the disk is full; now and then starts a check for space. */
  assertRoom(): void {
    if (!this.full) return;
    const now = Date.now();
    if (!this.trying && now - this.lastTry >= RETRY_MS) {
      this.lastTry = now;
      this.trying = this.fill()
        .then((filled) => {
          if (filled) this.setFull(false);
        }, () => undefined)
        .finally(() => (this.trying = undefined));
    }
    throw new StoreFullError(
      'The disk holding the data is full: writes are refused until space is freed (reads still work).',
    );
  }

  private setFull(full: boolean): void {
    if (this.full === full) return;
    this.full = full;
    this.onChange(full);
  }
}
