/**
 * Watches (decisions.md, "Registry changes"): a workspace's standing question "tell me what
 * changes about these establishments", answered after each import of a newer release by signed
 * `registry.changes` webhooks (dispatcher.ts). A watch names CNPJs or company search filters (or
 * both), the kinds it wants, and its webhook; it is `active`, or `paused` when a delivery could
 * not be paid for, until resumed.
 */
import { randomUUID } from 'node:crypto';
import { CHANGE_KINDS, type ChangeKind, type WATCH_PAUSED_REASONS, type WatchView } from '../../shared/schemas/changes.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import type { ChangePosition } from '../companies/changes/change-history.ts';

export type WatchFilters = NonNullable<InputOf<'createWatch'>['filters']>;
/** Why a watch stopped sending: its balance could not pay a delivery, or its workspace has no active plan. */
export type PausedReason = (typeof WATCH_PAUSED_REASONS)[number];

export interface WatchDoc {
  _id: string;
  workspaceId: string;
  name: string;
  /** Normalized and without duplicates; absent when the watch names filters only. */
  cnpjs?: string[];
  filters?: WatchFilters;
  kinds: ChangeKind[];
  webhook: { url: string; secret: string };
  status: 'active' | 'paused';
  pausedReason?: PausedReason;
  createdAt: Date;
  lastDelivery?: { release: string; changes: number; at: Date };
}

/**
 * One release's changes for one watch, sent part by part: where the sending stands, so a kill at
 * any point resumes at the part it was on (its charge and its delivery both keyed, never twice).
 */
export interface WatchReleaseDoc {
  /** `<watchId>|<release>`. */
  _id: string;
  watchId: string;
  workspaceId: string;
  release: string;
  previousRelease: string;
  status: 'pending' | 'done';
  /** Its watch is paused: left aside until resumed (so paused watches never hold up active ones). */
  paused: boolean;
  /** How many parts the release's matching changes take (counted at the first pass); null before. */
  parts: number | null;
  /** Parts sent (charged and stored for delivery). */
  sent: number;
  /** Where the part after the last sent starts. */
  after: ChangePosition | null;
  /** One dispatcher works on it at a time (instances share MongoDB). */
  leaseUntil: Date;
  createdAt: Date;
}

const WATCHES = 'watches';
const WATCH_RELEASES = 'watch_releases';

export const watchIndexes: IndexDeclaration[] = [
  { collection: WATCHES, keys: { workspaceId: 1, createdAt: -1 } },
  { collection: WATCH_RELEASES, keys: { status: 1, paused: 1, leaseUntil: 1 } },
  { collection: WATCH_RELEASES, keys: { watchId: 1 } },
];

export class Watches {
  readonly docs: Collection<WatchDoc>;
  readonly releases: Collection<WatchReleaseDoc>;

  constructor(store: Store) {
    this.docs = store.collection<WatchDoc>(WATCHES);
    this.releases = store.collection<WatchReleaseDoc>(WATCH_RELEASES);
  }

  async create(workspaceId: string, watch: Pick<WatchDoc, 'name' | 'cnpjs' | 'filters' | 'webhook'> & { kinds?: ChangeKind[] }, now = new Date()): Promise<WatchDoc> {
    const doc: WatchDoc = {
      _id: randomUUID(),
      workspaceId,
      name: watch.name,
      ...(watch.cnpjs ? { cnpjs: watch.cnpjs } : {}),
      ...(watch.filters ? { filters: watch.filters } : {}),
      kinds: watch.kinds ?? [...CHANGE_KINDS],
      webhook: watch.webhook,
      status: 'active',
      createdAt: now,
    };
    await this.docs.insertOne(doc);
    return doc;
  }

  list(workspaceId: string): Promise<WatchDoc[]> {
    return this.docs.find({ workspaceId }, { sort: { createdAt: -1 } }).toArray();
  }

  /** The watch, if it is this workspace's. */
  get(workspaceId: string, watchId: string): Promise<WatchDoc | null> {
    return this.docs.findOne({ _id: watchId, workspaceId });
  }

  async resume(workspaceId: string, watchId: string): Promise<WatchDoc | null> {
    const { matchedCount } = await this.docs.updateOne({ _id: watchId, workspaceId }, { $set: { status: 'active' }, $unset: { pausedReason: '' } });
    if (matchedCount === 0) return null;
    await this.releases.updateMany({ watchId, paused: true }, { $set: { paused: false } });
    return this.get(workspaceId, watchId);
  }

  async pause(watchId: string, reason: PausedReason): Promise<void> {
    await this.docs.updateOne({ _id: watchId }, { $set: { status: 'paused', pausedReason: reason } });
    await this.releases.updateMany({ watchId }, { $set: { paused: true } });
  }

  async delete(workspaceId: string, watchId: string): Promise<boolean> {
    const { deletedCount } = await this.docs.deleteOne({ _id: watchId, workspaceId });
    if (deletedCount > 0) await this.releases.deleteMany({ watchId });
    return deletedCount > 0;
  }
}

/** A watch as the API gives it: a count of its CNPJs, never its webhook's secret. */
export function watchView(doc: WatchDoc): WatchView {
  return {
    watchId: doc._id,
    name: doc.name,
    ...(doc.cnpjs ? { cnpjs: doc.cnpjs.length } : {}),
    ...(doc.filters ? { filters: doc.filters } : {}),
    kinds: doc.kinds,
    status: doc.status,
    ...(doc.pausedReason ? { pausedReason: doc.pausedReason } : {}),
    createdAt: doc.createdAt.toISOString(),
    ...(doc.lastDelivery
      ? { lastDelivery: { release: doc.lastDelivery.release, changes: doc.lastDelivery.changes, at: new Date(doc.lastDelivery.at).toISOString() } }
      : {}),
  };
}
