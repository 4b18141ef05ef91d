/**
 * Start-up: rebuilds every table from the newest snapshot and the journals after it.
 *
 * Only the newest journal may end in an unfinished line: a crash mid-append, whose write was
 * never acknowledged. That tail is cut off so new lines do not land after it. Anything else
 * that does not parse is corruption, and start-up stops naming the file and line rather than
 * carrying on without acknowledged writes.
 */
import { open } from 'node:fs/promises';
import { Block, BlockKeysError } from './block.ts';
import { decode, type Doc } from './codec.ts';
import { listDataFiles, removeSuperseded, type DataFile } from './data-files.ts';
import { readLines, readLinesAt, type LineRef } from './lines.ts';
import type { JournalRecord } from './journal-line.ts';
import type { SnapshotTrailer } from './snapshot.ts';
import type { IndexSpec } from './indexes.ts';
import { Table } from './table.ts';

export class StoreCorruptError extends Error {
  readonly code = 'STORE_CORRUPT';

  constructor(
    readonly file: string,
    readonly problem: string,
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

/** A collection's table, made with the indexes declared for it (so they are filed as its lines are read). */
function tableOf(replay: Replay, name: string): Table {
  let table = replay.tables.get(name);
  if (!table) {
    replay.tables.set(name, (table = new Table(name)));
    for (const spec of replay.indexes.get(name) ?? []) table.createIndex(spec);
  }
  return table;
}

function apply(replay: Replay, record: JournalRecord): void {
  replay.counts.superseded += tableOf(replay, record.c).replay(record);
  replay.counts.documents += (record.del?.length ?? 0) + (record.put?.length ?? 0);
}

/** A block line's documents stay encoded (see block.ts); one that does not add up is damage. */
function applyBlock(file: DataFile, bytes: Buffer, lineNumber: number, replay: Replay): boolean {
  let block: Block | undefined;
  try {
    block = Block.parse(bytes);
  } catch (err) {
    throw blockDamage(file.path, lineNumber, err as Error);
  }
  if (!block) return false;
  replay.lines.set(block, { path: file.path, lineNumber });
  replay.counts.superseded += tableOf(replay, block.collection).replayBlock(block);
  replay.counts.documents += block.count;
  return true;
}

const blockDamage = (path: string, lineNumber: number, err: Error) =>
  new StoreCorruptError(path, `line ${lineNumber} is not a valid block (${err.message})`);

/** Builds the indexes of every table from what was read; damage found in a block's keys names its line. */
function buildIndexes(replay: Replay): void {
  try {
    for (const table of replay.tables.values()) table.finishReplay();
  } catch (err) {
    const line = err instanceof BlockKeysError ? replay.lines.get(err.block) : undefined;
    throw line ? blockDamage(line.path, line.lineNumber, err as Error) : err;
  }
}

function parse(file: string, text: string, lineNumber: number): unknown {
  try {
    return decode(text);
  } catch (err) {
    throw new StoreCorruptError(file, `line ${lineNumber} is not valid JSON (${(err as Error).message})`);
  }
}

/**
 * What recovery does with each line of a file: an eager start-up applies it at once; a lazy one
 * (a one-shot process) only notes which collection it belongs to and where it is, and that
 * collection's table reads its lines when something first uses it (see Table), so a command
 * that touches two small collections does not first parse a million registry documents.
 */
interface Replay {
  lazy: boolean;
  tables: Map<string, Table>;
  /** Non-unique indexes by collection, filed as the documents are read (an eager start-up's). */
  indexes: ReadonlyMap<string, readonly IndexSpec[]>;
  counts: Counts;
  unread: Map<string, LineRef[]>;
  /** Where each block was read, for what its keys turn out to hold when its indexes are built. */
  lines: WeakMap<Block, { path: string; lineNumber: number }>;
}

const COLLECTION_HEAD = /^\{"c":("(?:[^"\\]|\\.)*")/;
const HEAD_BYTES = 512;

/** Applies or notes one line; the trailer of a snapshot is returned, not applied. */
function replayLine(replay: Replay, file: DataFile, bytes: Buffer, lineNumber: number, offset: number): SnapshotTrailer | undefined {
  if (replay.lazy) {
    const head = bytes.subarray(0, HEAD_BYTES).toString('utf8');
    const named = COLLECTION_HEAD.exec(head)?.[1];
    if (named !== undefined) {
      const collection = JSON.parse(named) as string;
      const refs = replay.unread.get(collection) ?? [];
      if (refs.length === 0) replay.unread.set(collection, refs);
      refs.push({ path: file.path, offset, length: bytes.length, lineNumber });
      return undefined;
    }
  }
  if (applyBlock(file, bytes, lineNumber, replay)) return undefined;
  const value = parse(file.path, bytes.toString('utf8'), lineNumber);
  if (file.kind === 'snapshot' && isTrailer(value)) return value;
  if (!isRecord(value)) throw new StoreCorruptError(file.path, `line ${lineNumber} is not a ${file.kind} record`);
  if (replay.lazy) throw new StoreCorruptError(file.path, `line ${lineNumber} does not start with its collection`);
  apply(replay, value);
  return undefined;
}

async function loadSnapshot(file: DataFile, replay: Replay): Promise<number> {
  let trailer: SnapshotTrailer | undefined;
  const { completeBytes, unfinishedTail } = await readLines(file.path, (bytes, lineNumber, offset) => {
    if (trailer) throw new StoreCorruptError(file.path, `line ${lineNumber} follows the end of the snapshot`);
    trailer = replayLine(replay, file, bytes, lineNumber, offset);
  });
  // A lazy start-up counts no documents; the trailer still shows the snapshot was written whole.
  if (unfinishedTail || !trailer || (!replay.lazy && trailer.end !== replay.counts.documents)) {
    throw new StoreCorruptError(file.path, 'the snapshot is incomplete');
  }
  return completeBytes;
}

async function replayJournal(file: DataFile, replay: Replay, newest: boolean, onWarning: (message: string) => void): Promise<number> {
  const { completeBytes, unfinishedTail } = await readLines(file.path, (bytes, lineNumber, offset) => {
    if (replayLine(replay, file, bytes, lineNumber, offset)) {
      throw new StoreCorruptError(file.path, `line ${lineNumber} is not a journal record`);
    }
  });
  if (unfinishedTail) {
    if (!newest) throw new StoreCorruptError(file.path, 'the last line is unfinished but this is not the newest journal');
    const handle = await open(file.path, 'r+');
    let dropped = 0;
    try {
      dropped = (await handle.stat()).size - completeBytes;
      await handle.truncate(completeBytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    onWarning(
      `The embedded store cut an unfinished last line from ${file.path}: ${dropped} bytes after byte ${completeBytes}, ` +
        'a write interrupted before it was acknowledged (a crash or kill -9), so no acknowledged write is lost.',
    );
  }
  return completeBytes;
}

/** Reads a snapshot file whole, as start-up would, without keeping it: a backup's check. */
export async function checkSnapshot(path: string): Promise<{ collections: number; documents: number }> {
  const replay: Replay = { lazy: false, tables: new Map(), indexes: new Map(), counts: { documents: 0, superseded: 0 }, unread: new Map(), lines: new WeakMap() };
  await loadSnapshot({ kind: 'snapshot', generation: 0, path }, replay);
  return { collections: replay.tables.size, documents: replay.counts.documents };
}

/** A collection's records, read from where a lazy start-up noted them, each checked as at start-up. */
function* recordsAt(refs: LineRef[]): Generator<JournalRecord> {
  for (const { ref, text } of readLinesAt(refs)) {
    const value = parse(ref.path, text, ref.lineNumber);
    if (!isRecord(value)) throw new StoreCorruptError(ref.path, `line ${ref.lineNumber} is not a record`);
    yield value;
  }
}

export interface RecoverOptions {
  /**
   * Tables read their documents when first used (for one-shot processes). The counts for the
   * compaction policy then cover only what was read, which is why such a store never compacts.
   */
  lazy?: boolean;
  onWarning?: (message: string) => void;
  /**
   * The indexes the process will declare, by collection. An eager start-up builds the non-unique
   * ones from what it read, a block's documents filed from the keys it keeps, block by block
   * (see Table#replayBlock), and damage in those keys names the block's line. Unique ones are
   * left to `createIndex`, which refuses data that breaks them.
   */
  indexes?: ReadonlyMap<string, readonly IndexSpec[]>;
}

export async function recover(dir: string, { lazy = false, onWarning = (message: string) => process.emitWarning(message), indexes }: RecoverOptions = {}): Promise<Recovered> {
  const { files } = await listDataFiles(dir);
  const nonUnique = new Map([...(lazy ? [] : (indexes ?? []))].map(([name, specs]) => [name, specs.filter((spec) => !spec.unique)]));
  const replay: Replay = { lazy, tables: new Map(), indexes: nonUnique, counts: { documents: 0, superseded: 0 }, unread: new Map(), lines: new WeakMap() };
  const snapshot = files.filter((f) => f.kind === 'snapshot').at(-1);
  const base = snapshot?.generation ?? 0;
  let earlierBytes = snapshot ? await loadSnapshot(snapshot, replay) : 0;
  const journals = files.filter((f) => f.kind === 'journal' && f.generation >= base);
  let journalBytes: number | undefined;
  for (const [i, journal] of journals.entries()) {
    const newest = i === journals.length - 1;
    const bytes = await replayJournal(journal, replay, newest, onWarning);
    if (newest) journalBytes = bytes;
    else earlierBytes += bytes;
  }
  buildIndexes(replay);
  for (const [collection, refs] of replay.unread) replay.tables.set(collection, new Table(collection, () => recordsAt(refs)));
  // Finishes a compaction that stopped after its snapshot was in place.
  await removeSuperseded(dir, base);
  const newestJournal = journals.at(-1);
  return {
    tables: replay.tables,
    generation: newestJournal?.generation ?? Math.max(base, 1),
    journalBytes,
    written: { earlierBytes, ...replay.counts },
  };
}
