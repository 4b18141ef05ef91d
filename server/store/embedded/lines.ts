/**
 * Reads a newline-delimited file without loading it whole, reporting where the last complete
 * line ends so that an unfinished last line (a crash mid-append) can be told apart and cut off;
 * and reads noted lines again later, by position (a lazy start-up's tables, see recovery.ts).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

export interface LinesRead {
  /** Bytes up to and including the last newline. */
  completeBytes: number;
  /** Whether bytes follow the last newline. */
  unfinishedTail: boolean;
}

const NEWLINE = 0x0a;
/**
 * Large reads: a block line (block.ts) of a bulk load is a few MiB, and a line within one chunk
 * is handed over as a view of it rather than copied out of several.
 */
const CHUNK_BYTES = 64 << 20;

/**
 * `onLine` gets each line's bytes (without the newline; a view of the chunk read, which it must
 * copy to keep), its 1-based number and where it starts. The next chunk is read while the lines of
 * this one are handled: start-up's CPU work then hides most of the reading (a stream read ahead
 * less, and copied chunks it had buffered together).
 */
export async function readLines(path: string, onLine: (bytes: Buffer, lineNumber: number, offset: number) => void): Promise<LinesRead> {
  let carry: Buffer[] = [];
  let completeBytes = 0;
  let lineNumber = 0;
  const handle = await open(path, 'r');
  let next: Promise<Buffer | undefined> | undefined;
  try {
    // No larger than the file: each chunk is a new allocation, a small store's too.
    const chunkBytes = Math.max(1, Math.min(CHUNK_BYTES, (await handle.stat()).size));
    let position = 0;
    const read = async (): Promise<Buffer | undefined> => {
      const buffer = Buffer.allocUnsafe(chunkBytes);
      const at = position;
      let filled = 0;
      for (let n = -1; n !== 0 && filled < chunkBytes; filled += n) {
        ({ bytesRead: n } = await handle.read(buffer, filled, chunkBytes - filled, at + filled));
      }
      // The file's last piece gets a buffer of its own size: blocks keep the buffer they lie in.
      return filled === 0 ? undefined : filled < chunkBytes ? Buffer.from(buffer.subarray(0, filled)) : buffer;
    };
    const readNext = () => {
      const chunk = read();
      position += chunkBytes;
      return chunk;
    };
    next = readNext();
    for (let chunk = await next; chunk; chunk = await next) {
      next = readNext();
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
        const piece = chunk.subarray(start, end);
        const bytes = carry.length > 0 ? Buffer.concat([...carry, piece]) : piece;
        carry = [];
        const offset = completeBytes;
        completeBytes += bytes.length + 1;
        onLine(bytes, ++lineNumber, offset);
        start = end + 1;
      }
      if (start < chunk.length) carry.push(chunk.subarray(start));
    }
    next = undefined;
  } finally {
    // A line that stopped the reading leaves a read in flight, which must end before the file closes.
    await next?.catch(() => undefined);
    await handle.close();
  }
  return { completeBytes, unfinishedTail: carry.length > 0 };
}

/** One line read again, by where `readLines` found it. */
export interface LineRef {
  path: string;
  offset: number;
  length: number;
  lineNumber: number;
}

/** The text of lines noted by `readLines`, in the order given, each file opened once. */
export function* readLinesAt(refs: Iterable<LineRef>): Generator<{ ref: LineRef; text: string }> {
  const opened = new Map<string, number>();
  try {
    for (const ref of refs) {
      let fd = opened.get(ref.path);
      if (fd === undefined) opened.set(ref.path, (fd = openSync(ref.path, 'r')));
      const bytes = Buffer.allocUnsafe(ref.length);
      for (let read = 0; read < ref.length; ) {
        const n = readSync(fd, bytes, read, ref.length - read, ref.offset + read);
        if (n === 0) throw new Error(`${ref.path} ends before its line ${ref.lineNumber}`);
        read += n;
      }
      yield { ref, text: bytes.toString('utf8') };
    }
  } finally {
    for (const fd of opened.values()) closeSync(fd);
  }
}
