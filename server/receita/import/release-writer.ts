/**
 * Writes one release file (schema.ts) for an import, beside the release in service, which goes on
 * answering from its own file. Rows are appended as they come, to a staging file or to the worker
 * threads' rows files (thread-staging.ts), each batch one transaction (so a killed import loses at
 * most the batches its checkpoint had not counted, which it writes again at the same place in the
 * release: the copies are one); at the end they move into the release's tables in key
 * order, the full-text and filter indexes are built from sorted data (the search's tables beside,
 * in another thread: search-tables.ts), and only then does the registry switch to the file
 * (registry.ts).
 *
 * Every step of the end is one transaction recorded in `meta`, so a kill during it leaves the step
 * undone (SQLite's rollback journal), and the next run does it again. Durability against power loss
 * is not sought (`synchronous = OFF`): what the import wrote is only served once finished, and a
 * damaged file is named on opening; a kill of the process is what must be survived.
 */
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TaxRegimeDoc } from '../../companies/tax-regimes.ts';
import { companyDocument, type CompanyRecord, type StoredRecord } from '../../companies/company-record.ts';
import { RecordDecoder, RecordEncoder, type CodecTables } from '../../companies/registry/record-codec.ts';
import { FACT_COLUMNS, FACT_INDEXES, insertStagedRow, RELEASE_SCHEMA, stagedRowsSchema, stagedView, type StagedRow } from '../../companies/registry/schema.ts';
import { stagedRow } from '../../companies/registry/staged-row.ts';
import type { ReleaseMeta } from '../../companies/registry/release-file.ts';
import { cnpjKey } from '../../companies/registry/cnpj-key.ts';
import { regimeKeysOf, REGIMES_OF } from '../../companies/registry/regime-keys.ts';
import { ChangeStep } from '../../companies/changes/change-file.ts';
import { CHANGE_HASH, type ChangeCounts } from '../../companies/changes/change-diff.ts';
import { buildSearchTables, copySearchTables, searchPath } from './search-tables.ts';
import { attachRowsFiles, rowsFiles } from './rows-files.ts';

/** The staging file's form, in its `user_version`: raised when a version stages rows that an older one would read otherwise. */
const STAGE_FORMAT = 3;

/** The import's page cache: bounds its memory whatever the release's size (sorting spills to temporary files). */
const CACHE_KIB = 256 * 1024;

export interface FinishOptions {
  meta: Omit<ReleaseMeta, 'establishments' | 'importedAt'>;
  /** The release file in service, if any: what this one keeps from it, and what it replaces. */
  previous: string | null;
  /** Not every file was read whole: establishments of the previous release this import did not write are kept. */
  keepUnwritten: boolean;
  /** This import read no tax-regime file whole: the previous release's tax regimes are kept. */
  keepTaxRegimes: boolean;
  /** The encoding's tables, should no batch have set them. */
  codec: () => CodecTables;
  /** Told the changes recorded so far, by kind, as the comparison with the release in service goes. */
  onChanges?: (counts: ChangeCounts) => void;
  /** Told each step of the end as it begins (a step a killed run finished is not begun again). */
  onStep?: (name: string) => void;
  /**
   * Builds the search tables (search-tables.ts's `buildSearchTables`) in another thread, so that
   * this one builds the rest meanwhile; by default in this one, before the rest.
   */
  buildSearchTables?: (path: string, stagePath: string, rowsPaths: string[]) => Promise<void>;
}

export class ReleaseWriter {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly insertRegime: Database.Statement;
  private readonly regimesOf: Database.Statement;
  private codecTables: CodecTables | undefined;
  private onStep: FinishOptions['onStep'];
  /**
   * The staging file was begun by an older version, whose staged rows this one does not read
   * (the gathered partners' form changed): the import starts again rather than resume from it.
   */
  readonly stagedByOlderVersion: boolean;

