/**
 * Where the per-company files wait for their establishments. Estabelecimentos rows carry only
 * the 8-character root of their company, so Empresas, Simples and Sócios are read first and
 * kept by root until every establishment has been joined.
 *
 * On MongoDB they wait in a collection, and in a release file's own staging file on the embedded
 * store, so the importer's memory stays bounded for a full release (~67M roots). In memory
 * (as compact text) where the store itself holds every document anyway.
 */
import Database from 'better-sqlite3';
import type { Store } from '../../store/port.ts';
import type { RootData } from './records.ts';
import { companyStageGather, companyStageSchema, PARTNER_SEPARATOR } from '../../companies/registry/schema.ts';
import { attachRowsFiles } from './rows-files.ts';

export interface Staging {
  /** Whether staged data survives the process, so a resumed import need not read it again. */
  readonly durable: boolean;
  /**
   * An Empresas or Simples row's raw fields; a later row of the same file and root replaces it.
   * `pos`: its place in the release (registry/staged-row.ts's `stagedPos`).
   */
  put(entries: Array<{ root: string; data: RootData; pos: number }>): Promise<void>;
  /** `key` (and `pos`) identifies the Sócios line, so staging a line twice (after a resume) keeps one. */
  addPartners(entries: Array<{ root: string; key: string; partner: string; pos: number }>): Promise<void>;
  get(roots: string[]): Promise<Map<string, RootData>>;
  clear(): Promise<void>;
  /** Every per-company file is staged: what the first `get` would prepare may begin now, beside what is read next. */
  staged?(): void;
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

/** The statement `rootsOf` runs, on the staging file attached as `schema`. */
export const ROOTS_OF = (schema: string) => `SELECT root, company, simples, partners FROM ${schema}.roots WHERE root IN (SELECT value FROM json_each(?))`;

/** What was staged for these roots (those with any), by root: one statement for the batch, where a statement per root cost twice as much (issue 41). */
export function rootsOf(statement: Database.Statement, roots: string[]): Map<string, RootData> {
  const found = new Map<string, RootData>();
  // As arrays: objects named by column cost more to make.
  for (const [root, company, simples, partners] of statement.raw().all(JSON.stringify(roots)) as Array<[string, string | null, string | null, string | null]>) {
    const data: RootData = {};
    if (company !== null) data.company = company;
    if (simples !== null) data.simples = simples;
    if (partners !== null) data.partners = partners.split(PARTNER_SEPARATOR);
    found.set(root, data);
  }
  return found;
}

/** The statements that stage a per-company row in `schema` (the staging file, or a worker thread's rows file). */
export const INSERT_COMPANY = (schema: string) => `INSERT INTO ${schema}.company (root, company, simples, pos) VALUES (?, ?, ?, ?)`;
export const INSERT_PARTNER = (schema: string) => `INSERT INTO ${schema}.partner (root, partner, pos) VALUES (?, ?, ?)`;

/** Runs `write` as one transaction (the writer's, which names a full disk). */
type Transaction = (write: () => void) => void;

/**
 * Gathers the staged rows by root (schema.ts's `companyStageGather`), on `db` where the staging
 * file is attached as `stage` and the worker threads' rows files as `rows`: those not gathered
 * yet, if any (a resumed run may have staged some after an earlier gathering).
 */
function gather(db: Database.Database, transaction: Transaction, rows: string[]): void {
  const schemas = ['stage', ...rows];
  const staged = schemas.some((schema) => db.prepare(`SELECT EXISTS (SELECT 1 FROM ${schema}.company) OR EXISTS (SELECT 1 FROM ${schema}.partner)`).pluck().get() === 1);
  const gathered = db.prepare("SELECT 1 FROM stage.sqlite_schema WHERE name = 'roots'").get() !== undefined;
  if (staged || !gathered) transaction(() => db.exec(companyStageGather(schemas)));
}

/**
 * The page cache of a gathering in a worker thread, beside the writer's own: small, as its sorts
 * spill to temporary files anyway (256 MiB was no faster at 1M).
 */
const GATHER_CACHE_KIB = 32 * 1024;

/**
 * `gather` on a connection of its own to the staging file at `path` and the rows files at
 * `rowsPaths` (in a worker thread: see FileStaging's `staged`).
 */
export function gatherStaged(path: string, rowsPaths: string[]): void {
  const db = new Database(':memory:');
  try {
    const rows = attachRowsFiles(db, rowsPaths);
    db.prepare('ATTACH DATABASE ? AS stage').run(path);
    for (const schema of ['stage', ...rows]) {
      db.pragma(`${schema}.journal_mode = TRUNCATE`);
      db.pragma(`${schema}.synchronous = OFF`);
    }
    db.pragma(`stage.cache_size = -${GATHER_CACHE_KIB}`);
    db.exec(companyStageSchema('stage'));
    gather(db, (write) => db.transaction(write)(), rows);
  } finally {
    db.close();
  }
}

/**
 * The staging file of an import into a release file (registry/schema.ts's `companyStageSchema`):
 * on disk and durable, so a resumed import need not read the per-company files again. Worker
 * threads that read per-company files stage their rows in their own rows files instead
 * (thread-staging.ts), gathered with these.
 */
export class FileStaging implements Staging {
  readonly durable = true;
  private readonly insertCompany: Database.Statement;
  private readonly insertPartner: Database.Statement;
  private read: Database.Statement | undefined;

