/**
 * The registry's change history, on either store: the comparisons imports recorded
 * (`change_releases`, one per release compared with the one it replaced: what the server's watches
 * deliver), and pages of the changes themselves, from the embedded store's change file
 * (change-file.ts) or MongoDB's `company_changes` (mongo-changes.ts).
 */
import type { Filter, IndexDeclaration, Store } from '../../store/port.ts';
import type { CompanyDoc } from '../company-record.ts';
import type { Companies } from '../companies.ts';
import { registryOf } from '../registry/registry.ts';
import type { ChangeKind } from '../../../shared/change-kinds.ts';
import type { ChangeCounts } from './change-diff.ts';
import type { ChangePage, ChangeQuery } from './change-page.ts';
import { ChangeFile, changeFilePath, recordedComparison } from './change-file.ts';
import { MONGO_CHANGES, mongoChangeIndexes, mongoChangePage } from './mongo-changes.ts';

export type { ChangePage, ChangePosition, ChangeQuery, StoredChange } from './change-page.ts';

/** One release compared with the one it replaced, recorded once its changes all are. */
export interface ComparisonDoc {
  /** The newer release, `YYYY-MM`. */
  _id: string;
  previousRelease: string;
  counts: ChangeCounts;
  recordedAt: Date;
}

export const COMPARISONS = 'change_releases';

export const changeIndexes: IndexDeclaration[] = mongoChangeIndexes;

export class ChangeHistory {
  private readonly file: ChangeFile | null;

  constructor(
    private readonly store: Store,
    private readonly companies: Pick<Companies, 'registry' | 'collection'>,
  ) {
    this.file = companies.registry ? new ChangeFile(changeFilePath(companies.registry.dir)) : null;
  }

  /** Every release compared, newest first. */
  comparisons(): Promise<ComparisonDoc[]> {
    return this.store.collection<ComparisonDoc>(COMPARISONS).find({}, { sort: { _id: -1 } }).toArray();
  }

  /** A page of changes; `filter` (company search filters as planned) applies to the release in service. */
  page(query: ChangeQuery, filter: Filter<CompanyDoc> | null): Promise<ChangePage> {
    if (this.file) return Promise.resolve(this.file.page(query, filter, this.companies.registry?.current()?.path ?? null));
    return mongoChangePage(this.store.collection(MONGO_CHANGES), this.companies.collection, query, filter);
  }

  close(): void {
    this.file?.close();
  }
}

/**
 * Once an import has put its release in service: what it recorded, from the change file (embedded)
 * or counted in `company_changes` (MongoDB), written to `change_releases` so the server delivers it
 * to watches. Null when this import compared nothing (the first release, the same again, an older
 * one, the demo's). Idempotent: a resumed import writes the same.
 */
export async function closeComparison(store: Store, release: string, mongoPrevious: string | null): Promise<ChangeCounts | null> {
  const registry = registryOf(store);
  let compared: { previous: string; counts: ChangeCounts } | null = null;
  if (registry) {
    const file = registry.inService();
    compared = file ? recordedComparison(registry.dir, release, file) : null;
  } else if (mongoPrevious) {
    const changes = store.collection<{ _id: string; release: string; kind: ChangeKind }>(MONGO_CHANGES);
    const counted = await changes.aggregate<{ _id: ChangeKind; n: number }>([{ $match: { release } }, { $group: { _id: '$kind', n: { $sum: 1 } } }]).toArray();
    compared = { previous: mongoPrevious, counts: Object.fromEntries(counted.map((c) => [c._id, c.n])) };
  }
  if (!compared) return null;
  await store
    .collection<ComparisonDoc>(COMPARISONS)
    .updateOne({ _id: release }, { $set: { previousRelease: compared.previous, counts: compared.counts }, $setOnInsert: { recordedAt: new Date() } }, { upsert: true });
  return compared.counts;
}
