import { ApiError } from '../http/errors.ts';
import { checkCnpj } from '../registry-data/cnpj.ts';
import { companyView } from '../registry-data/companies.ts';
import type { Handler } from './types.ts';

const MAX_NAMED = 5;

/**
 * Up to 500 CNPJs: malformed identifiers are a 400 naming them, valid-looking ones with wrong
 * check digits go to `invalid`, the first occurrence of a duplicate is kept, and only companies
 * found are charged.
 */
export const lookupCnpjBatch: Handler<'lookupCnpjBatch'> = async ({ cnpjs }, ctx) => {
  const malformed: string[] = [];
  const valid: string[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  cnpjs.forEach((input, i) => {
    const check = checkCnpj(input);
    if (check.status === 'malformed') {
      malformed.push(`cnpjs[${i}] ${JSON.stringify(input.slice(0, 40))}`);
      return;
    }
    if (seen.has(check.cnpj)) return;
    seen.add(check.cnpj);
    (check.status === 'valid' ? valid : invalid).push(check.cnpj);
  });
  if (malformed.length > 0) {
    const named = malformed.slice(0, MAX_NAMED).join(', ');
    const more = malformed.length > MAX_NAMED ? ` and ${malformed.length - MAX_NAMED} more` : '';
    throw new ApiError(
      400,
      'invalid_cnpj',
      `${named}${more}: not a CNPJ (14 characters, letters or digits then 2 check digits; punctuation allowed)`,
    );
  }

  const found = await ctx.services.companies.byCnpj(valid);
  const results = valid.flatMap((cnpj) => {
    const doc = found.get(cnpj);
    return doc ? [companyView(doc)] : [];
  });
  await ctx.charge(results.length, `${results.length} of ${valid.length} CNPJs found`);
  return { results, notFound: valid.filter((cnpj) => !found.has(cnpj)), invalid };
};
