/**
 * Where the per-company files wait for their establishments. Estabelecimentos rows carry only
 * the 8-character root of their company, so Empresas, Simples and Sócios are read first and
 * kept by root until every establishment has been joined.
 *
 * On MongoDB they wait in a collection, so the importer's memory stays bounded for a full
 * release (~67M roots). The embedded store keeps every document in memory anyway, so there
 * they wait in memory as compact text, which costs no journal.
 */
import type { Store } from '../../store/port.ts';
import type { RootData } from './records.ts';
import type { Partner } from '../companies.ts';

export interface Staging {
  /** Whether staged data survives the process, so a resumed import need not read it again. */
  readonly durable: boolean;
  put(entries: Array<{ root: string; data: RootData }>): Promise<void>;
  /** `key` identifies the Sócios line, so staging a line twice (after a resume) keeps one. */
  addPartners(entries: Array<{ root: string; key: string; partner: Partner }>): Promise<void>;
  get(roots: string[]): Promise<Map<string, RootData>>;
  clear(): Promise<void>;
}

/**
 * Per root, the JSON of what the files said: the 715,000 roots of a 1M-establishment release
 * took 1.27 KiB each as objects, 530 B each as text. Each entry is one flat string (appending
 * pieces kept a cons cell per piece); parsing it back costs a microsecond or two per join.
 */
export class MemoryStaging implements Staging {
  readonly durable = false;
  private readonly data = new Map<string, string>();
  /** Each root's partners, as a JSON array. */
  private readonly partners = new Map<string, string>();

  async put(entries: Array<{ root: string; data: RootData }>): Promise<void> {
    for (const { root, data } of entries) {
      const staged = this.data.get(root);
      this.data.set(root, JSON.stringify(staged === undefined ? data : { ...(JSON.parse(staged) as RootData), ...data }));
    }
  }

  async addPartners(entries: Array<{ root: string; key: string; partner: Partner }>): Promise<void> {
    for (const { root, partner } of entries) {
      const staged = this.partners.get(root);
      this.partners.set(root, JSON.stringify(staged === undefined ? [partner] : [...(JSON.parse(staged) as Partner[]), partner]));
    }
  }

  async get(roots: string[]): Promise<Map<string, RootData>> {
    const found = new Map<string, RootData>();
    for (const root of roots) {
      const data = this.data.get(root);
      const partners = this.partners.get(root);
      if (data === undefined && partners === undefined) continue;
      const staged: RootData = data === undefined ? {} : (JSON.parse(data) as RootData);
      if (partners !== undefined) staged.partners = JSON.parse(partners) as Partner[];
      found.set(root, staged);
    }
    return found;
  }

  async clear(): Promise<void> {
    this.data.clear();
    this.partners.clear();
  }
}

interface StagedDoc {
  _id: string;
  release: string;
  data?: RootData;
  partners?: Record<string, Partner>;
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

  async addPartners(entries: Array<{ root: string; key: string; partner: Partner }>): Promise<void> {
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
    return new Map(
      docs.map((doc) => [doc._id, { ...doc.data, partners: Object.values(doc.partners ?? {}) }]),
    );
  }

  async clear(): Promise<void> {
    await this.collection.deleteMany({});
  }
}
