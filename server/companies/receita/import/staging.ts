/**
 * Where the per-company files wait for their establishments. Estabelecimentos rows carry only
 * the 8-character root of their company, so Empresas, Simples and Sócios are read first and
 * kept by root until every establishment has been joined.
 *
 * On MongoDB they wait in a collection, so the importer's memory stays bounded for a full
 * release (~67M roots). The embedded store keeps every document in memory anyway, so there
 * they wait in memory as compact text, which costs no journal.
 */
import type { Store } from '../../../store/port.ts';
import type { RootData } from './records.ts';

export interface Staging {
  /** Whether staged data survives the process, so a resumed import need not read it again. */
  readonly durable: boolean;
  /** An Empresas or Simples row's raw fields; a later row of the same file and root replaces it. */
  put(entries: Array<{ root: string; data: RootData }>): Promise<void>;
  /** `key` identifies the Sócios line, so staging a line twice (after a resume) keeps one. */
  addPartners(entries: Array<{ root: string; key: string; partner: string }>): Promise<void>;
  get(roots: string[]): Promise<Map<string, RootData>>;
  clear(): Promise<void>;
}

/**
 * Per root, what the files said, as compact text: each file's raw fields joined into one string
 * (an Empresas row, a Simples row, each partner's row). Turning them into fields is left to
 * where the documents are built (records.ts, possibly a worker thread), where text crosses over
 * more cheaply than objects. One entry per root, handed out as it is (callers only read it):
 * each establishment costs one lookup and no copy (three lookups and a copy were a tenth of the
 * import's main thread).
 */
export class MemoryStaging implements Staging {
  readonly durable = false;
  private readonly roots = new Map<string, RootData>();

  private entry(root: string): RootData {
    let entry = this.roots.get(root);
    if (entry === undefined) this.roots.set(root, (entry = {}));
    return entry;
  }

  async put(entries: Array<{ root: string; data: RootData }>): Promise<void> {
    for (const { root, data } of entries) {
      const entry = this.entry(root);
      if (data.company !== undefined) entry.company = data.company;
      if (data.simples !== undefined) entry.simples = data.simples;
    }
  }

  async addPartners(entries: Array<{ root: string; key: string; partner: string }>): Promise<void> {
    for (const { root, partner } of entries) {
      const entry = this.entry(root);
      if (entry.partners === undefined) entry.partners = [partner];
      else entry.partners.push(partner);
    }
  }

  async get(roots: string[]): Promise<Map<string, RootData>> {
    const found = new Map<string, RootData>();
    for (const root of roots) {
      const entry = this.roots.get(root);
      if (entry !== undefined) found.set(root, entry);
    }
    return found;
  }

  async clear(): Promise<void> {
    this.roots.clear();
  }
}

interface StagedDoc {
  _id: string;
  release: string;
  data?: RootData;
  partners?: Record<string, string>;
}

export class StoreStaging implements Staging {
  readonly durable = true;
  private readonly collection;

  constructor(
    store: Store,
    private readonly release: string,
  ) {
    this.collection = store.collection<StagedDoc>('registry_staging');
  }

  async put(entries: Array<{ root: string; data: RootData }>): Promise<void> {
    if (entries.length === 0) return;
    await this.collection.bulkWrite(
      entries.map(({ root, data }) => ({
        updateOne: {
          filter: { _id: root },
          update: {
            $set: { release: this.release, ...Object.fromEntries(Object.entries(data).map(([k, v]) => [`data.${k}`, v])) },
          },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  async addPartners(entries: Array<{ root: string; key: string; partner: string }>): Promise<void> {
    if (entries.length === 0) return;
    await this.collection.bulkWrite(
      entries.map(({ root, key, partner }) => ({
        updateOne: {
          filter: { _id: root },
          update: { $set: { release: this.release, [`partners.${key}`]: partner } },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  async get(roots: string[]): Promise<Map<string, RootData>> {
    const docs = await this.collection.find({ _id: { $in: roots }, release: this.release }).toArray();
    return new Map(docs.map((doc) => [doc._id, { ...doc.data, partners: Object.values(doc.partners ?? {}) }]));
  }

  async clear(): Promise<void> {
    await this.collection.deleteMany({});
  }
}
