/**
 * Reads a newline-delimited file without loading it whole, reporting where the last complete
 * line ends so that an unfinished last line (a crash mid-append) can be told apart and cut off.
 */
import { createReadStream } from 'node:fs';

export interface LinesRead {
  /** Bytes up to and including the last newline. */
  completeBytes: number;
  /** Whether bytes follow the last newline. */
  unfinishedTail: boolean;
}

const NEWLINE = 0x0a;

export async function readLines(path: string, onLine: (text: string, lineNumber: number) => void): Promise<LinesRead> {
  let carry: Buffer[] = [];
  let completeBytes = 0;
  let lineNumber = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end);
      const bytes = carry.length > 0 ? Buffer.concat([...carry, piece]) : piece;
      carry = [];
      completeBytes += bytes.length + 1;
      onLine(bytes.toString('utf8'), ++lineNumber);
      start = end + 1;
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
  }
  return { completeBytes, unfinishedTail: carry.length > 0 };
}
