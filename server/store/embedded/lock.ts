/**
 * One process at a time owns a data directory: two writers appending to the same journal would
 * corrupt it. The lock is a `LOCK` file holding the owner's pid, created exclusively. A lock
 * whose process is gone (a crash, a kill -9) is taken over.
 */
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { FILE_MODE } from './data-files.ts';

export class StoreLockedError extends Error {
  readonly code = 'STORE_LOCKED';

  constructor(
    dir: string,
    readonly pid: number,
  ) {
    super(
      `The embedded store in ${dir} is in use by process ${pid} (is the server running?). ` +
        'Stop it first, or set MONGODB_URI to share a MongoDB database between processes.',
    );
  }
}

export interface DirLock {
  release(): Promise<void>;
}

/** How long an empty lock file may stay empty before it counts as left by a crash. */
const UNREADABLE_RETRIES = 20;
const UNREADABLE_DELAY_MS = 50;

/** Directories this process holds, since its own pid in a lock file is otherwise ambiguous. */
const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

async function readPid(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function tryCreate(path: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', FILE_MODE);
    try {
      await handle.writeFile(`${process.pid}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Moves a dead owner's lock aside. Renaming first (rather than unlinking) lets us check that
 * what we moved is really the stale lock and not one another starting process just created;
 * if it is not, it is put back.
 */
async function removeStale(path: string, stalePid: number | undefined): Promise<void> {
  const aside = `${path}.stale-${process.pid}`;
  try {
    await rename(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if ((await readPid(aside)) !== stalePid) {
    // EEXIST: yet another process has created a lock since, and that one stands.
    await link(aside, path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  await unlink(aside);
}

export async function acquireLock(dir: string): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  const key = resolve(dir);
  for (let unreadable = 0; ; ) {
    if (heldHere.has(key)) throw new StoreLockedError(dir, process.pid);
    if (await tryCreate(path)) break;
    const pid = await readPid(path);
    if (pid === undefined && ++unreadable < UNREADABLE_RETRIES) {
      // Most likely another process has created it and not yet written its pid.
      await setTimeout(UNREADABLE_DELAY_MS);
      continue;
    }
    // Our own pid in a lock we do not hold is left from an earlier life of a container whose
    // process always gets the same pid.
    if (pid !== undefined && pid !== process.pid && isAlive(pid)) throw new StoreLockedError(dir, pid);
    await removeStale(path, pid);
  }
  heldHere.add(key);
  return {
    async release() {
      heldHere.delete(key);
      if ((await readPid(path)) === process.pid) await unlink(path);
    },
  };
}
