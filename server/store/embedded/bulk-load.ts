/**
 * A bulk load (see BulkLoader in port.ts) on the embedded store: each batch of documents becomes
 * one journal line, a block (see block.ts) that carries their indexed values beside them, durable
 * like any write, and is never kept in memory. The table lets go of
 * the documents it held when the load starts (Table#unload); nothing in the process reads it
 * any more, and the next process replays the journal, where the load's lines come last.
 */
import type { BaseDoc, BulkLoader, EncodedDocuments } from '../port.ts';
import { blockLine, KeyCollector } from './block.ts';
import { encode, encodeUntagged, type Doc, type Untagged } from './codec.ts';
import type { Committer } from './collection.ts';
import { journalLineBytes } from './journal-line.ts';
import type { Table } from './table.ts';

/** Initial room for a batch's bytes; it doubles as needed. */
const INITIAL_BYTES = 1 << 20;
const COMMA = 0x2c;

/**
 * Documents encoded one at a time into UTF-8, so that neither a batch of documents nor one
 * long string of them ever exists: only each document's own text, briefly. The bytes are
 * their own buffer, so a worker thread can transfer them. Their values of the `indexed` fields
 * (the loader's `indexed`) go beside them, so no process has to parse them to index them.
 */
export function encodeDocuments<T extends BaseDoc>(docs: Iterable<T>, indexed: readonly string[] = []): EncodedDocuments {
  return encodeEach(docs, encode, new KeyCollector(indexed));
}

/** As {@link encodeDocuments}, for documents that hold no tagged value (see codec.ts's encodeUntagged). */
export function encodeUntaggedDocuments<T extends BaseDoc>(docs: Iterable<T & Untagged<T>>, indexed: readonly string[] = []): EncodedDocuments {
  // Their indexed values are parts of them, so those need no tag scan either.
  return encodeEach(docs, encodeUntagged<T>, new KeyCollector(indexed, JSON.stringify));
}

function encodeEach<T extends BaseDoc>(docs: Iterable<T>, textOf: (doc: T) => string, keys: KeyCollector): EncodedDocuments {
  const ids: string[] = [];
  const ends: number[] = [];
  const encoder = new TextEncoder();
  let bytes = new Uint8Array(INITIAL_BYTES);
  let length = 0;
  for (const doc of docs) {
    if (typeof doc._id !== 'string') throw new TypeError(`A bulk-loaded document needs a string _id, not ${JSON.stringify(doc._id)}`);
    const text = textOf(doc);
    // UTF-8 takes at most 3 bytes per UTF-16 unit, plus the comma.
    if (length + text.length * 3 + 1 > bytes.length) {
      const grown = new Uint8Array(Math.max(bytes.length * 2, length + text.length * 3 + 1));
      grown.set(bytes.subarray(0, length));
      bytes = grown;
    }
    if (ids.length > 0) bytes[length++] = COMMA;
    length += encoder.encodeInto(text, bytes.subarray(length)).written;
    ids.push(doc._id);
    ends.push(length);
    keys.add(doc as unknown as Doc);
  }
  return { ids, bytes: bytes.subarray(0, length), ends, ...keys.finish() };
}

export class TableLoader<T extends BaseDoc> implements BulkLoader<T> {
  readonly stored: ReadonlyMap<string, Partial<T>>;
  readonly indexed: string[];

  constructor(
    private readonly table: Table,
    private readonly store: Committer,
    fields: Array<keyof T & string>,
  ) {
    // Declared indexes are let go with the documents, so their fields are taken first.
    this.indexed = table.indexedFields();
    this.stored = table.unload(fields) as Map<string, Partial<T>>;
  }

  put(docs: Iterable<T>): Promise<void> {
    this.store.assertWritable();
    // All are encoded before anything changes: a document the journal cannot hold refuses the batch.
    return this.putEncoded(encodeDocuments(docs, this.indexed));
  }

  putEncoded(encoded: EncodedDocuments): Promise<void> {
    this.store.assertWritable();
    return this.commit(encoded.ids, blockLine(this.table.name, encoded));
  }

  remove(ids: string[]): Promise<void> {
    this.store.assertWritable();
    return this.commit(ids, journalLineBytes(this.table.name, new Uint8Array(0), ids));
  }

  private commit(ids: string[], line: Uint8Array): Promise<void> {
    let superseded = 0;
    for (const id of ids) if (this.table.forget(id)) superseded++;
    return this.store.commit({ line, documents: ids.length, superseded });
  }
}