  /** A gathering begun beside (`staged`), which the first read waits for. */
  private gathering: Promise<void> | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly transaction: Transaction,
    /** The worker threads' rows files, attached to `db`: their schemas' names. */
    private readonly rowsFiles: () => string[],
    /** Gathers the staged rows in another thread, given the staging file to itself meanwhile. */
    private readonly gatherBeside?: () => Promise<void>,
  ) {
    db.exec(companyStageSchema('stage'));
    this.insertCompany = db.prepare(INSERT_COMPANY('stage'));
    this.insertPartner = db.prepare(INSERT_PARTNER('stage'));
  }

  async put(entries: Array<{ root: string; data: RootData; pos: number }>): Promise<void> {
    this.transaction(() => {
      for (const { root, data, pos } of entries) this.insertCompany.run(root, data.company ?? null, data.simples ?? null, pos);
    });
  }

  async addPartners(entries: Array<{ root: string; key: string; partner: string; pos: number }>): Promise<void> {
    this.transaction(() => {
      for (const { root, partner, pos } of entries) this.insertPartner.run(root, partner, pos);
    });
  }

  /**
   * Every per-company file is staged: the rows are gathered now in another thread, while this one
   * reads the tax-regime files (into the release file, not the staging file).
   */
  staged(): void {
    if (!this.gatherBeside || this.gathering || this.read) return;
    this.gathering = this.gatherBeside();
    // Failing, it fails the first read; an import stopped before that has failed already.
    this.gathering.catch(() => undefined);
  }

  async get(roots: string[]): Promise<Map<string, RootData>> {
    await this.gathering;
    return rootsOf(this.gathered(), roots);
  }

  /** Every staged row gathered (by the thread beside, or here), so that worker threads may read the roots. */
  async prepared(): Promise<void> {
    await this.gathering;
    this.gathered();
  }

  /** The gathering begun beside, if any, ended: until then its thread holds the staging file. */
  async settled(): Promise<void> {
    await this.gathering;
  }

  /** Nothing to clear: the staging file is this import's own, and goes with it. */
  async clear(): Promise<void> {}

  /**
   * The first read of a run gathers the staged rows by root (every per-company file has been
   * staged by then), and whatever a resumed run staged after an earlier gathering.
   */
  private gathered(): Database.Statement {
    if (this.read) return this.read;
    gather(this.db, this.transaction, this.rowsFiles());
    return (this.read = this.db.prepare(ROOTS_OF('stage')));
  }
}
