/**
 * The company search's filter (search-plan.ts, written for a document store) as SQL over a release
 * file, and how it is run. Every filter becomes a condition on the establishment's `facts` row;
 * those that can name few rows (an index range, a CNAE, a word, a partner's document) can also
 * drive the query. Pages are in CNPJ order, so the query either walks `facts` in key order
 * testing each row (fast when matches are dense: a page needs few rows), or starts from the most
 * selective driver's keys and tests those (fast when they are few). Which: each driver's keys are
 * counted up to a cap that grows with the release; below it the driver wins.
 *
 * A full-text condition (a name or partner word) is never counted: its index yields keys in key
 * order, so it drives by streaming, the page being its first matches that pass the other tests,
 * and stops there. Counting it would cost the whole query (every match of two common words), and
 * testing it per row of a walk runs the query once per row (a second, against a millisecond
 * streamed, for two common words at 200,000 establishments). Beside one, another driver wins only
 * when it holds fewer than TEXT_RIVAL_CAP keys, each then tested with the full-text query.
 */
import type Database from 'better-sqlite3';
import type { CompanyDoc } from '../company-record.ts';
import type { Filter } from '../../store/port.ts';
import { dateNumber } from './staged-row.ts';

type Param = string | number | bigint;

interface Condition {
  /** SQL over `facts f`. */
  sql: string;
  params: Param[];
  /** The keys it matches (a `k` column), from an index. */
  driver?: { sql: string; params: Param[] };
  /** A full-text table and query whose matches come in key order (its rowid). */
  text?: { table: string; match: string };
}

export interface SearchQuery {
  run(db: Database.Database, limit: number): bigint[];
}

/** Below this many keys a driver beats walking `facts` (see the module's comment). */
function driverCap(establishments: number): number {
  return Math.min(50_000, Math.max(5_000, Math.round(establishments / 2_000)));
}

/** Below this many keys, an index beats streaming a full-text condition (see the module's comment). */
const TEXT_RIVAL_CAP = 1_000;

const list = (values: Param[]) => values.map(() => '?').join(', ');

function inValues(field: string, value: unknown): Param[] {
  if (typeof value === 'object' && value !== null && '$in' in value) return (value as { $in: Param[] }).$in;
  if (typeof value === 'string' || typeof value === 'number') return [value];
  throw new Error(`the registry cannot filter ${field} by ${JSON.stringify(value)}`);
}

function column(name: string, value: unknown, indexed: boolean): Condition {
  const values = inValues(name, value);
  if (values.length === 0) return { sql: '0', params: [] };
  const sql = values.length === 1 ? `f.${name} = ?` : `f.${name} IN (${list(values)})`;
  return { sql, params: values, ...(indexed ? { driver: { sql: `SELECT k FROM facts WHERE ${sql.replaceAll('f.', '')}`, params: values } } : {}) };
}

function range(name: string, value: unknown, convert: (bound: Param) => Param = (bound) => bound): Condition {
  const given = value as { $gte?: Param; $lte?: Param };
  const bounds = { $gte: given.$gte === undefined ? undefined : convert(given.$gte), $lte: given.$lte === undefined ? undefined : convert(given.$lte) };
  const parts: string[] = [];
  const params: Param[] = [];
  if (bounds.$gte !== undefined) (parts.push(`${name} >= ?`), params.push(bounds.$gte));
  if (bounds.$lte !== undefined) (parts.push(`${name} <= ?`), params.push(bounds.$lte));
  const where = parts.join(' AND ');
  return { sql: parts.map((p) => `f.${p}`).join(' AND '), params, driver: { sql: `SELECT k FROM facts WHERE ${where}`, params } };
}

function flag(name: string, value: unknown): Condition {
  if (typeof value !== 'boolean') throw new Error(`the registry cannot filter ${name} by ${JSON.stringify(value)}`);
  return { sql: `f.${name} = ?`, params: [value ? 1 : 0] };
}

/** Any of `values` among a column of values written between spaces. */
function spaced(name: string, values: Param[]): Condition {
  if (values.length === 0) return { sql: '0', params: [] };
  return { sql: `(${values.map(() => `instr(f.${name}, ?) > 0`).join(' OR ')})`, params: values.map((v) => ` ${v} `) };
}

/**
 * Every word (`$all`), or words starting so (`$regex` `^prefix`, see search-plan.ts), as a
 * full-text query: each quoted, so none is read as an operator.
 */
function words(table: 'names' | 'partners', value: unknown): Condition {
  const given = value as { $all?: string[]; $regex?: string };
  const quoted = (w: string) => `"${w.replaceAll('"', '""')}"`;
  const match =
    given.$regex !== undefined && given.$regex.startsWith('^') ? `${quoted(given.$regex.slice(1))}*` : (given.$all ?? []).map(quoted).join(' AND ');
  if (match === '') throw new Error(`the registry cannot search ${table} by ${JSON.stringify(value)}`);
  return { sql: `EXISTS (SELECT 1 FROM ${table} WHERE ${table} MATCH ? AND rowid = f.k)`, params: [match], text: { table, match } };
}

