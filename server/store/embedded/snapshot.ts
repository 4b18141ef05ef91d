/**
 * Writes a snapshot: every document, as journal-style lines, then a trailer with the count. It is
 * written to a temporary file, synced, and renamed into place, so a snapshot under its real name
 * is always complete. Encoding happens in slices with a pause for I/O between them, so a large
 * store does not stall request handling.
 */
import { open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encode, type Doc } from './codec.ts';
import { FILE_MODE, fileName, syncDir, TEMP_SUFFIX } from './data-files.ts';
import { journalLine } from './journal-line.ts';

const DOCS_PER_LINE = 500;
const BYTES_PER_WRITE = 1 << 20;

export class SnapshotAborted extends Error {}

/** Collection names with references to their documents at one instant (documents are never mutated). */
export type Captured = Array<[collection: string, docs: Doc[]]>;

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
    let pending: string[] = [];
    let pendingBytes = 0;
    const write = async (text: string, force: boolean) => {
      pending.push(text);
      pendingBytes += text.length;
      if (!force && pendingBytes < BYTES_PER_WRITE) return;
      const buffer = Buffer.from(pending.join(''));
      pending = [];
      pendingBytes = 0;
      await handle.writeFile(buffer);
      bytes += buffer.length;
      if (stop()) throw new SnapshotAborted('snapshot abandoned: the store is closing');
    };
    for (const [collection, docs] of captured) {
      for (let start = 0; start < docs.length; start += DOCS_PER_LINE) {
        const slice = docs.slice(start, start + DOCS_PER_LINE);
        count += slice.length;
        await write(journalLine(collection, slice.map(encode), []), false);
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
