/**
 * The change history on MongoDB: `company_changes`, one document per (release, CNPJ, kind), its
 * `_id` made of the three, so a resumed import writes nothing twice. The import records a batch's
 * changes before the batch replaces the documents they compare (and an establishment's removal
 * before it is deleted): a kill between the two loses nothing, and a resumed batch finds the new
 * document already there and nothing more to record. Memory is one batch's documents.
 */
import type { Collection, Filter, IndexDeclaration, Store } from '../../store/port.ts';
import type { CompanyDoc } from '../company-record.ts';
import { changeCompany, changeHash, diffRecords } from './change-diff.ts';
import type { ChangePage, ChangeQuery, StoredChange } from './change-page.ts';
import { loadedRelease } from '../releases.ts';
import { CHANGE_FIELDS } from '../../../shared/change-kinds.ts';

export const MONGO_CHANGES = 'company_changes';

interface ChangeDoc extends StoredChange {
  _id: string;
}

export const mongoChangeIndexes: IndexDeclaration[] = [
  { collection: MONGO_CHANGES, keys: { release: -1, cnpj: 1, kind: 1 } },
  { collection: MONGO_CHANGES, keys: { cnpj: 1, release: -1 } },
];

/** What a comparison reads of a stored establishment: the compared fields and who it is. */
const PROJECTION = Object.fromEntries(
  ['release', 'cnpj', 'address', 'registrationStatus', ...Object.values(CHANGE_FIELDS).flat()].map((field) => [field, 1]),
);
const REMOVALS_PER_WRITE = 1_000;
const KEPT_RELEASES = 24;

/** Records changes while an import upserts a newer release into `companies`. */
export class MongoChangeRecorder {
  private constructor(
    private readonly changes: Collection<ChangeDoc>,
    private readonly companies: Collection<CompanyDoc>,
    readonly release: string,
    readonly previous: string,
  ) {}

  /** A recorder when `release` is newer than the real release loaded; null otherwise (nothing is recorded). */
  static async of(store: Store, release: string, synthetic: boolean): Promise<MongoChangeRecorder | null> {
    const loaded = await loadedRelease(store);
    if (synthetic || !loaded || loaded.synthetic || !(release > loaded.release)) return null;
    return new MongoChangeRecorder(store.collection(MONGO_CHANGES), store.collection('companies'), release, loaded.release);
  }

  /** Before `docs` replace what is stored under their CNPJs: their changes, durably. */
  async before(docs: CompanyDoc[]): Promise<void> {
    const stored = await this.companies.find({ _id: { $in: docs.map((d) => d._id) } }, { projection: PROJECTION }).toArray();
    const old = new Map(stored.map((doc) => [doc._id, doc]));
    const found: ChangeDoc[] = [];
    for (const doc of docs) {
      const before = old.get(doc._id);
      // Already this release's (an earlier run of the import wrote it, after recording its changes).
      if (before?.release === this.release) continue;
      if (!before) {
        found.push(this.change(doc._id, 'opened', {}, doc));
        continue;
      }
      if (changeHash(before) === changeHash(doc)) continue;
      for (const { kind, fields } of diffRecords(before, doc)) found.push(this.change(doc._id, kind, fields, doc));
    }
    await this.write(found);
  }

  /** Before the establishments this import did not write are deleted: their removal, a page at a time. */
  async beforeRemoving(run: string): Promise<void> {
    const gone = this.companies.find({ importRun: { $ne: run } }, { projection: PROJECTION, sort: { _id: 1 } });
    let page: ChangeDoc[] = [];
    for await (const doc of gone) {
      page.push(this.change(doc._id, 'removed', {}, doc));
      if (page.length >= REMOVALS_PER_WRITE) (await this.write(page), (page = []));
    }
    await this.write(page);
  }

  /** Keeps the last 24 releases' changes. */
  async prune(): Promise<void> {
    const releases = (await this.changes.aggregate<{ _id: string }>([{ $group: { _id: '$release' } }, { $sort: { _id: -1 } }]).toArray()).map((r) => r._id);
    const old = releases.slice(KEPT_RELEASES);
    if (old.length > 0) await this.changes.deleteMany({ release: { $in: old } });
  }

  private change(cnpj: string, kind: StoredChange['kind'], fields: StoredChange['fields'], record: object): ChangeDoc {
    return { _id: `${this.release}|${cnpj}|${kind}`, cnpj, release: this.release, previousRelease: this.previous, kind, fields, company: changeCompany(record) };
  }

  private async write(changes: ChangeDoc[]): Promise<void> {
    if (changes.length === 0) return;
    await this.changes.bulkWrite(
      changes.map((change) => ({ updateOne: { filter: { _id: change._id }, update: { $setOnInsert: change }, upsert: true } })),
      { ordered: false },
    );
  }
}

/** Candidates read at a time when filters must also match (most may not). */
const CANDIDATES = 500;

/** A page of the feed from `company_changes`; with `filter`, each candidate's establishment must match it in `companies`. */
export async function mongoChangePage(
  changes: Collection<ChangeDoc>,
  companies: Collection<CompanyDoc>,
  query: ChangeQuery,
  filter: Filter<CompanyDoc> | null,
): Promise<ChangePage> {
  const base: Filter<ChangeDoc> = { release: { $in: query.releases } };
  if (query.kinds) base.kind = { $in: query.kinds };
  if (query.cnpjs) base.cnpj = { $in: query.cnpjs };
  const found: StoredChange[] = [];
  let after = query.after;
  for (;;) {
    const position: Filter<ChangeDoc> = after
      ? {
          $or: [
            { release: { $lt: after.release } },
            { release: after.release, cnpj: { $gt: after.cnpj } },
            { release: after.release, cnpj: after.cnpj, kind: { $gt: after.kind } },
          ],
        }
      : {};
    const want = filter ? CANDIDATES : query.limit + 1 - found.length;
    const batch = await changes.find({ $and: [base, position] }, { sort: { release: -1, cnpj: 1, kind: 1 }, limit: want }).toArray();
    let kept = batch;
    if (filter && batch.length > 0) {
      const cnpjs = [...new Set(batch.map((c) => c.cnpj))];
      const matching = await companies.find({ $and: [filter, { _id: { $in: cnpjs } }] }, { projection: { _id: 1 } }).toArray();
      const ids = new Set(matching.map((m) => m._id));
      kept = batch.filter((c) => ids.has(c.cnpj));
    }
    for (const { _id, ...change } of kept) {
      found.push(change);
      if (found.length > query.limit) break;
    }
    const last = batch[batch.length - 1];
    if (found.length > query.limit || batch.length < want || !last) break;
    after = { release: last.release, cnpj: last.cnpj, kind: last.kind };
  }
  const page = found.slice(0, query.limit);
  const end = page[page.length - 1];
  return { changes: page, more: found.length > query.limit && end ? { release: end.release, cnpj: end.cnpj, kind: end.kind } : null };
}
