/**
 * CNPJ identifiers, numeric and alphanumeric (IN RFB 2.229/2024: letters in the first 12
 * positions from July 2026, check digits still digits). One module for the importer, the batch
 * lookup, the search and the add-on.
 *
 * Check digits: modulo 11 over each character's value (its ASCII code − 48, so digits keep
 * their values and A = 17 … Z = 42), weights 2..9 from the right; a remainder below 2 gives 0.
 */
/**
 * 14 characters without punctuation: letters or digits, then two check digits (IN RFB 2.229/2024).
 * Here, not with the schemas that use it, so the importer's worker threads need not load TypeBox.
 */
export const CNPJ_PATTERN = '^[0-9A-Z]{12}[0-9]{2}$';

/** What punctuation a user may write a CNPJ with: `12.ABC.345/01DE-35`. */
const PUNCTUATION = /[.\/\-\s]/g;
const SHAPE = new RegExp(CNPJ_PATTERN);

export type CnpjCheck =
  | { status: 'valid'; cnpj: string }
  /** Well formed, but the check digits do not match (or a repeated-digit number like 00000000000000). */
  | { status: 'invalid'; cnpj: string }
  /** Not a CNPJ at all: wrong length or characters. */
  | { status: 'malformed' };

/** Upper-cased and unpunctuated, or null when it cannot be a CNPJ (wrong length or characters). */
export function normalizeCnpj(input: string): string | null {
  const compact = input.replace(PUNCTUATION, '').toUpperCase();
  return SHAPE.test(compact) ? compact : null;
}

function checkDigit(chars: string): number {
  let sum = 0;
  for (let i = 0; i < chars.length; i++) {
    const weight = ((chars.length - 1 - i) % 8) + 2;
    sum += (chars.charCodeAt(i) - 48) * weight;
  }
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/** The two check digits of the first 12 characters of a CNPJ. */
export function cnpjCheckDigits(first12: string): string {
  const dv1 = checkDigit(first12);
  const dv2 = checkDigit(first12 + dv1);
  return `${dv1}${dv2}`;
}

export function checkCnpj(input: string): CnpjCheck {
  const cnpj = normalizeCnpj(input);
  if (!cnpj) return { status: 'malformed' };
  // Repeated digits pass the arithmetic (00000000000000) but were never issued.
  const repeated = /^(\d)\1{13}$/.test(cnpj);
  const valid = !repeated && cnpj.slice(12) === cnpjCheckDigits(cnpj.slice(0, 12));
  return valid ? { status: 'valid', cnpj } : { status: 'invalid', cnpj };
}