function conditionOf(field: string, value: unknown): Condition {
  switch (field) {
    case 'address.state':
      return column('state', value, true);
    case 'search.city':
      return column('city', value, true);
    case 'registrationStatus':
      return column('status', value, false);
    case 'establishment':
      return column('kind', value, false);
    case 'fiscalSize':
      return column('size', value, false);
    case 'legalNature.code':
      return column('nature', value, true);
    case 'search.federativeEntity': {
      // Its index holds the establishments that have one (schema.ts): the driver says so.
      const condition = column('entity', value, true);
      return { ...condition, driver: { sql: `${condition.driver!.sql} AND entity IS NOT NULL`, params: condition.driver!.params } };
    }
    case 'capital': {
      const { sql, params } = range('capital', value);
      return { sql, params };
    }
    case 'openingDate':
      return range('opened', value, (date) => dateNumber(String(date)));
    case 'simplesOption':
      return flag('simples', value);
    case 'meiOption':
      return flag('mei', value);
    case 'search.hasPhone':
      return flag('phone', value);
    case 'search.hasEmail':
      return flag('email', value);
    case 'search.partnerAgeBands':
      return spaced('ages', inValues(field, value));
    case 'search.taxRegimes':
      return spaced('regimes', inValues(field, value));
    case 'search.name':
      return words('names', value);
    case 'search.partners':
      return words('partners', value);
    case 'search.activities': {
      const codes = inValues(field, value).map(Number);
      if (codes.length === 0) return { sql: '0', params: [] };
      const where = `cnae IN (${list(codes)})`;
      return {
        sql: `EXISTS (SELECT 1 FROM activity a WHERE a.k = f.k AND a.${where})`,
        params: codes,
        driver: { sql: `SELECT DISTINCT k FROM activity WHERE ${where}`, params: codes },
      };
    }
    case 'search.partnerDocuments': {
      const docs = inValues(field, value);
      const where = `doc IN (${list(docs)})`;
      return {
        sql: `EXISTS (SELECT 1 FROM partner_doc p WHERE p.k = f.k AND p.${where})`,
        params: docs,
        driver: { sql: `SELECT DISTINCT k FROM partner_doc WHERE ${where}`, params: docs },
      };
    }
    default:
      throw new Error(`the registry cannot filter on ${field}`);
  }
}

function conditionsOf(filter: Record<string, unknown>): Condition[] {
  const conditions: Condition[] = [];
  for (const [field, value] of Object.entries(filter)) {
    if (field === '$and') for (const part of value as Array<Record<string, unknown>>) conditions.push(...conditionsOf(part));
    else conditions.push(conditionOf(field, value));
  }
  return conditions;
}

export function searchQuery(
  filter: Filter<CompanyDoc>,
  establishments: number,
  after?: { value: bigint; inclusive: boolean },
  cap = driverCap(establishments),
): SearchQuery {
  const conditions = conditionsOf(filter as Record<string, unknown>);
  const from = after ? { sql: `k ${after.inclusive ? '>=' : '>'} ?`, params: [after.value] as Param[] } : { sql: '1', params: [] as Param[] };
  // Cheap column tests first, so SQLite evaluates the subqueries on fewer rows.
  conditions.sort((a, b) => Number(a.sql.includes('SELECT')) - Number(b.sql.includes('SELECT')));
  const where = [after ? `f.${from.sql}` : '1', ...conditions.map((c) => c.sql)].join(' AND ');
  const params = [...from.params, ...conditions.flatMap((c) => c.params)];
  return {
    run(db, limit) {
      const text = conditions.find((c) => c.text);
      const enough = text ? Math.min(cap, TEXT_RIVAL_CAP) : cap;
      let best: { sql: string; params: Param[]; count: number } | undefined;
      for (const { driver } of conditions) {
        if (!driver) continue;
        const sql = `SELECT * FROM (${driver.sql}) WHERE ${from.sql}`;
        const most = best?.count ?? enough;
        // LIMIT -1: no limit (a cap of Infinity, which tests use to always drive).
        const count = db.prepare(`SELECT count(*) FROM (${sql} LIMIT ?)`).pluck().get(...driver.params, ...from.params, Number.isFinite(most) ? most : -1) as number;
        if (count < (best?.count ?? enough)) best = { sql, params: [...driver.params, ...from.params], count };
      }
      const statement = best
        ? db.prepare(`SELECT f.k FROM (${best.sql}) d CROSS JOIN facts f ON f.k = d.k WHERE ${where} ORDER BY f.k LIMIT ?`).bind(...best.params, ...params, limit)
        : text
          ? textDriven(db, text, conditions, after, limit)
          : db.prepare(`SELECT f.k FROM facts f NOT INDEXED WHERE ${where} ORDER BY f.k LIMIT ?`).bind(...params, limit);
      return statement.pluck().safeIntegers().all() as bigint[];
    },
  };
}

/**
 * The page driven by a full-text condition: its matches in key order (FTS5 gives rowids in order,
 * so ORDER BY rowid needs no sort and LIMIT stops early), each tested against the other conditions.
 */
function textDriven(
  db: Database.Database,
  text: Condition,
  conditions: Condition[],
  after: { value: bigint; inclusive: boolean } | undefined,
  limit: number,
): Database.Statement {
  const { table, match } = text.text!;
  const others = conditions.filter((c) => c !== text);
  const where = [`t.${table} MATCH ?`, ...(after ? [`t.rowid ${after.inclusive ? '>=' : '>'} ?`] : []), ...others.map((c) => c.sql)].join(' AND ');
  const params = [match, ...(after ? [after.value] : []), ...others.flatMap((c) => c.params)];
  return db.prepare(`SELECT f.k FROM ${table} t CROSS JOIN facts f ON f.k = t.rowid WHERE ${where} ORDER BY t.rowid LIMIT ?`).bind(...params, limit);
}

/** The filter as one SQL condition over `facts f` (the change feed joins it with its own rows). */
export function filterSql(filter: Filter<CompanyDoc>): { sql: string; params: Param[] } {
  const conditions = conditionsOf(filter as Record<string, unknown>);
  if (conditions.length === 0) return { sql: '1', params: [] };
  return { sql: conditions.map((c) => `(${c.sql})`).join(' AND '), params: conditions.flatMap((c) => c.params) };
}
