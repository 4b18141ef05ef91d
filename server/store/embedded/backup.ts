/**
 * `npx prospecta backup --out FILE` and `restore --from FILE`.
 *
 * A backup is a SQLite database written by SQLite's online backup while the store serves (a
 * consistent copy: the backup starts again if another process writes meanwhile), with its SHA-256
 * beside it in `FILE.sha256` (as `sha256sum` writes it). Nothing is followed or overwritten: the
 * copy is made in `FILE.tmp`, created exclusively, then linked to FILE, which fails if FILE exists.
 *
 * A restore takes the server's lock (so a running server makes it refuse), checks the file whole
 * before touching anything (its checksum, then SQLite's integrity check), and puts it in place of
 * the store in one rename, after folding the old store's WAL into it, so no stale WAL can be
 * replayed over the restored file.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { chmod, copyFile, link, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { holdServerLock } from './lock.ts';

export interface BackupResult {
  path: string;
  collections: number;
  documents: number;
  bytes: number;
}

export class BadBackupError extends Error {
  readonly code = 'BAD_BACKUP';
}

/** SQLite's error for a file that is not a database, or is damaged. */
export function isDamagedDatabaseError(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? '');
  return code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT');
}

async function sha256Of(file: string): Promise<string> {
  const digest = createHash('sha256');
  for await (const chunk of createReadStream(file)) digest.update(chunk as Buffer);
  return digest.digest('hex');
}

/** Collections and documents in a database file. */
function countsOf(db: Database.Database): { collections: number; documents: number } {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'c:%'").pluck().all() as string[];
  let documents = 0;
  for (const table of tables) documents += db.prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`).pluck().get() as number;
  return { collections: tables.length, documents };
}

export async function backupTo(db: Database.Database, path: string): Promise<BackupResult> {
  const temp = `${path}.tmp`;
  // Exclusive creation refuses a file or a symlink already there (O_EXCL does not follow it).
  await (await open(temp, 'wx', 0o600)).close();
  try {
    await db.backup(temp);
    await chmod(temp, 0o600);
    const checked = new Database(temp, { readonly: true });
    let counts: { collections: number; documents: number };
    try {
      counts = countsOf(checked);
    } finally {
      checked.close();
    }
    const digest = await sha256Of(temp);
    await writeFile(`${path}.sha256`, `${digest}  ${basename(path)}\n`, { flag: 'wx', mode: 0o600 });
    try {
      await link(temp, path);
    } catch (err) {
      await unlink(`${path}.sha256`).catch(() => undefined);
      throw err;
    }
    return { path, ...counts, bytes: (await stat(path)).size };
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Checks a backup whole (checksum, then SQLite's integrity check); throws BadBackupError naming what is wrong. */
export async function checkBackup(file: string): Promise<{ collections: number; documents: number }> {
  const unusable = (why: string) => new BadBackupError(`${file} is not a usable backup: ${why}. Nothing was changed.`);
  let expected: string;
  try {
    expected = (await readFile(`${file}.sha256`, 'utf8')).split(/\s/)[0]!;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (!existsSync(file)) throw new BadBackupError(`${file} does not exist. Nothing was changed.`);
    throw unusable(`its checksum file ${file}.sha256 is missing (not made by prospecta backup, or moved without it)`);
  }
  if ((await sha256Of(file)) !== expected) throw unusable('its contents do not match its checksum (truncated, edited or damaged since it was written)');
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const problems = db.pragma('integrity_check', { simple: true });
    if (problems !== 'ok') throw unusable(`SQLite finds it damaged (${String(problems)})`);
    return countsOf(db);
  } catch (err) {
    if (err instanceof BadBackupError) throw err;
    throw unusable(`SQLite cannot read it (${(err as Error).message})`);
  } finally {
    db?.close();
  }
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function restoreBackup(dir: string, file: string, databaseFile: string): Promise<{ restoredFrom: string; dataDir: string; collections: number; documents: number }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const lock = holdServerLock(dir);
  try {
    const checked = await checkBackup(file);
    const target = join(dir, databaseFile);
    const temp = `${target}.restoring`;
    await unlink(temp).catch(() => undefined);
    try {
      await copyFile(file, temp);
      await chmod(temp, 0o600);
      await syncPath(temp);
      // Folds the old store's WAL into it and removes it (the last connection to close does). A
      // store SQLite cannot read, which start-up sends the operator here to replace, has nothing
      // to fold: its WAL goes with it.
      const old = new Database(target, { timeout: 10_000 });
      try {
        old.pragma('wal_checkpoint(TRUNCATE)');
      } catch (err) {
        if (!isDamagedDatabaseError(err)) throw err;
      } finally {
        old.close();
      }
      for (const suffix of ['-wal', '-shm']) await unlink(target + suffix).catch(() => undefined);
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await syncPath(dirname(target));
    return { restoredFrom: file, dataDir: dir, ...checked };
  } finally {
    lock.release();
  }
}
