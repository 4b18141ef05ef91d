/**
 * `npx prospecta restore --from FILE`: puts a backup (a snapshot file, see `EmbeddedStore.backup`)
 * in place of the store in DATA_DIR. It takes the store's lock, so a running server (or any other
 * process holding the store) makes it refuse; it reads and checks the whole file before touching
 * anything; then the backup becomes the newest snapshot generation in one rename, after which
 * the files it supersedes are removed. A crash at any point leaves either the old or the restored
 * store, never a mix.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, copyFile, open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ensurePrivateDir, FILE_MODE, fileName, listDataFiles, removeSuperseded, syncDir, TEMP_SUFFIX } from './data-files.ts';
import { acquireLock } from './lock.ts';
import { checkSnapshot, StoreCorruptError } from './recovery.ts';

export class BadBackupError extends Error {
  readonly code = 'BAD_BACKUP';
}

/** How far from the end the trailer line is looked for: it is a count and a digest. */
const TRAILER_BYTES = 4096;

/**
 * The backup's SHA-256 over every byte before its trailer, against the one its trailer holds: an
 * edit anywhere (a balance changed, a line dropped) is refused, not restored.
 */
async function checkDigest(file: string): Promise<void> {
  const handle = await open(file, 'r');
  let trailerStart: number;
  let trailer: { sha256?: unknown };
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, TRAILER_BYTES);
    const tail = Buffer.alloc(length);
    await handle.read(tail, 0, length, size - length);
    const text = tail.toString('utf8');
    if (!text.endsWith('\n')) throw new BadBackupError(`${file} is not a usable backup: it is incomplete (its last line is unfinished). Nothing was changed.`);
    const lineStart = text.lastIndexOf('\n', text.length - 2) + 1;
    trailerStart = size - Buffer.byteLength(text.slice(lineStart));
    try {
      trailer = JSON.parse(text.slice(lineStart)) as { sha256?: unknown };
    } catch {
      trailer = {};
    }
  } finally {
    await handle.close();
  }
  if (typeof trailer.sha256 !== 'string') {
    throw new BadBackupError(`${file} is not a usable backup: it ends without its checksum (incomplete, or not made by prospecta backup). Nothing was changed.`);
  }
  const digest = createHash('sha256');
  if (trailerStart > 0) {
    for await (const chunk of createReadStream(file, { start: 0, end: trailerStart - 1 })) digest.update(chunk as Buffer);
  }
  if (digest.digest('hex') !== trailer.sha256) {
    throw new BadBackupError(`${file} is not a usable backup: its contents do not match its checksum (edited or damaged since it was written). Nothing was changed.`);
  }
}

/** Reads every line of a backup as start-up would, its checksum first; throws BadBackupError naming what is wrong. */
export async function checkBackup(file: string): Promise<{ collections: number; documents: number }> {
  try {
    await checkDigest(file);
    return await checkSnapshot(file);
  } catch (err) {
    if (err instanceof StoreCorruptError) throw new BadBackupError(`${file} is not a usable backup: ${err.problem}. Nothing was changed.`);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BadBackupError(`${file} does not exist. Nothing was changed.`);
    throw err;
  }
}

export async function restoreBackup(dir: string, file: string): Promise<{ restoredFrom: string; dataDir: string; collections: number; documents: number }> {
  await ensurePrivateDir(dir);
  const lock = await acquireLock(dir);
  try {
    const checked = await checkBackup(file);
    const { files } = await listDataFiles(dir);
    const generation = (files.at(-1)?.generation ?? 0) + 1;
    const target = join(dir, fileName('snapshot', generation));
    const temp = target + TEMP_SUFFIX;
    try {
      await copyFile(file, temp);
      await chmod(temp, FILE_MODE);
      const handle = await open(temp, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await syncDir(dirname(target));
    await removeSuperseded(dir, generation);
    return { restoredFrom: file, dataDir: dir, ...checked };
  } finally {
    await lock.release();
  }
}
