/**
 * Writes a snapshot: every document, as journal-style lines, then a trailer with the count. It is
 * written to a temporary file, synced, and renamed into place, so a snapshot under its real name
 * is always complete. Encoding happens in slices with a pause for I/O between them, so a large
 * store does not stall request handling. A block (see block.ts) whose documents are all still
 * stored as they came is copied as it is, keys and all, so the next start-up reads it as fast;
 * documents of a block that changed since are written as ordinary documents.
 */
import { createHash } from 'node:crypto';
import { link, open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Block, EncodedDoc } from './block.ts';
import { encode } from './codec.ts';
import { FILE_MODE, fileName, syncDir, TEMP_SUFFIX } from './data-files.ts';
import { journalLine } from './journal-line.ts';
import type { Held } from './table.ts';

const DOCS_PER_LINE = 500;
const BYTES_PER_WRITE = 1 << 20;

export class SnapshotAborted extends Error {}

/** Collection names with references to their documents at one instant (documents are never mutated). */
export type Captured = Array<[collection: string, docs: Held[]]>;

export interface SnapshotTrailer {
  end: number;
  /** A backup's SHA-256 (hex) of every byte before this line, checked by restore. */
  sha256?: string;
}

export interface SnapshotFileOptions {
  /**
   * A backup: the path is chosen by whoever runs the command, so its temporary file is created
   * exclusively (an existing file or symlink there is refused, never followed or truncated), it
   * is put under its name by a hard link that fails rather than replace anything, and its trailer
   * carries the digest restore checks.
   */
  backup?: boolean;
}

/** Writes the snapshot of `generation` into `dir`; returns its size in bytes. */
export function writeSnapshot(dir: string, generation: number, captured: Captured, stop: () => boolean): Promise<number> {
  return writeSnapshotFile(join(dir, fileName('snapshot', generation)), captured, stop);
}

/**
 * Writes a snapshot at `path` (a backup is one too): complete under its name or not there at
 * all. Returns its size in bytes.
 */
export async function writeSnapshotFile(path: string, captured: Captured, stop: () => boolean, { backup = false }: SnapshotFileOptions = {}): Promise<number> {
  const temp = path + TEMP_SUFFIX;
  const handle = await open(temp, backup ? 'wx' : 'w', FILE_MODE);
  const digest = backup ? createHash('sha256') : null;
  let bytes = 0;
  let count = 0;
  try {
    let pending: Array<string | Buffer> = [];
    let pendingBytes = 0;
    const flush = async () => {
      const buffer = Buffer.concat(pending.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
      pending = [];
      pendingBytes = 0;
      digest?.update(buffer);
      await handle.writeFile(buffer);
      bytes += buffer.length;
      if (stop()) throw new SnapshotAborted('snapshot abandoned: the store is closing');
    };
    const write = async (text: string | Buffer) => {
      pending.push(text);
      pendingBytes += text.length;
      if (pendingBytes >= BYTES_PER_WRITE) await flush();
    };
    for (const [collection, held] of captured) {
      const { whole, loose } = wholeBlocks(held);
      for (const block of whole) {
        count += block.count;
        await write(block.line);
        await write('\n');
      }
      for (let start = 0; start < loose.length; start += DOCS_PER_LINE) {
        const slice = loose.slice(start, start + DOCS_PER_LINE);
        count += slice.length;
        await write(journalLine(collection, slice.map((doc) => (doc instanceof EncodedDoc ? doc.block.line.toString('utf8', ...doc.block.span(doc.at)) : encode(doc))), []));
      }
    }
    await flush();
    const trailer: SnapshotTrailer = digest ? { end: count, sha256: digest.digest('hex') } : { end: count };
    const tail = Buffer.from(`${JSON.stringify(trailer)}\n`);
    await handle.writeFile(tail);
    bytes += tail.length;
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(temp);
    throw err;
  }
  await handle.close();
  if (backup) {
    // link, unlike rename, refuses a name that exists (a file, or a symlink planted since the check).
    try {
      await link(temp, path);
    } finally {
      await unlink(temp);
    }
  } else {
    await rename(temp, path);
  }
  await syncDir(dirname(path));
  return bytes;
}

/** The blocks all of whose documents are among `held`, and every other document. */
function wholeBlocks(held: Held[]): { whole: Block[]; loose: Held[] } {
  const live = new Map<Block, number>();
  for (const doc of held) if (doc instanceof EncodedDoc) live.set(doc.block, (live.get(doc.block) ?? 0) + 1);
  const whole = [...live].filter(([block, count]) => count === block.count).map(([block]) => block);
  const copied = new Set(whole);
  return { whole, loose: held.filter((doc) => !(doc instanceof EncodedDoc && copied.has(doc.block))) };
}
