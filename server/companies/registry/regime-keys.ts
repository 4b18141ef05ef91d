/**
 * The tax regimes' search keys of an import's establishments (tax-regimes.ts's `regimeKeys`), read
 * from the rows a release file holds: by the writer's thread (release-writer.ts) or a worker
 * thread's own connection (receita/import/thread-staging.ts).
 */
import type Database from 'better-sqlite3';
import { regimeKeys } from '../tax-regimes.ts';
import { cnpjKeys } from './cnpj-key.ts';

/** The statement `regimeKeysOf` runs, on the release file attached as `schema`; prepared with `safeIntegers()` (keys are up to 62 bits). */
export const REGIMES_OF = (schema: string) =>
  `SELECT k, year, form FROM ${schema}.tax_regime WHERE k IN (SELECT value FROM json_each(?)) ORDER BY k, year, scp, form`;

/** The search keys of the CNPJs that have any tax-regime row, each key once, in the rows' order (year, then form). */
export function regimeKeysOf(statement: Database.Statement, cnpjs: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const { keys, json } = cnpjKeys(cnpjs);
  if (keys.size === 0) return found;
  const cnpjOf = new Map([...keys].map(([cnpj, key]) => [key, cnpj]));
  const byCnpj = new Map<string, Set<string>>();
  for (const { k, year, form } of statement.all(json) as Array<{ k: bigint; year: bigint; form: string }>) {
    const cnpj = cnpjOf.get(k)!;
    let set = byCnpj.get(cnpj);
    if (!set) byCnpj.set(cnpj, (set = new Set()));
    for (const key of regimeKeys(form, Number(year))) set.add(key);
  }
  for (const [cnpj, set] of byCnpj) found.set(cnpj, [...set]);
  return found;
}
