/**
 * The rows files of a release file being imported: one per worker thread (thread-staging.ts),
 * beside the release file, removed with its staging file.
 */
import type Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Where worker thread `thread` stages the rows of the release file at `path`. */
export const rowsPath = (path: string, thread: number) => path.replace(/\.sqlite$/, `.rows-${thread}.sqlite`);

/** The name a rows file is attached under: `rows` and its thread's number. */
const rowsSchema = (file: string) => `rows${/\.rows-(\d+)\.sqlite$/.exec(file)![1]}`;

/** Attaches the rows files at `files` to `db` (those not attached yet): their schemas' names. */
export function attachRowsFiles(db: Database.Database, files: string[]): string[] {
  const attached = new Set(db.prepare('SELECT name FROM pragma_database_list').pluck().all() as string[]);
  return files.map((file) => {
    const schema = rowsSchema(file);
    if (!attached.has(schema)) db.prepare(`ATTACH DATABASE ? AS ${schema}`).run(file);
    return schema;
  });
}

/** The rows files of the release file at `path` (of this run's threads, and of an earlier run's, which may have had more). */
export function rowsFiles(path: string): string[] {
  const prefix = basename(path).replace(/\.sqlite$/, '.rows-');
  return readdirSync(dirname(path))
    .filter((name) => name.startsWith(prefix) && /^\d+\.sqlite$/.test(name.slice(prefix.length)))
    .sort()
    .map((name) => join(dirname(path), name));
}