  constructor(readonly path: string) {
    this.db = new Database(path);
    this.db.prepare('ATTACH DATABASE ? AS stage').run(stagePath(path));
    for (const schema of ['main', 'stage']) {
      // Only this process uses both files until the switch: locks taken once, not at every
      // statement (each of which would otherwise lock, check and unlock both files: 30 µs a lookup).
      this.db.pragma(`${schema}.locking_mode = EXCLUSIVE`);
      this.db.pragma(`${schema}.journal_mode = TRUNCATE`);
      this.db.pragma(`${schema}.synchronous = OFF`);
      this.db.pragma(`${schema}.cache_size = -${CACHE_KIB}`);
    }
    this.db.exec(RELEASE_SCHEMA);
    const fresh = this.db.prepare('SELECT count(*) FROM stage.sqlite_schema').pluck().get() === 0;
    if (fresh) this.db.pragma(`stage.user_version = ${STAGE_FORMAT}`);
    this.stagedByOlderVersion = !fresh && this.db.pragma('stage.user_version', { simple: true }) !== STAGE_FORMAT;
    this.db.exec(stagedRowsSchema('stage'));
    this.insert = this.db.prepare(insertStagedRow('stage'));
    this.insertRegime = this.db.prepare('INSERT OR REPLACE INTO tax_regime (k, year, scp, form, entries) VALUES (?, ?, ?, ?, ?)');
    this.regimesOf = this.db.prepare(REGIMES_OF('main')).safeIntegers();
  }

  /** The tables of the file's encoding (record-codec.ts), once set: a resumed import reads them back. */
  get codec(): CodecTables | undefined {
    if (!this.codecTables) {
      const saved = this.metaValue('codec');
      if (saved) this.codecTables = JSON.parse(saved) as CodecTables;
    }
    return this.codecTables;
  }

  /** Set once, before the first document is staged: the documents' encoding, and the function that hashes them for the changes. */
  set codec(tables: CodecTables) {
    this.setMeta('codec', JSON.stringify(tables));
    this.setMeta('change hash', CHANGE_HASH);
    this.codecTables = tables;
  }

  /** Whether a previous run of this import finished the file (it was killed after, before recording it). */
  get finished(): ReleaseMeta | null {
    const release = this.metaValue('release');
    return this.metaValue('state') === 'ready' && release ? (JSON.parse(release) as ReleaseMeta) : null;
  }

  /**
   * The staging file's connection, for the per-company staging (receita/import/staging.ts), its
   * transactions, and `beside`: `run` given the staging file (at `path`) for another thread to
   * write, this connection's lock on it let go meanwhile and taken again after.
   */
  get stage(): { db: Database.Database; transaction: (write: () => void) => void; path: string; beside: (run: () => Promise<void>) => Promise<void> } {
    return {
      db: this.db,
      transaction: (write) => this.guarded(write),
      path: stagePath(this.path),
      beside: async (run) => {
        this.shareStage();
        try {
          await run();
        } catch (err) {
          throw this.named(err);
        } finally {
          this.db.pragma('stage.locking_mode = EXCLUSIVE');
        }
      },
    };
  }

  /** The tax regimes' search keys of these CNPJs, from the rows written so far (the regime files are read before the establishments). */
  taxRegimeKeysOf(cnpjs: string[]): Map<string, string[]> {
    return regimeKeysOf(this.regimesOf, cnpjs);
  }

  /** Tax-regime rows whose CNPJ no establishment of the file has. */
  taxRegimesWithoutEstablishment(): number {
    return this.db.prepare('SELECT count(*) FROM tax_regime t WHERE NOT EXISTS (SELECT 1 FROM facts f WHERE f.k = t.k)').pluck().get() as number;
  }

  /** The rows of one batch, in one transaction (taken as they come). */
  put(rows: Iterable<StagedRow>): void {
    this.guarded(() => {
      for (const row of rows) this.insert.run(row);
    });
  }

  putTaxRegimes(docs: Array<Pick<TaxRegimeDoc, 'cnpj' | 'year' | 'scpCnpj' | 'form' | 'bookkeepingEntries'>>): void {
    this.guarded(() => {
      for (const doc of docs) {
        const key = cnpjKey(doc.cnpj);
        if (key !== null) this.insertRegime.run(key, doc.year, doc.scpCnpj ?? '0', doc.form, doc.bookkeepingEntries);
      }
    });
  }

