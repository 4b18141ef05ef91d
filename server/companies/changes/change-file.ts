/**
 * The embedded store's change history: DATA_DIR/registry/changes/changes.sqlite, beside the
 * release files but in a folder of its own, so a release switch (which removes every other release
 * file) keeps it. One row per (release, establishment, kind), so a step run twice records nothing
 * twice; the last KEPT_RELEASES releases' changes are kept.
 *
 * Written by `ChangeStep`, a step of the release file's `finish` (receita/import/release-writer.ts): with the
 * release in service attached as `old`, establishments whose compared-fields hash differs (and
 * those present on one side only) are decoded and diffed (change-diff.ts), a page of keys at a time.
 * A release hashed by another function (an older version's) has its hashes made again first.
 * Read by `ChangeFile`, joined with the release in service's `facts` for the search filters.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ChangeKind } from '../../../shared/change-kinds.ts';
import { cnpjKey, cnpjOfKey } from '../registry/cnpj-key.ts';
import { RecordDecoder, type CodecTables } from '../registry/record-codec.ts';
import { filterSql } from '../registry/registry-query.ts';
import type { Filter } from '../../store/port.ts';
import type { CompanyDoc } from '../company-record.ts';
import { CHANGE_HASH, changeCompany, changeHash, countInto, diffRecords, type ChangeCounts } from './change-diff.ts';
import type { ChangePage, ChangeQuery, StoredChange } from './change-page.ts';

/** At least the last 24 releases are kept (decisions.md). */
export const KEPT_RELEASES = 24;
/** Keys read per page of the comparison: bounds the step's memory whatever the release's size. */
const KEYS_PER_PAGE = 5_000;
/** Compiled queries kept by the reader: the shapes of filter a server sees are few. */
const MAX_STATEMENTS = 64;
/** The import's progress line counts the changes recorded every this many. */
const PROGRESS_EVERY = 1_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS change (
    release TEXT NOT NULL, k INTEGER NOT NULL, kind TEXT NOT NULL, previous TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (release, k, kind)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS change_by_key ON change (k, release);
  CREATE TABLE IF NOT EXISTS comparison (release TEXT PRIMARY KEY, previous TEXT NOT NULL, file TEXT NOT NULL, counts TEXT NOT NULL) WITHOUT ROWID;
`;

export const changeFilePath = (registryDir: string) => path.join(registryDir, 'changes', 'changes.sqlite');

/**
 * Creates the file (WAL: the server reads it while an import writes) before the import attaches it:
 * a journal mode cannot be set on an attached file inside the import's transactions.
 */
export function createChangeFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec(SCHEMA);
  } finally {
    db.close();
  }
}

/** The release a release file holds, from its `meta` (`schema` names the attached database). */
const releaseOf = (db: Database.Database, schema: string) =>
  (JSON.parse((db.prepare(`SELECT value FROM ${schema}.meta WHERE name = 'release'`).pluck().get() as string | undefined) ?? 'null') as {
    release: string;
    synthetic: boolean;
  } | null);

/**
 * The comparison of a new release file (`main`) with the one it replaces (`old`), as a resumable
 * step of its `finish`. `attach` before the step's transaction; `record` inside it.
 */
export class ChangeStep {
  private previous: string | null = null;

  private readonly file: string;
  private readonly name: string;

  /** `releaseFile`: the path of the release file being finished, beside which the history lives. */
  constructor(
    releaseFile: string,
    private readonly release: string,
  ) {
    this.file = changeFilePath(path.dirname(releaseFile));
    this.name = path.basename(releaseFile);
  }

  /**
   * Attaches the history when the release replaces an older, real one; false otherwise (the same
   * release again, an older one with --force, the demo's): then nothing is recorded.
   */
  attach(db: Database.Database, synthetic: boolean): boolean {
    const old = releaseOf(db, 'old');
    if (synthetic || !old || old.synthetic || !(this.release > old.release)) return false;
    this.previous = old.release;
    createChangeFile(this.file);
    db.prepare('ATTACH DATABASE ? AS history').run(this.file);
    return true;
  }

  /** Compares `main` with `old` and records each change; within the caller's transaction. */
  record(db: Database.Database, codec: CodecTables, onProgress?: (counts: ChangeCounts) => void): ChangeCounts {
    const previous = this.previous!;
    const oldCodec = JSON.parse(db.prepare("SELECT value FROM old.meta WHERE name = 'codec'").pluck().get() as string) as CodecTables;
    const decoders = { main: new RecordDecoder(codec), old: new RecordDecoder(oldCodec) };
    const bodies = {
      main: db.prepare('SELECT body FROM main.doc WHERE k = ?').pluck().safeIntegers(),
      old: db.prepare('SELECT body FROM old.doc WHERE k = ?').pluck().safeIntegers(),
    };
    const doc = (side: 'main' | 'old', k: bigint) => JSON.parse(decoders[side].decode(bodies[side].get(k) as Buffer)) as object;
    const insert = db.prepare('INSERT OR IGNORE INTO history.change (release, k, kind, previous, body) VALUES (?, ?, ?, ?, ?)');
    const counts: ChangeCounts = {};
    let recorded = 0;
    const put = (k: bigint, kind: ChangeKind, fields: object, company: object) => {
      if (insert.run(this.release, k, kind, previous, JSON.stringify({ fields, company })).changes === 0) return;
      countInto(counts, kind);
      if (++recorded % PROGRESS_EVERY === 0) onProgress?.(counts);
    };

    // The hashes of a release file hashed otherwise (before the hash, or by another function) are
    // made again from its documents: a decoding each, where a diff decodes two and compares every field.
    const hashedAlike = db.prepare("SELECT value FROM old.meta WHERE name = 'change hash'").pluck().get() === CHANGE_HASH;
    const newOrChanged = db
      .prepare(
        `SELECT n.k, o.k IS NOT NULL, n.hash FROM main.facts n LEFT JOIN old.facts o ON o.k = n.k WHERE n.k > ? ${hashedAlike ? 'AND (o.k IS NULL OR o.hash IS NOT n.hash)' : ''} ORDER BY n.k LIMIT ?`,
      )
      .raw()
      .safeIntegers();
    for (const [k, existed, hash] of pages(newOrChanged)) {
      if (!existed) {
        put(k, 'opened', {}, changeCompany(doc('main', k)));
        continue;
      }
      const before = doc('old', k);
      if (!hashedAlike && hash !== null && changeHash(before) === Number(hash)) continue;
      const now = doc('main', k);
      for (const change of diffRecords(before, now)) put(k, change.kind, change.fields, changeCompany(now));
    }
    const gone = db
      .prepare('SELECT o.k, 0, NULL FROM old.facts o WHERE o.k > ? AND NOT EXISTS (SELECT 1 FROM main.facts n WHERE n.k = o.k) ORDER BY o.k LIMIT ?')
      .raw()
      .safeIntegers();
    for (const [k] of pages(gone)) put(k, 'removed', {}, changeCompany(doc('old', k)));

    // Counted whole (a rerun of the step after a kill finds some already recorded).
    const all = db.prepare('SELECT kind, count(*) FROM history.change WHERE release = ? GROUP BY kind').raw().all(this.release) as Array<[ChangeKind, number]>;
    const total: ChangeCounts = {};
    for (const [kind, n] of all) countInto(total, kind, n);
    db.prepare('INSERT OR REPLACE INTO history.comparison (release, previous, file, counts) VALUES (?, ?, ?, ?)').run(this.release, previous, this.name, JSON.stringify(total));
    db.prepare(
      `DELETE FROM history.change WHERE release NOT IN (SELECT release FROM history.comparison ORDER BY release DESC LIMIT ${KEPT_RELEASES})`,
    ).run();
    db.prepare(`DELETE FROM history.comparison WHERE release NOT IN (SELECT release FROM history.comparison ORDER BY release DESC LIMIT ${KEPT_RELEASES})`).run();
    return total;
  }
}

/** Every row of a keyset query `(after, limit)` on its first column, a page at a time (no statement stays open between pages). */
function* pages(statement: Database.Statement): Generator<[bigint, bigint, bigint | null]> {
  let after = -1n;
  for (;;) {
    const rows = statement.all(after, KEYS_PER_PAGE) as Array<[bigint, bigint, bigint | null]>;
    yield* rows;
    if (rows.length < KEYS_PER_PAGE) return;
    after = rows[rows.length - 1]![0];
  }
}

/** The history as the server reads it: pages of changes, joined with the release in service for filters. */
export class ChangeFile {
  private db: Database.Database | null = null;
  private attached: string | null = null;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly file: string) {}

  /** `release`: the file in service, whose `facts` the filters read (null: none, so no filter can match). */
  page(query: ChangeQuery, filter: Filter<CompanyDoc> | null, release: string | null): ChangePage {
    const db = this.open();
    if (!db || query.releases.length === 0) return { changes: [], more: null };
    const where: string[] = [`c.release IN (${query.releases.map(() => '?').join(', ')})`];
    const params: unknown[] = [...query.releases];
    if (query.kinds) (where.push(`c.kind IN (${query.kinds.map(() => '?').join(', ')})`), params.push(...query.kinds));
    if (query.cnpjs) {
      // One parameter however many CNPJs: the statement's text, and so its compiled plan, stays the
      // same (a placeholder per CNPJ took a millisecond to compile at every request of 500).
      where.push('c.k IN (SELECT value FROM json_each(?))');
      // SQLite's JSON reads 64-bit integers exactly, where JavaScript's numbers would not.
      params.push(`[${query.cnpjs.map(cnpjKey).filter((k) => k !== null).join(',')}]`);
    }
    if (query.after) {
      const { release: r, cnpj, kind } = query.after;
      const key = cnpjKey(cnpj);
      where.push('(c.release < ? OR (c.release = ? AND (c.k > ? OR (c.k = ? AND c.kind > ?))))');
      params.push(r, r, key, key, kind);
    }
    let join = '';
    if (filter) {
      if (!release) return { changes: [], more: null };
      this.attach(db, release);
      const condition = filterSql(filter);
      join = 'JOIN rel.facts f ON f.k = c.k';
      where.push(condition.sql);
      params.push(...condition.params);
    }
    const rows = this.statement(db, `SELECT c.release, c.previous, c.k, c.kind, c.body FROM change c ${join} WHERE ${where.join(' AND ')} ORDER BY c.release DESC, c.k, c.kind LIMIT ?`)
      .raw()
      .safeIntegers()
      .all(...params, query.limit + 1) as Array<[string, string, bigint, ChangeKind, string]>;
    const changes: StoredChange[] = rows.slice(0, query.limit).map(([release, previous, k, kind, body]) => {
      const { fields, company } = JSON.parse(body) as Pick<StoredChange, 'fields' | 'company'>;
      return { cnpj: cnpjOfKey(k), release, previousRelease: previous, kind, fields, company };
    });
    const last = rows[query.limit - 1];
    return { changes, more: rows.length > query.limit && last ? { release: last[0], cnpj: cnpjOfKey(last[2]), kind: last[3] } : null };
  }

  close(): void {
    this.db?.close();
    this.db = null;
    this.attached = null;
    this.statements.clear();
  }

  /** A query's statement, compiled once per text (a filter's shape, not its values, makes the text). */
  private statement(db: Database.Database, sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      this.statements.set(sql, (statement = db.prepare(sql)));
    }
    return statement;
  }

  private open(): Database.Database | null {
    if (!this.db) {
      try {
        this.db = new Database(this.file, { fileMustExist: true });
      } catch {
        return null;
      }
    }
    return this.db;
  }

  /** The release in service as `rel`, re-attached when a switch changed it. */
  private attach(db: Database.Database, release: string): void {
    if (this.attached === release) return;
    // Statements over the release detached must not outlive it.
    this.statements.clear();
    if (this.attached) db.exec('DETACH DATABASE rel');
    this.attached = null;
    db.prepare('ATTACH DATABASE ? AS rel').run(release);
    this.attached = release;
  }
}

/** The comparison the import named `file` recorded for `release`, if that import compared (see ChangeStep). */
export function recordedComparison(registryDir: string, release: string, file: string): { previous: string; counts: ChangeCounts } | null {
  let db: Database.Database;
  try {
    db = new Database(changeFilePath(registryDir), { fileMustExist: true });
  } catch {
    return null;
  }
  try {
    const row = db.prepare('SELECT previous, file, counts FROM comparison WHERE release = ?').get(release) as
      | { previous: string; file: string; counts: string }
      | undefined;
    return row && row.file === file ? { previous: row.previous, counts: JSON.parse(row.counts) as ChangeCounts } : null;
  } finally {
    db.close();
  }
}
