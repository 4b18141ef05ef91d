/**
 * Prospects and their history. A prospect is unique per campaign, sheet and row (a unique index:
 * two concurrent adds of the same rows cannot both insert). Every change that matters to the
 * person reviewing it is an event, read back in the order it happened.
 */
import { randomUUID } from 'node:crypto';
import { MESSAGE_FIELDS } from '../../shared/schemas/prospects.ts';
import type { Prospect as ProspectView, ProspectEvent as ProspectEventView, ProspectStatus } from '../../shared/types.ts';
import { isDuplicateKeyError, type Collection, type IndexDeclaration, type Store } from '../store/port.ts';
import type { CadenceStep } from './cadence.ts';
import { emptyCounts, type StatusCounts } from './campaigns.ts';
import type { Message } from './message-writer.ts';


/** A stored prospect: the contract's Prospect, with its workspace and real dates. */
export type ProspectDoc = Omit<ProspectView, 'prospectId' | 'createdAt' | 'updatedAt'> & {
  _id: string;
  workspaceId: string;
  createdAt: Date;
  updatedAt: Date;
};

/** A history entry as stored: one kind of the contract's events (type and data), with its workspace. */
type StoredEvent<E> = E extends ProspectEventView
  ? Omit<E, 'eventId' | 'at'> & {
      _id: string;
      workspaceId: string;
      at: Date;
      /** Orders events written in the same millisecond. */
      seq: number;
    }
  : never;
type EventDoc = StoredEvent<ProspectEventView>;
/** An event to record: its kind, data and whose it is. */
type NewEvent = EventDoc extends infer E ? (E extends EventDoc ? Omit<E, '_id' | 'at' | 'seq'> : never) : never;

export const prospectIndexes: IndexDeclaration[] = [
  { collection: 'prospects', keys: { campaignId: 1, sheetId: 1, rowId: 1 }, options: { unique: true } },
  { collection: 'prospects', keys: { workspaceId: 1, status: 1 } },
  { collection: 'prospects', keys: { campaignId: 1 } },
  { collection: 'prospect_events', keys: { prospectId: 1, seq: 1 } },
];