  /**
   * `run` in one transaction. A full disk stops the import with one line saying what it means:
   * the transaction is rolled back, the release in service untouched, and a rerun resumes.
   */
  private guarded(run: () => void): void {
    try {
      this.db.transaction(run)();
    } catch (err) {
      throw this.named(err);
    }
  }

  /** A full disk as the one line that says what it means; any other error as it is (also for the worker threads' writes on this file's behalf). */
  named(err: unknown): unknown {
    if ((err as { code?: string }).code !== 'SQLITE_FULL') return err;
    return new Error(
      `the disk holding ${dirname(this.path)} is full: the import stopped, and the release in service is untouched; free space and run the import again, it resumes`,
    );
  }

  /** The end of the import: the release's tables from the staged rows; what it counts; resumable step by step. */
  async finish(options: FinishOptions): Promise<{ meta: ReleaseMeta; removed: number }> {
    const done = this.finished;
    // An import that wrote no establishment (its files unreadable) has no dictionary: documents it keeps are compressed without.
    this.codec ??= options.codec();
    if (done) {
      this.shareFile();
      return { meta: done, removed: Number(this.metaValue('removed') ?? 0) };
    }
    if (options.previous) this.db.prepare('ATTACH DATABASE ? AS old').run(options.previous);
    this.onStep = options.onStep;
    const rows = this.stagedRows();
    if (options.previous && options.keepUnwritten) this.step('keep unwritten', () => this.keepUnwritten());
    if (options.previous && options.keepTaxRegimes) this.step('keep tax regimes', () => this.db.exec('INSERT OR IGNORE INTO tax_regime SELECT * FROM old.tax_regime'));
    // From here on the staged rows are only read: by this connection and by the search tables' build beside it.
    const search = this.stepDone('search tables') ? null : this.searchTablesBuilt(rows, options.buildSearchTables);
    try {
      const facts = FACT_COLUMNS.join(', ');
      this.step('documents', () => this.db.exec('INSERT OR REPLACE INTO doc (k, body) SELECT k, body FROM staged ORDER BY k, pos'));
      this.step('facts', () => this.db.exec(`INSERT OR REPLACE INTO facts (k, ${facts}) SELECT k, ${facts} FROM staged ORDER BY k, pos`));
      // What changed since the release in service, recorded in the change history (changes/change-file.ts) before the switch.
      const changes = options.previous ? new ChangeStep(this.path, options.meta.release) : null;
      if (changes?.attach(this.db, options.meta.synthetic)) this.step('changes', () => changes.record(this.db, this.codec!, options.onChanges));
      for (const [name, on] of Object.entries(FACT_INDEXES)) this.step(`index ${name}`, () => this.db.exec(`CREATE INDEX IF NOT EXISTS facts_${name} ON facts (${on})`));
    } finally {
      // Not left building when this thread fails: the import's end closes the file under it.
      await search?.catch(() => undefined);
    }
    if (search) {
      options.onStep?.('search tables (built beside)');
      await search;
      this.db.prepare('ATTACH DATABASE ? AS search').run(searchPath(this.path));
      this.step('search tables', () => copySearchTables(this.db, 'search'));
      this.db.exec('DETACH DATABASE search');
    }
    const removed = options.previous
      ? (this.db.prepare('SELECT count(*) FROM old.facts o WHERE NOT EXISTS (SELECT 1 FROM main.facts f WHERE f.k = o.k)').pluck().get() as number)
      : 0;
    const meta: ReleaseMeta = {
      ...options.meta,
      establishments: this.db.prepare('SELECT count(*) FROM facts').pluck().get() as number,
      importedAt: new Date().toISOString(),
    };
    this.db.transaction(() => {
      this.setMeta('removed', String(removed));
      this.setMeta('release', JSON.stringify(meta));
      this.setMeta('state', 'ready');
    })();
    this.shareFile();
    return { meta, removed };
  }

  /** The release file's lock is let go (at the next read), so the server can open it once switched to. */
  private shareFile(): void {
    this.db.pragma('main.locking_mode = NORMAL');
    this.metaValue('state');
  }

