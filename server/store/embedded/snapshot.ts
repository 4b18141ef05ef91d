/**
 * Writes a snapshot: every document, as journal-style lines, then a trailer with the count. It is
 * written to a temporary file, synced, and renamed into place, so a snapshot under its real name
 * is always complete. Encoding happens in slices with a pause for I/O between them, so a large
 * store does not stall request handling. A block (see block.ts) whose documents are all still
 * stored as they came is copied as it is, keys and all, so the next start-up reads it as fast;
 * documents of a block that changed since are written as ordinary documents.
 */
import { open, rename, unlink } from 'node:fs/promises';
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
}

/** Writes the snapshot of `generation` into `dir`; returns its size in bytes. */
export function writeSnapshot(dir: string, generation: number, captured: Captured, stop: () => boolean): Promise<number> {
  return writeSnapshotFile(join(dir, fileName('snapshot', generation)), captured, stop);
}

/**
 * Writes a snapshot at `path` (a backup is one too): complete under its name or not there at
 * all. Returns its size in bytes.
 */
export async function writeSnapshotFile(path: string, captured: Captured, stop: () => boolean): Promise<number> {
  const temp = path + TEMP_SUFFIX;
  const handle = await open(temp, 'w', FILE_MODE);
  let bytes = 0;
  let count = 0;
  try {
    let pending: Array<string | Buffer> = [];
    let pendingBytes = 0;
    const write = async (text: string | Buffer, force: boolean) => {
      pending.push(text);
      pendingBytes += text.length;
      if (!force && pendingBytes < BYTES_PER_WRITE) return;
      const buffer = Buffer.concat(pending.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
      pending = [];
      pendingBytes = 0;
      await handle.writeFile(buffer);
      bytes += buffer.length;
      if (stop()) throw new SnapshotAborted('snapshot abandoned: the store is closing');
    };
    for (const [collection, held] of captured) {
      const { whole, loose } = wholeBlocks(held);
      for (const block of whole) {
        count += block.count;
        await write(block.line, false);
        await write('\n', false);
      }
      for (let start = 0; start < loose.length; start += DOCS_PER_LINE) {
        const slice = loose.slice(start, start + DOCS_PER_LINE);
        count += slice.length;
        await write(journalLine(collection, slice.map((doc) => (doc instanceof EncodedDoc ? doc.block.line.toString('utf8', ...doc.block.span(doc.at)) : encode(doc))), []), false);
      }
    }
    const trailer: SnapshotTrailer = { end: count };
    await write(`${JSON.stringify(trailer)}\n`, true);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(temp);
    throw err;
  }
  await handle.close();
  await rename(temp, path);
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
