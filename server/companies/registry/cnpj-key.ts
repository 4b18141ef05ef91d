/**
 * A CNPJ as the 64-bit integer key of the registry's files: its first 12 characters (digits, or
 * from July 2026 also letters) read in base 36. Digits come before letters in both, so keys sort
 * as CNPJs do, and the check digits, which the 12 determine, need no room. An integer key makes the
 * documents' table SQLite's own B-tree (a lookup is one probe) and doubles as full-text rowid.
 */
import { cnpjCheckDigits } from '../../../shared/cnpj.ts';

const RADIX6 = 36 ** 6;

function value(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 90) return code - 55;
  return -1;
}

/** The key of a 14-character CNPJ (as normalizeCnpj gives it), or null for anything else. */
export function cnpjKey(cnpj: string): bigint | null {
  if (cnpj.length !== 14) return null;
  let high = 0;
  let low = 0;
  for (let i = 0; i < 12; i++) {
    const v = value(cnpj.charCodeAt(i));
    if (v < 0) return null;
    if (i < 6) high = high * 36 + v;
    else low = low * 36 + v;
  }
  return BigInt(high) * BigInt(RADIX6) + BigInt(low);
}

/**
 * The keys of `cnpjs` (those that are CNPJs, each once) by CNPJ, and as the JSON array a statement
 * reads with `k IN (SELECT value FROM json_each(?))`: one call for a batch, where a call per CNPJ
 * cost twice as much.
 */
export function cnpjKeys(cnpjs: readonly string[]): { keys: Map<string, bigint>; json: string } {
  const keys = new Map<string, bigint>();
  for (const cnpj of cnpjs) {
    const key = cnpjKey(cnpj);
    if (key !== null) keys.set(cnpj, key);
  }
  return { keys, json: `[${[...keys.values()].join(',')}]` };
}

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** The CNPJ a key stands for. */
export function cnpjOfKey(key: bigint): string {
  let rest = key;
  let first12 = '';
  for (let i = 0; i < 12; i++) {
    first12 = DIGITS[Number(rest % 36n)]! + first12;
    rest /= 36n;
  }
  return first12 + cnpjCheckDigits(first12);
}
