/**
 * The server's WAL checkpoints, off its thread. By default SQLite checkpoints in whichever
 * connection commits past 1,000 pages of WAL; with `synchronous = NORMAL` that checkpoint is
 * where the fsyncs happen (two, of 7 to 15 ms each, measured on the development machine), so
 * about one charged request in 100 waited 20 to 30 ms for it. A server's connection turns that
 * off. Once its WAL has grown past a threshold (so that a short-lived store, as in most tests,
 * never starts one), a worker thread with a connection of its own runs a passive checkpoint every
 * second: it never blocks a reader or a writer, and moves what it can. Should the worker fail,
 * the server's connection checkpoints itself again, as by default.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** SQLite's own automatic threshold (1,000 pages of 4 KiB), restored should the worker fail. */
const AUTOMATIC_PAGES = 1000;
const START_AT_WAL_BYTES = AUTOMATIC_PAGES * 4096;
const INTERVAL_MS = 1000;

/** The worker: CommonJS, given the driver's path (a worker evaluated from a string resolves nothing of ours). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 10000 });
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export class Checkpointer {
  private worker: Worker | undefined;
  private readonly watch: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly onError: (err: Error) => void,
  ) {
    db.pragma('wal_autocheckpoint = 0');
    this.watch = setInterval(() => this.startWhenGrown(), INTERVAL_MS);
    this.watch.unref();
  }

  private startWhenGrown(): void {
    if (this.worker || this.stopped) return;
    const size = statSync(`${this.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (size < START_AT_WAL_BYTES) return;
    clearInterval(this.watch);
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path: this.path, intervalMs: INTERVAL_MS } });
    worker.unref();
    worker.on('error', (err) => this.fallBack(err));
    worker.on('exit', (code) => {
      if (!this.stopped) this.fallBack(new Error(`the WAL checkpoint thread exited (code ${code})`));
    });
    this.worker = worker;
  }

  /** The server's connection checkpoints itself again. */
  private fallBack(err: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOMATIC_PAGES}`);
    this.onError(err);
  }

  /** Before the store's connection closes (the last to close checkpoints whatever is left). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.watch);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage('stop');
    await exited;
  }
}
