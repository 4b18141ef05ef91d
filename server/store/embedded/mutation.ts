/**
 * The changes one write operation makes to a table: applied to memory at once (so the next
 * operation sees them), undoable until the operation finishes, and summarized as one journal
 * line holding the resulting documents. Logging results rather than operators makes replay
 * deterministic and idempotent: it never re-runs `$inc`, `$currentDate` or id generation.
 */
import { encode, type Doc } from './codec.ts';
import { journalLine } from './journal-line.ts';
import type { Held, Table } from './table.ts';

/** A journal line and what it does to the data on disk, for the compaction policy. */
export interface JournalEntry {
  line: string | Uint8Array;
  /** Documents it writes or deletes. */
  documents: number;
  /** Of those, how many were already stored: their earlier versions on disk are now garbage. */
  superseded: number;
}

export class Mutation {
  private readonly undo: Array<{ id: string; previous: Held | undefined }> = [];
  /** Encoded before storing, so a value the journal cannot hold is refused with nothing changed. */
  private readonly encoded = new WeakMap<Doc, string>();

  constructor(private readonly table: Table) {}

  insert(doc: Doc): void {
    const text = encode(doc);
    this.table.insert(doc);
    this.encoded.set(doc, text);
    this.undo.push({ id: doc._id, previous: undefined });
  }

  put(doc: Doc): void {
    const text = encode(doc);
    const previous = this.table.put(doc);
    this.encoded.set(doc, text);
    this.undo.push({ id: doc._id, previous });
  }

  remove(id: string): void {
    const previous = this.table.remove(id);
    if (previous) this.undo.push({ id, previous });
  }

  savepoint(): number {
    return this.undo.length;
  }

  rollback(savepoint = 0): void {
    while (this.undo.length > savepoint) {
      const { id, previous } = this.undo.pop()!;
      this.table.restore(id, previous);
    }
  }

  /** The journal entry for the net effect, or undefined when nothing changed. */
  journalEntry(): JournalEntry | undefined {
    if (this.undo.length === 0) return undefined;
    const put: string[] = [];
    const del: string[] = [];
    // The first change of an id holds what was stored before this write.
    const before = new Map<string, Held | undefined>();
    for (const { id, previous } of this.undo) if (!before.has(id)) before.set(id, previous);
    let superseded = 0;
    for (const [id, previous] of before) {
      const doc = this.table.get(id);
      if (doc) put.push(this.encoded.get(doc) ?? encode(doc));
      else del.push(id);
      if (previous) superseded++;
    }
    return { line: journalLine(this.table.name, put, del), documents: before.size, superseded };
  }
}
