/**
 * The upgrade from the journal store (the embedded store before SQLite): a DATA_DIR holding
 * `snapshot-N.jsonl` and `journal-N.jsonl` files is converted once, at the first start of this
 * version or by `npx prospecta migrate`.
 *
 * 1. The old files move into `DATA_DIR/journal-store.old/` (kept until the operator removes them).
 * 2. Their state (the newest snapshot, then every journal of its generation or later; each line
 *    `{"c": collection, "put": [documents], "del": [ids]}`) is written into `store.db.converting`.
 * 3. That file, complete and synced, is renamed to `store.db`.
 * A conversion cut at any point leaves no `store.db`, and the next start does it again from the
 * start (from whichever of the two places each old file is in).
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { holdServerLock, type ServerLock } from './lock.ts';
import { ident, Schema } from './schema.ts';

export const OLD_DIR = 'journal-store.old';
const DATA_FILE = /^(snapshot|journal)-(\d+)\.jsonl$/;
/** The journal store's other files: its pid lock, its full-disk ballast, a snapshot being written. */
const LEFTOVER = /^(LOCK|space-reserve|.*\.tmp)$/;
const BATCH = 5000;

export interface Conversion {
  collections: Record<string, number>;
  documents: number;
  message: string;
}

class ConversionError extends Error {
  readonly code = 'STORE_CORRUPT';
}

interface OldFile {
  kind: string;
  generation: number;
  path: string;
}

async function oldFiles(dir: string): Promise<OldFile[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.flatMap((name) => {
    const match = DATA_FILE.exec(name);
    return match ? [{ kind: match[1]!, generation: Number(match[2]), path: join(dir, name) }] : [];
  });
}

async function sync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Converts a journal store in `dir` into `store.db`, if there is one to convert; `lock` takes the
 * server's lock first, so two processes never convert at once. Undefined when there was nothing.
 */
export async function convertJournalStore(dir: string, lock: () => void, databaseFile = 'store.db'): Promise<Conversion | undefined> {
  const target = join(dir, databaseFile);
  const old = join(dir, OLD_DIR);
  const here = await oldFiles(dir);
  const exists = await stat(target).then(
    () => true,
    () => false,
  );
  if (exists) return undefined;
  if (here.length === 0 && (await oldFiles(old)).length === 0) return undefined;
  lock();
  await mkdir(old, { recursive: true, mode: 0o700 });
  for (const file of here) await rename(file.path, join(old, `${file.kind}-${String(file.generation).padStart(6, '0')}.jsonl`));
  for (const name of await readdir(dir)) if (LEFTOVER.test(name)) await unlink(join(dir, name)).catch(() => undefined);
  await sync(dir);

  const files = (await oldFiles(old)).sort((a, b) => a.generation - b.generation || (a.kind === 'snapshot' ? -1 : 1));
  const snapshot = files.filter((f) => f.kind === 'snapshot').at(-1);
  const base = snapshot?.generation ?? 0;
  const journals = files.filter((f) => f.kind === 'journal' && f.generation >= base);

  const converting = `${target}.converting`;
  for (const suffix of ['', '-journal', '-wal', '-shm']) await unlink(converting + suffix).catch(() => undefined);
  await (await open(converting, 'w', 0o600)).close();
  const db = new Database(converting);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    const schema = new Schema(db);
    const writer = new Writer(db, schema);
    if (snapshot) await readFileLines(snapshot, false, writer);
    for (const [i, journal] of journals.entries()) await readFileLines(journal, i === journals.length - 1, writer);
    writer.flush();
    const collections: Record<string, number> = {};
    for (const name of schema.collections()) collections[name] = db.prepare(`SELECT count(*) FROM ${ident(`c:${name}`)}`).pluck().get() as number;
    db.close();
    await sync(converting);
    await rename(converting, target);
    await sync(dir);
    const documents = Object.values(collections).reduce((a, b) => a + b, 0);
    return {
      collections,
      documents,
      message:
        `Converted the journal store in ${dir} to SQLite (${target}): ${documents} documents in ${Object.keys(collections).length} collections. ` +
        `The old files are in ${old}; remove them once the store serves as it should.`,
    };
  } catch (err) {
    if (db.open) db.close();
    throw err;
  }
}

