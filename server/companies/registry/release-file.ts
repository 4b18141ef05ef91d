/**
 * One release of the registry, as its file holds it (schema.ts), opened read-only: documents by
 * CNPJ as their JSON (decoded from the compact encoding, never parsed), their tax regimes, and the
 * search's keyset pages (registry-query.ts). Opening reads only the file's small `meta` table, so
 * a server starts in the same time whatever the registry's size; SQLite reads pages as asked, and
 * the process keeps a bounded cache of them.
 */
import Database from 'better-sqlite3';
import type { TaxRegime } from '../../../shared/types.ts';
import type { CompanyRecord } from '../company-record.ts';
import type { Filter } from '../../store/port.ts';
import type { CompanyDoc } from '../company-record.ts';
import { cnpjKey, cnpjKeys, cnpjOfKey } from './cnpj-key.ts';
import { RecordDecoder, type CodecTables } from './record-codec.ts';
import { searchQuery } from './registry-query.ts';

/** What a release file says of itself (its `meta` table), and what the pointer to it repeats. */
export interface ReleaseMeta {
  release: string;
  establishments: number;
  importedAt: string;
  complete: boolean;
  synthetic: boolean;
}

/** `{"cnpj":"` and the 14 characters of a CNPJ and its closing quote: how each document starts. */
const OWN_CNPJ_BYTES = 24;

/** Pages the process may keep per open release file (SQLite's page cache; the OS caches the rest, outside the process). */
const CACHE_KIB = 32 * 1024;

export class DamagedReleaseFile extends Error {}

export class ReleaseFile {
  readonly meta: ReleaseMeta;
  private readonly db: Database.Database;
  private readonly decoder: RecordDecoder;
  /** Rows by key: documents, and tax regimes. */
  private readonly bodies: KeyedRows<[bigint, Buffer]>;
  private readonly regimes: KeyedRows<[bigint, bigint, string, string, bigint | null]>;

  constructor(readonly path: string) {
    let db: Database.Database | undefined;
    try {
      this.db = db = new Database(path, { readonly: true, fileMustExist: true });
      this.db.pragma(`cache_size = -${CACHE_KIB}`);
      const meta = new Map(
        (this.db.prepare('SELECT name, value FROM meta').all() as Array<{ name: string; value: string }>).map((row) => [row.name, row.value]),
      );
      if (meta.get('state') !== 'ready') throw new Error('its import did not finish');
      this.meta = JSON.parse(meta.get('release')!) as ReleaseMeta;
      this.decoder = new RecordDecoder(JSON.parse(meta.get('codec')!) as CodecTables);
      this.bodies = new KeyedRows(this.db, 'SELECT k, body FROM doc');
      this.regimes = new KeyedRows(this.db, 'SELECT k, year, scp, form, entries FROM tax_regime');
    } catch (err) {
      db?.close();
      throw new DamagedReleaseFile(`the registry file ${path} cannot be read (${(err as Error).message}): import the release again`);
    }
  }

  /**
   * Each CNPJ found, as the JSON of its record (without tax regimes). The document's own CNPJ is
   * checked against the one asked, so a damaged page never answers another company.
   */
  json(cnpjs: readonly string[]): Map<string, Buffer> {
    const keys = cnpjKeys(cnpjs);
    const bodies = new Map<bigint, Buffer>();
    for (const [key, body] of this.bodies.of(keys)) bodies.set(key, body);
    const found = new Map<string, Buffer>();
    // In the order asked (the search's pages are in CNPJ order, a batch in its own).
    for (const [cnpj, key] of keys.keys) {
      const body = bodies.get(key);
      if (body === undefined) continue;
      let json: Buffer;
      try {
        json = this.decoder.bytes(body);
      } catch (err) {
        throw new DamagedReleaseFile(`the registry file ${this.path} holds a damaged document under ${cnpj} (${(err as Error).message}): import the release again`);
      }
      if (json.toString('latin1', 0, OWN_CNPJ_BYTES) !== `{"cnpj":"${cnpj}"`) throw new DamagedReleaseFile(`the registry file ${this.path} holds another document under ${cnpj}: import the release again`);
      found.set(cnpj, json);
    }
    return found;
  }

  /** Each CNPJ's tax regimes, newest year first (those with any). */
  taxRegimes(cnpjs: readonly string[]): Map<string, TaxRegime[]> {
    const keys = cnpjKeys(cnpjs);
    const byKey = new Map<bigint, TaxRegime[]>();
    for (const [key, year, scp, form, entries] of this.regimes.of(keys)) {
      const regime = { year: Number(year), form, scpCnpj: scp === '0' ? null : scp, bookkeepingEntries: entries === null ? null : Number(entries) };
      const list = byKey.get(key);
      if (list) list.push(regime);
      else byKey.set(key, [regime]);
    }
    const found = new Map<string, TaxRegime[]>();
    for (const [cnpj, key] of keys.keys) {
      const list = byKey.get(key);
      if (list) found.set(cnpj, list.sort((a, b) => b.year - a.year || a.form.localeCompare(b.form)));
    }
    return found;
  }

  /** The records, each with its tax regimes. */
  records(cnpjs: readonly string[]): CompanyRecord[] {
    const regimes = this.taxRegimes(cnpjs);
    return [...this.json(cnpjs).entries()].map(([cnpj, json]) => {
      const record = JSON.parse(json.toString('utf8')) as CompanyRecord;
      record.taxRegimes = regimes.get(cnpj) ?? [];
      return record;
    });
  }

  /**
   * The CNPJs of the first `limit` establishments matching `filter` after `after` (from it, when
   * `inclusive`), in CNPJ order. `driverCap`: see registry-query.ts (tests set it, to read the
   * file both ways).
   */
  search(filter: Filter<CompanyDoc>, limit: number, after?: string, inclusive = false, driverCap?: number): string[] {
    const query = searchQuery(filter, this.meta.establishments, after === undefined ? undefined : afterKey(after, inclusive), driverCap);
    return query.run(this.db, limit).map(cnpjOfKey);
  }

  close(): void {
    this.db.close();
  }
}

/**
 * One query's rows for a set of keys (`cnpjKeys`): a batch's keys go in as one JSON array, one
 * call where a call per key cost twice as much; a single key is looked up by itself, json_each's
 * table costing more than the lookup (10 of 30 µs).
 */
class KeyedRows<Row extends unknown[]> {
  private readonly one: Database.Statement<[bigint], Row>;
  private readonly many: Database.Statement<[string], Row>;

  constructor(db: Database.Database, select: string) {
    this.one = db.prepare(`${select} WHERE k = ?`).raw().safeIntegers() as Database.Statement<[bigint], Row>;
    this.many = db.prepare(`${select} WHERE k IN (SELECT value FROM json_each(?))`).raw().safeIntegers() as Database.Statement<[string], Row>;
  }

  of({ keys, json }: { keys: Map<string, bigint>; json: string }): Iterable<Row> {
    return keys.size === 1 ? this.one.all(keys.values().next().value!) : this.many.iterate(json);
  }
}

/** The key to continue from: the cursors of search pages hold the last CNPJ given. */
function afterKey(after: string, inclusive: boolean): { value: bigint; inclusive: boolean } {
  const key = cnpjKey(after);
  if (key === null) throw new Error(`a search continues after a CNPJ, not ${JSON.stringify(after)}`);
  return { value: key, inclusive };
}
