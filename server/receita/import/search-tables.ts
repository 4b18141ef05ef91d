/**
 * The search's tables of a release file (registry/schema.ts's SEARCH_SCHEMA: CNAEs, partners'
 * documents, the full-text indexes of names and partners), built at the end of an import from its
 * staged rows into a file of their own beside it, then copied into the release file.
 *
 * A SQLite file has one writer at a time, and the end of an import is a series of sorts and
 * B-tree builds: in one file they run one after the other on one core while the other idles (28 s
 * of a 1M import's 128). In a file of their own, a worker thread builds these tables while the
 * writer's thread builds the documents, the facts and their indexes; copying the finished tables
 * is a page-by-page transfer (1 s at 1M). Same rows in the same order: the same release file.
 *
 * Each table is one transaction recorded in the file's `meta`, as the release file's own steps
 * are, so a killed import resumes with the tables not finished.
 */
import Database from 'better-sqlite3';
import { SEARCH_SCHEMA, SEARCH_TABLES, stagedView } from '../../companies/registry/schema.ts';
import { attachRowsFiles } from './rows-files.ts';

/**
 * This build's page cache, which also bounds its sorts' memory (they spill to temporary files
 * beyond it): the writer's thread keeps its own beside it. 128 MiB was no faster than this at 1M.
 */
const CACHE_KIB = 32 * 1024;

/** Where a release file's search tables are built: beside it, removed with its staging file. */
export const searchPath = (path: string) => path.replace(/\.sqlite$/, '.search.sqlite');

/**
 * Each CNPJ's latest staged row, its searched columns only: a CNPJ staged twice (listed twice in
 * the release, or staged again by a resumed import) is searched as its document reads, from the
 * row of the greatest `pos` (SQLite takes bare columns from the row of the aggregate's max). One
 * sort of the staged rows, into a temporary table that every step then reads in key order.
 */
const LATEST = `
  CREATE TEMP TABLE IF NOT EXISTS latest (k INTEGER PRIMARY KEY, name TEXT, partners TEXT, activities TEXT, pdocs TEXT);
  INSERT INTO latest SELECT k, name, partners, activities, pdocs FROM (SELECT k, name, partners, activities, pdocs, max(pos) FROM staged GROUP BY k);
`;

/** Each table of SEARCH_SCHEMA, from the latest staged rows (LATEST), in key order (which leaves its B-tree pages full). */
const STEPS: Array<[name: string, sql: string]> = [
  ...([['activity', 'activities'], ['partner_doc', 'pdocs']] as const).map(
    ([table, column]): [string, string] => [
      table,
      `INSERT OR IGNORE INTO ${table} SELECT j.value, s.k FROM latest s, json_each(s.${column}) j WHERE s.${column} IS NOT NULL ORDER BY 1, 2`,
    ],
  ),
  ...([['names', 'name'], ['partners', 'partners']] as const).map(([table, column]): [string, string] => [
    table,
    `INSERT INTO ${table} (rowid, words) SELECT k, ${column} FROM latest WHERE ${column} IS NOT NULL ORDER BY k;
     INSERT INTO ${table} (${table}) VALUES ('optimize');`,
  ]),
];

/**
 * Builds the search tables at `path` from the rows staged in the staging file at `stagePath` and
 * in the worker threads' rows files at `rowsPaths` (only read: the writer's thread reads them at
 * the same time). Runs in whichever thread calls it.
 */
export function buildSearchTables(path: string, stagePath: string, rowsPaths: string[]): void {
  const db = new Database(path);
  try {
    // Only this connection writes the file; reading the staging file takes a shared lock per statement.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = TRUNCATE');
    db.pragma('synchronous = OFF');
    db.pragma(`cache_size = -${CACHE_KIB}`);
    db.exec(SEARCH_SCHEMA);
    db.prepare('ATTACH DATABASE ? AS stage').run(stagePath);
    db.exec(stagedView(['stage', ...attachRowsFiles(db, rowsPaths)]));
    const done = db.prepare("SELECT 1 FROM meta WHERE name = ? AND value = 'done'").pluck();
    const record = db.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES (?, 'done')");
    let latest = false;
    for (const [name, sql] of STEPS) {
      const step = `step ${name}`;
      if (done.get(step) !== undefined) continue;
      if (!latest) db.exec(LATEST);
      latest = true;
      db.transaction(() => {
        db.exec(sql);
        record.run(step);
      })();
    }
  } finally {
    db.close();
  }
}

/**
 * Copies the finished search tables of the file attached as `from` into the release file (`main`)
 * of `db`, replacing what they held (one statement a table; within a transaction of the caller's).
 * A full-text index's shadow tables are written directly, which SQLite's defensive mode (on in
 * better-sqlite3) refuses: it is lifted for the copy only.
 */
export function copySearchTables(db: Database.Database, from: string): void {
  db.unsafeMode(true);
  try {
    for (const table of SEARCH_TABLES) db.exec(`DELETE FROM main.${table}; INSERT INTO main.${table} SELECT * FROM ${from}.${table};`);
  } finally {
    db.unsafeMode(false);
  }
}
