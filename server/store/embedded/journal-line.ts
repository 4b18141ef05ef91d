/**
 * The journal's line, in one place for everything that writes or reads one (a write, a bulk
 * load, a snapshot, start-up): the net effect of one write on one collection, as the resulting
 * documents and the removed ids.
 */
import type { Doc } from './codec.ts';

/** A journal line as read back. */
export interface JournalRecord {
  c: string;
  put?: Doc[];
  del?: string[];
}

/**
 * A journal line: the collection first (a lazy start-up reads only that much of each line), the
 * encoded documents `put`, the ids `del`.
 */
const lineHead = (collection: string) => `{"c":${JSON.stringify(collection)},"put":[`;
const lineTail = (del: string[]) => `],"del":${JSON.stringify(del)}}\n`;

export function journalLine(collection: string, put: string[], del: string[]): string {
  return lineHead(collection) + put.join(',') + lineTail(del);
}

/** The same line as bytes, around `put`: encoded documents joined by commas, as UTF-8. */
export function journalLineBytes(collection: string, put: Uint8Array, del: string[]): Buffer {
  return Buffer.concat([Buffer.from(lineHead(collection)), put, Buffer.from(lineTail(del))]);
}
