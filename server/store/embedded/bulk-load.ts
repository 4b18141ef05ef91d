/**
 * A bulk load (see BulkLoader in port.ts) on the embedded store: each batch is one transaction,
 * its documents written as the text they arrive in. The registry import builds and encodes its
 * documents in worker threads (`encodeUntaggedDocuments`), so the writing thread receives bytes,
 * not objects; it parses a document again only to file it in the collection's key tables.
 */
import type { BaseDoc, BulkLoader, EncodedDocuments } from '../port.ts';
import { decode, encode, encodeUntagged, type Doc, type Untagged } from './codec.ts';
import type { Tables } from './tables.ts';

/** Initial room for a batch's bytes; it doubles as needed. */
const INITIAL_BYTES = 1 << 20;
const COMMA = 0x2c;

/**
 * Documents encoded one at a time into UTF-8, so that neither a batch of documents nor one long
 * string of them ever exists: only each document's own text, briefly. The bytes are their own
 * buffer, so a worker thread can transfer them. (`indexed` is the loader's: SQLite files the keys
 * itself, so nothing is kept beside the documents.)
 */
export function encodeDocuments<T extends BaseDoc>(docs: Iterable<T>, _indexed: readonly string[] = []): EncodedDocuments {
  return encodeEach(docs, encode);
}

/** As {@link encodeDocuments}, for documents that hold no tagged value (see codec.ts's encodeUntagged). */
export function encodeUntaggedDocuments<T extends BaseDoc>(docs: Iterable<T & Untagged<T>>, _indexed: readonly string[] = []): EncodedDocuments {
  return encodeEach(docs, encodeUntagged<T>);
}

function encodeEach<T extends BaseDoc>(docs: Iterable<T>, textOf: (doc: T) => string): EncodedDocuments {
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
  }
  return { ids, bytes: bytes.subarray(0, length), ends, keys: '', fields: {}, multi: [], single: [] };
}

export class DatabaseLoader<T extends BaseDoc> implements BulkLoader<T> {
  readonly stored: ReadonlyMap<string, Partial<T>>;
  readonly indexed: string[] = [];

  constructor(
    private readonly tables: Tables,
    private readonly collection: string,
    fields: Array<keyof T & string>,
  ) {
    this.stored = tables.storedFields(collection, fields) as Map<string, Partial<T>>;
  }

  async put(docs: Iterable<T>): Promise<void> {
    const list = [...docs];
    this.tables.transaction(this.collection, () => {
      for (const doc of list) this.tables.put(this.collection, doc);
    });
  }

  async putEncoded({ ids, bytes, ends }: EncodedDocuments): Promise<void> {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const keyed = this.tables.layout(this.collection).keyTables.size > 0;
    this.tables.transaction(this.collection, () => {
      let start = 0;
      for (const [i, id] of ids.entries()) {
        const json = text.toString('utf8', start, ends[i]);
        start = ends[i]! + 1;
        this.tables.put(this.collection, keyed ? (decode(json) as Doc) : { _id: id }, json);
      }
    });
  }

  async remove(ids: string[]): Promise<void> {
    this.tables.transaction(this.collection, () => {
      for (const _id of ids) this.tables.remove(this.collection, { _id });
    });
  }
}
