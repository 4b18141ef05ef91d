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
import type { Partner } from '../company-record.ts';

export interface Staging {
  /** Whether staged data survives the process, so a resumed import need not read it again. */
  readonly durable: boolean;
  put(entries: Array<{ root: string; data: RootData }>): Promise<void>;
  /** `key` identifies the Sócios line, so staging a line twice (after a resume) keeps one. */
  addPartners(entries: Array<{ root: string; key: string; partner: Partner }>): Promise<void>;
  get(roots: string[]): Promise<Map<string, StagedRoot>>;
  clear(): Promise<void>;
}

/**
 * A root's staged data as `get` gives it: the data itself, or memory staging's compact text of
 * it, read by `rootData` where the documents are built (possibly a worker thread, where text
 * crosses over more cheaply than objects and the parsing is off the reading thread).
 */
export type StagedRoot = RootData | PackedRoot;

interface PackedRoot {
  packed: true;
  company?: string;
  options?: number;
  partners?: string;
}

export function rootData(staged: StagedRoot | undefined): RootData | undefined {
  if (staged === undefined || !('packed' in staged)) return staged;
  const data: RootData = staged.company === undefined ? {} : (JSON.parse(staged.company) as RootData);
  if (staged.options !== undefined) Object.assign(data, unpackOptions(staged.options));
  if (staged.partners !== undefined) data.partners = JSON.parse(`[${staged.partners}]`) as Partner[];
  return data;
}

/**
 * Per root, what the files said, as compact text: the 715,000 roots of a 1M-establishment release
 * took 1.27 KiB each as objects, 530 B each as JSON. Each file's part is kept apart, so staging a
 * row never reads back what another file staged: Empresas as one flat JSON string (appending
 * pieces kept a cons cell per piece), the Simples options as a small number, and the partners as
 * JSON objects joined by commas (a root has one or two, so a cons cell or two). It is parsed back
 * (a microsecond or two) where the documents are built: see `rootData`.
 */
export class MemoryStaging implements Staging {
  readonly durable = false;
  private readonly companies = new Map<string, string>();
  private readonly simples = new Map<string, number>();
  private readonly partners = new Map<string, string>();

  async put(entries: Array<{ root: string; data: RootData }>): Promise<void> {
    for (const { root, data } of entries) {
      const { simplesOption, meiOption, ...company } = data;
      if (simplesOption !== undefined || meiOption !== undefined) {
        const staged = this.simples.get(root);
        const options = staged === undefined ? {} : unpackOptions(staged);
        this.simples.set(root, packOptions({ ...options, ...dropUndefined({ simplesOption, meiOption }) }));
      }
      if (Object.keys(company).length === 0) continue;
      const staged = this.companies.get(root);
      this.companies.set(root, JSON.stringify(staged === undefined ? company : { ...(JSON.parse(staged) as RootData), ...company }));
    }
  }

  async addPartners(entries: Array<{ root: string; key: string; partner: Partner }>): Promise<void> {
    for (const { root, partner } of entries) {
      const staged = this.partners.get(root);
      const json = JSON.stringify(partner);
      this.partners.set(root, staged === undefined ? json : `${staged},${json}`);
    }
  }

  async get(roots: string[]): Promise<Map<string, StagedRoot>> {
    const found = new Map<string, StagedRoot>();
    for (const root of roots) {
      const company = this.companies.get(root);
      const options = this.simples.get(root);
      const partners = this.partners.get(root);
      if (company === undefined && options === undefined && partners === undefined) continue;
      found.set(root, { packed: true, ...dropUndefined({ company, options, partners }) });
    }
    return found;
  }

  async clear(): Promise<void> {
    this.companies.clear();
    this.simples.clear();
    this.partners.clear();
  }
}

type Options = Pick<RootData, 'simplesOption' | 'meiOption'>;
const OPTION_CODES = [undefined, null, false, true] as const;

/** Two options of four states each (absent, null, no, yes) in one small integer. */
function packOptions({ simplesOption, meiOption }: Options): number {
  return OPTION_CODES.indexOf(simplesOption) * 4 + OPTION_CODES.indexOf(meiOption);
}

function unpackOptions(code: number): Options {
  return dropUndefined({ simplesOption: OPTION_CODES[code >> 2], meiOption: OPTION_CODES[code & 3] });
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
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

  async get(roots: string[]): Promise<Map<string, StagedRoot>> {
    const docs = await this.collection.find({ _id: { $in: roots }, release: this.release }).toArray();
    return new Map(
      docs.map((doc) => [doc._id, { ...doc.data, partners: Object.values(doc.partners ?? {}) }]),
    );
  }

  async clear(): Promise<void> {
    await this.collection.deleteMany({});
  }
}