  /** Closes the file; once finished, the staging file and the search tables' file go. */
  close(): void {
    const finished = this.db.open && this.finished !== null;
    // The rollback journal, empty between transactions, goes too: the file is only read from now on.
    if (finished) this.db.pragma('journal_mode = DELETE');
    if (this.db.open) this.db.close();
    if (finished) removeStage(this.path);
  }

  /**
   * Establishments of the previous release this import did not write, staged as they were: an
   * import that could not read every file must not drop what it could not read.
   */
  private keepUnwritten(): void {
    const decoder = new RecordDecoder(JSON.parse(this.db.prepare("SELECT value FROM old.meta WHERE name = 'codec'").pluck().get() as string) as CodecTables);
    const encoder = new RecordEncoder(this.codec!);
    const old = this.db
      .prepare('SELECT d.body, f.regimes FROM old.doc d JOIN old.facts f ON f.k = d.k WHERE d.k NOT IN (SELECT k FROM staged)')
      .all() as Array<{ body: Buffer; regimes: string | null }>;
    for (const { body, regimes } of old) {
      const { release, ...record } = JSON.parse(decoder.decode(body)) as CompanyRecord & { release: string };
      const keys = regimes ? regimes.trim().split(' ') : [];
      // Before any row of this release: one it has of the same CNPJ wins (none has: only the CNPJs it lacks are kept).
      this.insert.run(stagedRow(companyDocument(record as StoredRecord, { release, importRun: '' }, keys), encoder, -1));
    }
  }

  /**
   * The search tables' build (search-tables.ts), begun: by `build` in another thread, or here.
   * The staging file's lock is let go first (at the next read), so that the build can read it.
   */
  private async searchTablesBuilt(rows: string[], build?: FinishOptions['buildSearchTables']): Promise<void> {
    this.shareStage();
    try {
      if (build) await build(searchPath(this.path), stagePath(this.path), rows);
      else buildSearchTables(searchPath(this.path), stagePath(this.path), rows);
    } catch (err) {
      throw this.named(err);
    }
  }

  /**
   * The worker threads' rows files (thread-staging.ts), attached beside the staging file's own
   * rows, all read as the temporary view `staged` (schema.ts's `stagedView`); their paths.
   */
  private stagedRows(): string[] {
    this.db.exec(stagedView(['stage', ...this.attachRows()]));
    return rowsFiles(this.path);
  }

  /** The worker threads' rows files there are (thread-staging.ts), attached to this connection (once): their schemas' names. */
  attachRows(): string[] {
    return attachRowsFiles(this.db, rowsFiles(this.path));
  }

  /**
   * Lets the worker threads read the staging file's roots and this file's tax regimes
   * (thread-staging.ts): this connection's locks on both are let go, at the next read, made here.
   * It writes neither again until the end, the staging file only when no thread reads it.
   */
  shareWithThreads(): void {
    this.shareStage();
    this.shareFile();
  }

  /** The error of a worker thread's work on this file's behalf, a full disk named (`named`). */
  async guard<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      throw this.named(err);
    }
  }

  /** Lets go of this connection's lock on the staging file (at the next read, which is made here), so that another can take it. */
  private shareStage(): void {
    this.db.pragma('stage.locking_mode = NORMAL');
    this.db.prepare('SELECT count(*) FROM stage.sqlite_schema').get();
  }

  private stepDone(name: string): boolean {
    return this.metaValue(`step ${name}`) === 'done';
  }

  private step(name: string, run: () => void): void {
    if (this.stepDone(name)) return;
    this.onStep?.(name);
    this.guarded(() => {
      run();
      this.setMeta(`step ${name}`, 'done');
    });
  }

  private metaValue(name: string): string | undefined {
    return this.db.prepare('SELECT value FROM meta WHERE name = ?').pluck().get(name) as string | undefined;
  }

  private setMeta(name: string, value: string): void {
    this.db.prepare('INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)').run(name, value);
  }
}

export const stagePath = (path: string) => path.replace(/\.sqlite$/, '.stage.sqlite');

/** The staging file, the worker threads' rows files and the search tables' file, each with its journal. */
function removeStage(path: string): void {
  for (const file of [stagePath(path), ...rowsFiles(path), searchPath(path)]) for (const name of [file, `${file}-journal`]) rmSync(name, { force: true });
}