export function prospectView({ _id, workspaceId, createdAt, updatedAt, ...doc }: ProspectDoc): ProspectView {
  return { prospectId: _id, ...doc, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
}

export function eventView({ _id, workspaceId, seq, at, ...doc }: EventDoc): ProspectEventView {
  return { eventId: _id, ...doc, at: at.toISOString() };
}

let counter = 0;
const nextSeq = () => Date.now() * 1000 + (counter++ % 1000);

export interface NewProspect {
  sheetId: string;
  rowId: string;
  context: Record<string, string>;
  message: Message;
}

export class Prospects {
  readonly collection: Collection<ProspectDoc>;
  private readonly events: Collection<EventDoc>;

  constructor(store: Store) {
    this.collection = store.collection<ProspectDoc>('prospects');
    this.events = store.collection<EventDoc>('prospect_events');
  }

  /** Rows of the campaign among these, by row id. */
  async existingRows(campaignId: string, sheetId: string, rowIds: string[]): Promise<Set<string>> {
    const docs = await this.collection.find({ campaignId, sheetId, rowId: { $in: rowIds } }, { projection: { rowId: 1 } }).toArray();
    return new Set(docs.map((d) => d.rowId));
  }

  /**
   * Inserts one prospect per row; a row another request inserted meanwhile is skipped. On any
   * other failure, the ones inserted here are removed again: all or nothing.
   */
  async insert(workspaceId: string, campaignId: string, rows: NewProspect[]): Promise<{ added: ProspectDoc[]; duplicates: number }> {
    const now = new Date();
    const docs: ProspectDoc[] = rows.map((row) => ({
      _id: randomUUID(),
      workspaceId,
      campaignId,
      sheetId: row.sheetId,
      rowId: row.rowId,
      status: 'ready',
      connectionNote: row.message.connectionNote,
      emailSubject: row.message.emailSubject,
      emailBody: row.message.emailBody,
      writer: row.message.writer,
      cadence: null,
      context: row.context,
      createdAt: now,
      updatedAt: now,
    }));
    const outcomes = await Promise.allSettled(docs.map((doc) => this.collection.insertOne(doc)));
    const added = docs.filter((_, i) => outcomes[i]!.status === 'fulfilled');
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    try {
      const unexpected = failed.find((o) => !isDuplicateKeyError(o.reason));
      if (unexpected) throw unexpected.reason;
      await this.record(added.map((doc) => ({ workspaceId, prospectId: doc._id, type: 'created' as const, data: { campaignId, sheetId: doc.sheetId, rowId: doc.rowId, writer: doc.writer } })));
    } catch (err) {
      await this.discard(added.map((d) => d._id));
      throw err;
    }
    return { added, duplicates: failed.length };
  }

  /** Takes back prospects just inserted, with whatever history they got, when what inserted them failed. */
  async discard(prospectIds: string[]): Promise<void> {
    if (prospectIds.length === 0) return;
    await this.collection.deleteMany({ _id: { $in: prospectIds } });
    await this.events.deleteMany({ prospectId: { $in: prospectIds } });
  }

  get(workspaceId: string, prospectId: string): Promise<ProspectDoc | null> {
    return this.collection.findOne({ _id: prospectId, workspaceId });
  }

  list(workspaceId: string, filter: { campaignId?: string; status?: ProspectStatus }): Promise<ProspectDoc[]> {
    return this.collection.find({ workspaceId, ...filter }, { sort: { createdAt: 1, _id: 1 } }).toArray();
  }

  /** Prospects per status for each campaign of a workspace, counted by the store. */
  async counts(workspaceId: string, campaignId?: string): Promise<Map<string, StatusCounts>> {
    const groups = await this.collection
      .aggregate<{ _id: { campaignId: string; status: ProspectStatus }; n: number }>([
        { $match: campaignId ? { campaignId, workspaceId } : { workspaceId } },
        { $group: { _id: { campaignId: '$campaignId', status: '$status' }, n: { $sum: 1 } } },
      ])
      .toArray();
    const counts = new Map<string, StatusCounts>();
    for (const { _id, n } of groups) {
      const c = counts.get(_id.campaignId) ?? emptyCounts();
      c[_id.status] = n;
      counts.set(_id.campaignId, c);
    }
    return counts;
  }

  /** Status and message edits; the history says what changed, from the document as it was. */
  async update(workspaceId: string, prospectId: string, changes: Partial<Pick<ProspectDoc, 'status' | (typeof MESSAGE_FIELDS)[number]>>): Promise<ProspectDoc | null> {
    const updatedAt = new Date();
    const before = await this.collection.findOneAndUpdate({ _id: prospectId, workspaceId }, { $set: { ...changes, updatedAt } }, { returnDocument: 'before' });
    if (!before) return null;
    const edited = MESSAGE_FIELDS.filter((f) => changes[f] !== undefined && changes[f] !== before[f]);
    const events = [];
    if (edited.length > 0) events.push({ workspaceId, prospectId, type: 'message_edited' as const, data: { fields: edited } });
    if (changes.status !== undefined && changes.status !== before.status) {
      events.push({ workspaceId, prospectId, type: 'status_changed' as const, data: { from: before.status, to: changes.status } });
    }
    await this.record(events);
    // What the update wrote, read from `before` (needed for the history) rather than read again.
    return { ...before, ...changes, updatedAt };
  }

  async setCadence(workspaceId: string, campaignId: string, prospectId: string, steps: CadenceStep[]): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: prospectId, workspaceId, campaignId }, { $set: { cadence: steps, updatedAt: new Date() } });
    if (result.matchedCount === 0) return false;
    await this.record([{ workspaceId, prospectId, type: 'cadence_edited', data: { scope: 'prospect', steps: steps.length } }]);
    return true;
  }

  /** The campaign's cadence changed: an event for each prospect that follows it. */
  async campaignCadenceEdited(workspaceId: string, campaignId: string, steps: number): Promise<void> {
    const following = await this.collection.find({ campaignId, workspaceId, cadence: null }, { projection: { _id: 1 } }).toArray();
    await this.record(following.map((p) => ({ workspaceId, prospectId: p._id, type: 'cadence_edited' as const, data: { scope: 'campaign', steps } })));
  }

  /** Removes the person, the message and the history. */
  async remove(workspaceId: string, prospectId: string): Promise<ProspectDoc | null> {
    const doc = await this.collection.findOne({ _id: prospectId, workspaceId });
    if (!doc || (await this.collection.deleteOne({ _id: prospectId, workspaceId })).deletedCount === 0) return null;
    await this.events.deleteMany({ prospectId });
    return doc;
  }

  history(prospectId: string): Promise<EventDoc[]> {
    return this.events.find({ prospectId }, { sort: { seq: 1 } }).toArray();
  }

  private async record(events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    const at = new Date();
    await this.events.bulkWrite(events.map((e) => ({ insertOne: { document: { _id: randomUUID(), at, seq: nextSeq(), ...e } } })));
  }
}
