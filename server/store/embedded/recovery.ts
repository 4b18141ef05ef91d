/**
 * Start-up: rebuilds every table from the newest snapshot and the journals after it.
 *
 * Only the newest journal may end in an unfinished line: a crash mid-append, whose write was
 * never acknowledged. That tail is cut off so new lines do not land after it. Anything else
 * that does not parse is corruption, and start-up stops naming the file and line rather than
 * carrying on without acknowledged writes.
 */
import { open } from 'node:fs/promises';
import { decode, type Doc } from './codec.ts';
import { listDataFiles, removeSuperseded, type DataFile } from './files.ts';
import { readLines } from './lines.ts';
import type { JournalRecord } from './mutation.ts';
import type { SnapshotTrailer } from './snapshot.ts';
import { Table } from './table.ts';

export class StoreCorruptError extends Error {
  readonly code = 'STORE_CORRUPT';

  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(
      `The embedded store cannot start: in ${file}, ${problem}. Restore the data directory from a backup ` +
        '(or, for a damaged journal line, delete that line to give up the writes it holds).',
    );
  }
}

export interface Recovered {
  tables: Map<string, Table>;
  /** The generation whose journal receives new writes; it may not exist yet. */
  generation: number;
  /** Complete bytes in that journal, or undefined when it does not exist. */
  journalBytes: number | undefined;
  /** What is on disk, for the compaction policy (see EmbeddedStore). */
  written: { earlierBytes: number; documents: number; superseded: number };
}

function isRecord(value: unknown): value is JournalRecord {
  if (typeof value !== 'object' || value === null) return false;
  const { c, put, del } = value as Partial<Record<keyof JournalRecord, unknown>>;
  return (
    typeof c === 'string' &&
    (put === undefined || (Array.isArray(put) && put.every((d) => typeof (d as Doc | null)?._id === 'string'))) &&
    (del === undefined || (Array.isArray(del) && del.every((id) => typeof id === 'string')))
  );
}

function isTrailer(value: unknown): value is SnapshotTrailer {
  return typeof value === 'object' && value !== null && typeof (value as SnapshotTrailer).end === 'number';
}

interface Counts {
  documents: number;
  superseded: number;
}

function apply(tables: Map<string, Table>, record: JournalRecord, counts: Counts): void {
  let table = tables.get(record.c);
  if (!table) tables.set(record.c, (table = new Table(record.c)));
  for (const id of record.del ?? []) if (table.restore(id, undefined)) counts.superseded++;
  for (const doc of record.put ?? []) if (table.restore(doc._id, doc)) counts.superseded++;
  counts.documents += (record.del?.length ?? 0) + (record.put?.length ?? 0);
}

function parse(file: string, text: string, lineNumber: number): unknown {
  try {
    return decode(text);
  } catch (err) {
    throw new StoreCorruptError(file, `line ${lineNumber} is not valid JSON (${(err as Error).message})`);
  }
}

async function loadSnapshot(file: DataFile, tables: Map<string, Table>, counts: Counts): Promise<number> {
  let trailer: SnapshotTrailer | undefined;
  const { completeBytes, unfinishedTail } = await readLines(file.path, (text, lineNumber) => {
    const value = parse(file.path, text, lineNumber);
    if (trailer) throw new StoreCorruptError(file.path, `line ${lineNumber} follows the end of the snapshot`);
    if (isTrailer(value)) trailer = value;
    else if (isRecord(value)) apply(tables, value, counts);
    else throw new StoreCorruptError(file.path, `line ${lineNumber} is not a snapshot record`);
  });
  if (unfinishedTail || !trailer || trailer.end !== counts.documents) {
    throw new StoreCorruptError(file.path, 'the snapshot is incomplete');
  }
  return completeBytes;
}

async function replayJournal(file: DataFile, tables: Map<string, Table>, newest: boolean, counts: Counts): Promise<number> {
  const { completeBytes, unfinishedTail } = await readLines(file.path, (text, lineNumber) => {
    const value = parse(file.path, text, lineNumber);
    if (!isRecord(value)) throw new StoreCorruptError(file.path, `line ${lineNumber} is not a journal record`);
    apply(tables, value, counts);
  });
  if (unfinishedTail) {
    if (!newest) throw new StoreCorruptError(file.path, 'the last line is unfinished but this is not the newest journal');
    const handle = await open(file.path, 'r+');
    try {
      await handle.truncate(completeBytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  return completeBytes;
}

export async function recover(dir: string): Promise<Recovered> {
  const { files } = await listDataFiles(dir);
  const tables = new Map<string, Table>();
  const snapshot = files.filter((f) => f.kind === 'snapshot').at(-1);
  const base = snapshot?.generation ?? 0;
  const counts: Counts = { documents: 0, superseded: 0 };
  let earlierBytes = snapshot ? await loadSnapshot(snapshot, tables, counts) : 0;
  const journals = files.filter((f) => f.kind === 'journal' && f.generation >= base);
  let journalBytes: number | undefined;
  for (const [i, journal] of journals.entries()) {
    const newest = i === journals.length - 1;
    const bytes = await replayJournal(journal, tables, newest, counts);
    if (newest) journalBytes = bytes;
    else earlierBytes += bytes;
  }
  // Finishes a compaction that stopped after its snapshot was in place.
  await removeSuperseded(dir, base);
  const newestJournal = journals.at(-1);
  return {
    tables,
    generation: newestJournal?.generation ?? Math.max(base, 1),
    journalBytes,
    written: { earlierBytes, ...counts },
  };
}
