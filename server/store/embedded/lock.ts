/**
 * One server per data directory. The lock is SQLite's own: the server holds an exclusive lock on
 * `DATA_DIR/server.lock`, a small SQLite database, for as long as it runs (`locking_mode =
 * EXCLUSIVE` keeps the lock a write takes). The operating system drops the lock when the process
 * ends, however it ends, so a server killed a moment ago (even one still a zombie, its parent not
 * having reaped it) never keeps the next one out, as a pid file did. CLI commands do not take it:
 * they share the store with the server through SQLite's own locking.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';

export class StoreLockedError extends Error {
  readonly code = 'STORE_LOCKED';

  constructor(dir: string) {
    super(`The embedded store in ${dir} is in use by another server process (is the server running?). Stop it first, or set MONGODB_URI to share a MongoDB database between servers.`);
  }
}

export interface ServerLock {
  release(): void;
}

/**
 * How long to wait for the lock: a process killed a moment ago may still be tearing down its
 * threads (its leader already a zombie) and drops the lock only when the last one has gone.
 */
const LOCK_WAIT_MS = 2000;

export function holdServerLock(dir: string): ServerLock {
  const db = new Database(join(dir, 'server.lock'), { timeout: LOCK_WAIT_MS });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER, since TEXT)');
    db.prepare('DELETE FROM holder').run();
    db.prepare('INSERT INTO holder VALUES (?, ?)').run(process.pid, new Date().toISOString());
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') throw new StoreLockedError(dir);
    throw err;
  }
  return { release: () => db.close() };
}
