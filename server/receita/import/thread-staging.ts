/**
 * The join and the staging of an import's establishments into a release file, as a worker thread
 * does them (document-worker.ts), so that the importer's own thread is left only reading the
 * files: at 1M and 10M that thread was the import's bottleneck, busy all along with the joins'
 * reads and the staged rows' inserts while the threads building documents waited for it.
 *
 * Each batch is joined with what its companies' files said (the staging file's gathered roots,
 * the release file's tax regimes), read through connections of the thread's own, and its rows are
 * appended to a rows file of the thread's own: a SQLite file has one writer at a time. The end of
 * the import reads every rows file with the writer's own (schema.ts's `stagedView`).
 */
import Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { insertStagedRow, stagedRowsSchema, type StagedRow } from '../../companies/registry/schema.ts';
import { regimeKeysOf, REGIMES_OF } from '../../companies/registry/regime-keys.ts';
import { rootsOf, ROOTS_OF } from './staging.ts';
import type { RootData } from './records.ts';

/**
 * Each read connection's page cache: the roots' inner pages at 60M establishments (about 67M
 * roots of 8-letter keys) take about 60 MiB; beyond them, leaves are read from the OS's cache.
 */
const PROBE_CACHE_KIB = 64 * 1024;

/** Where worker thread `thread` stages the rows of the release file at `path`. */
export const rowsPath = (path: string, thread: number) => path.replace(/\.sqlite$/, `.rows-${thread}.sqlite`);

/** The rows files of the release file at `path` (of this run's threads, and of an earlier run's, which may have had more). */
export function rowsFiles(path: string): string[] {
  const prefix = basename(path).replace(/\.sqlite$/, '.rows-');
  return readdirSync(dirname(path))
    .filter((name) => name.startsWith(prefix) && /^\d+\.sqlite$/.test(name.slice(prefix.length)))
    .sort()
    .map((name) => join(dirname(path), name));
}

export class ThreadStaging {
  private readonly db: Database.Database;
  private readonly roots: Database.Statement;
  private readonly regimes: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly write: (rows: StagedRow[]) => void;

  /** `path`: the release file; `stagePath`: its staging file, whose roots are gathered; `rows`: this thread's rows file. */
  constructor(path: string, stagePath: string, rows: string) {
    const db = (this.db = new Database(rows));
    // This thread is the rows file's only user until the end reads it: its lock taken once.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = TRUNCATE');
    db.pragma('synchronous = OFF');
    db.exec(stagedRowsSchema('main'));
    // Read only, by this thread and the other threads beside it, the writer's thread having let go of its locks.
    db.prepare('ATTACH DATABASE ? AS stage').run(stagePath);
    db.prepare('ATTACH DATABASE ? AS release_file').run(path);
    // Each batch's probes land anywhere in tables of gigabytes at 10M: the B-trees' inner pages stay cached, a probe reads one leaf.
    for (const schema of ['stage', 'release_file']) db.pragma(`${schema}.cache_size = -${PROBE_CACHE_KIB}`);
    this.roots = db.prepare(ROOTS_OF('stage'));
    this.regimes = db.prepare(REGIMES_OF('release_file')).safeIntegers();
    this.insert = db.prepare(insertStagedRow('main'));
    this.write = db.transaction((rows: StagedRow[]) => {
      for (const row of rows) this.insert.run(row);
    });
  }

  /** What the establishments of these CNPJs join: their companies' staged data by root, and their tax regimes' search keys. */
  join(cnpjs: string[]): { roots: Map<string, RootData>; taxRegimes: Map<string, string[]> } {
    return { roots: rootsOf(this.roots, [...new Set(cnpjs.map((cnpj) => cnpj.slice(0, 8)))]), taxRegimes: regimeKeysOf(this.regimes, cnpjs) };
  }

  /** Appends a batch's rows, in one transaction: durable (against a kill) once this returns. */
  put(rows: StagedRow[]): void {
    this.write(rows);
  }

  close(): void {
    this.db.close();
  }
}
