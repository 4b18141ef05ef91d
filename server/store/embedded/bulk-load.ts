/**
 * A bulk load (see BulkLoader in port.ts) on the embedded store: each batch of documents becomes
 * one journal line, durable like any write, and is never kept in memory. What the table still
 * holds for a written id is dropped, so the table ends with exactly the documents the load did
 * not replace, and nothing in the process reads it any more (Table#unload).
 */
import type { BaseDoc, BulkLoader } from '../port.ts';
import { encode } from './codec.ts';
import type { Committer } from './collection.ts';
import { journalLine } from './mutation.ts';
import type { Table } from './table.ts';

export class TableLoader<T extends BaseDoc> implements BulkLoader<T> {
  constructor(
    private readonly table: Table,
    private readonly store: Committer,
  ) {
    table.unload();
  }

  put(docs: T[]): Promise<void> {
    this.store.assertWritable();
    // Encoded first, so a document the journal cannot hold refuses the batch with nothing changed.
    const encoded = docs.map((doc) => {
      if (typeof doc._id !== 'string') throw new TypeError(`A bulk-loaded document needs a string _id, not ${JSON.stringify(doc._id)}`);
      return encode(doc);
    });
    return this.commit(docs.map((doc) => doc._id), encoded, []);
  }

  remove(ids: string[]): Promise<void> {
    this.store.assertWritable();
    return this.commit(ids, [], ids);
  }

  private commit(ids: string[], put: string[], del: string[]): Promise<void> {
    let superseded = 0;
    for (const id of ids) if (this.table.forget(id)) superseded++;
    return this.store.commit({ line: journalLine(this.table.name, put, del), documents: ids.length, superseded });
  }
}
