/**
 * What a worker thread of an import into a release file stores (document-worker.ts), so that the
 * importer's own thread is left only reading and checking the rows. That thread did the joins'
 * reads and every staged row's insert alone, a serial share the threads building documents
 * waited on: on a busy machine the import took 1.6 times as long at 1M (issue 41).
 *
 * Each thread has a rows file of its own (a SQLite file has one writer at a time): the blocks of
 * the per-company files it reads, gathered by root with the staging file's (staging.ts) once all
 * are read; then the establishments' rows, each batch joined with what its companies' files said
 * (the staging file's gathered roots, the release file's tax regimes) through read connections of
 * its own. The end of the import reads every rows file with the staging file's (schema.ts's
 * `stagedView`).
 */
import Database from 'better-sqlite3';
import { companyStageSchema, insertStagedRow, stagedRowsSchema, type StagedRow } from '../../companies/registry/schema.ts';
import { regimeKeysOf, REGIMES_OF } from '../../companies/registry/regime-keys.ts';
import { stagedPos } from '../../companies/registry/staged-row.ts';
import { INSERT_COMPANY, INSERT_PARTNER, rootsOf, ROOTS_OF } from './staging.ts';
import type { RootData } from './records.ts';
import type { CompanyFileKind, StagedRows } from './staged-rows.ts';

/**
 * Each read connection's page cache: the roots' inner pages at 60M establishments (about 67M
 * roots of 8-letter keys) take about 60 MiB; beyond them, leaves are read from the OS's cache.
 */
const PROBE_CACHE_KIB = 64 * 1024;

export class ThreadStaging {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly insertCompany: Database.Statement;
  private readonly insertPartner: Database.Statement;
  private reads: { roots: Database.Statement; regimes: Database.Statement } | undefined;

  /** `path`: this thread's rows file. */
  constructor(readonly path: string) {
    const db = (this.db = new Database(path));
    // Written by this thread only, and read by others between its transactions (the gathering, the
    // end): locks taken per transaction, a batch's.
    db.pragma('journal_mode = TRUNCATE');
    db.pragma('synchronous = OFF');
    db.exec(stagedRowsSchema('main') + companyStageSchema('main'));
    this.insert = db.prepare(insertStagedRow('main'));
    this.insertCompany = db.prepare(INSERT_COMPANY('main'));
    this.insertPartner = db.prepare(INSERT_PARTNER('main'));
  }

  /** A block of a per-company file, in one transaction: durable (against a kill) once this returns; how many rows it staged. */
  stageCompanies(kind: CompanyFileKind, { roots, texts, lines }: StagedRows, place: number): number {
    this.db.transaction(() => {
      for (let i = 0; i < roots.length; i++) {
        const pos = stagedPos(place, lines[i]!);
        if (kind === 'socios') this.insertPartner.run(roots[i], texts[i], pos);
        else this.insertCompany.run(roots[i], kind === 'empresas' ? texts[i] : null, kind === 'simples' ? texts[i] : null, pos);
      }
    })();
    return roots.length;
  }

  /**
   * What the establishments of these CNPJs join: their companies' staged data by root, and their
   * tax regimes' search keys, read from the release file at `release` and its staging file at
   * `stage` (once gathered, and let go of by the writer's thread).
   */
  join(cnpjs: string[], files: { release: string; stage: string }): { roots: Map<string, RootData>; taxRegimes: Map<string, string[]> } {
    const reads = (this.reads ??= this.attach(files));
    return { roots: rootsOf(reads.roots, [...new Set(cnpjs.map((cnpj) => cnpj.slice(0, 8)))]), taxRegimes: regimeKeysOf(reads.regimes, cnpjs) };
  }

  /** Appends a batch's establishment rows, in one transaction (taken as they come): durable (against a kill) once this returns. */
  put(rows: Iterable<StagedRow>): void {
    this.db.transaction(() => {
      for (const row of rows) this.insert.run(row);
    })();
  }

  close(): void {
    this.db.close();
  }

  private attach({ release, stage }: { release: string; stage: string }) {
    // Read only, by this thread and the other threads beside it.
    this.db.prepare('ATTACH DATABASE ? AS stage').run(stage);
    this.db.prepare('ATTACH DATABASE ? AS release_file').run(release);
    // Each batch's probes land anywhere in tables of gigabytes at 10M: the B-trees' inner pages stay cached, a probe reads one leaf.
    for (const schema of ['stage', 'release_file']) this.db.pragma(`${schema}.cache_size = -${PROBE_CACHE_KIB}`);
    return { roots: this.db.prepare(ROOTS_OF('stage')), regimes: this.db.prepare(REGIMES_OF('release_file')).safeIntegers() };
  }
}