/** Writes the replayed lines, a transaction per few thousand documents. */
class Writer {
  private pending = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly schema: Schema,
  ) {
    db.exec('BEGIN');
  }

  apply(collection: string, put: Array<{ _id: string }>, del: string[]): void {
    const table = this.schema.layout(collection).table;
    const upsert = this.db.prepare(`INSERT INTO ${table} (_id, doc) VALUES (?, ?) ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc`);
    const remove = this.db.prepare(`DELETE FROM ${table} WHERE _id = ?`);
    for (const id of del) remove.run(id);
    // The lines hold the codec's JSON (Dates and NaN as tags), which is what the table holds too.
    for (const doc of put) upsert.run(doc._id, JSON.stringify(doc));
    this.pending += put.length + del.length;
    if (this.pending >= BATCH) this.flush(true);
  }

  flush(again = false): void {
    this.db.exec('COMMIT');
    if (again) this.db.exec('BEGIN');
    this.pending = 0;
  }
}

/**
 * Applies a file's lines. A journal's unfinished last line is a write that was never acknowledged
 * (the process died while appending it): skipped in the newest journal, as the journal store did;
 * anywhere else, and any unreadable line, stops the conversion naming the file and line.
 */
async function readFileLines(file: OldFile, newest: boolean, writer: Writer): Promise<void> {
  const { size } = await stat(file.path);
  let endsWithNewline = size === 0;
  if (size > 0) {
    const handle = await open(file.path, 'r');
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    await handle.close();
    endsWithNewline = last[0] === 0x0a;
  }
  const lines = createInterface({ input: createReadStream(file.path), crlfDelay: Infinity });
  let lineNumber = 0;
  let previous: string | undefined;
  let trailer: number | undefined;
  let documents = 0;
  const handle = (text: string, n: number) => {
    let record: { c?: unknown; put?: unknown; del?: unknown; end?: unknown };
    try {
      record = JSON.parse(text) as typeof record;
    } catch (err) {
      throw new ConversionError(`The journal store cannot be converted: ${file.path}, line ${n}, is not valid JSON (${(err as Error).message})`);
    }
    if (file.kind === 'snapshot' && typeof record.end === 'number') {
      trailer = record.end;
      return;
    }
    if (typeof record.c !== 'string' || !Array.isArray(record.put ?? []) || !Array.isArray(record.del ?? [])) {
      throw new ConversionError(`The journal store cannot be converted: ${file.path}, line ${n}, is not a journal record`);
    }
    const put = (record.put ?? []) as Array<{ _id: string }>;
    const del = (record.del ?? []) as string[];
    documents += put.length + del.length;
    writer.apply(record.c, put, del);
  };
  for await (const line of lines) {
    if (previous !== undefined) handle(previous, lineNumber);
    previous = line;
    lineNumber++;
  }
  if (previous !== undefined) {
    if (endsWithNewline) handle(previous, lineNumber);
    else if (!newest || file.kind === 'snapshot') {
      throw new ConversionError(`The journal store cannot be converted: ${file.path} ends with an unfinished line`);
    }
  }
  if (file.kind === 'snapshot' && trailer !== documents) {
    throw new ConversionError(`The journal store cannot be converted: the snapshot ${file.path} is incomplete`);
  }
}

/** `npx prospecta migrate`: the conversion alone, under the server's lock while it runs. */
export async function migrateDataDir(dir: string): Promise<{ converted: boolean; dataDir: string; collections?: Record<string, number>; documents?: number; oldFiles?: string }> {
  let lock: ServerLock | undefined;
  try {
    const converted = await convertJournalStore(dir, () => (lock ??= holdServerLock(dir)));
    return converted ? { converted: true, dataDir: dir, collections: converted.collections, documents: converted.documents, oldFiles: join(dir, OLD_DIR) } : { converted: false, dataDir: dir };
  } finally {
    lock?.release();
  }
}
