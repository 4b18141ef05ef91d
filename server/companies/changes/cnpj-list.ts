/** A list of CNPJs a client sent (the changes feed, a watch): each must be one, or one 400 names them all. */
import { checkCnpj } from '../../../shared/cnpj.ts';
import { ServiceError } from '../../errors.ts';

const MAX_NAMED = 5;

/**
 * The CNPJs normalized (punctuation dropped, upper case), first occurrences only. Malformed ones
 * and those whose check digits are wrong are 400 `invalid_cnpj`, naming the first few by index:
 * a watch or a feed of a CNPJ that cannot exist would silently never match.
 */
export function validCnpjs(inputs: readonly string[], field = 'cnpjs'): string[] {
  const bad: string[] = [];
  const valid = new Set<string>();
  inputs.forEach((input, i) => {
    const check = checkCnpj(input);
    if (check.status === 'valid') valid.add(check.cnpj);
    else bad.push(`${field}[${i}] ${JSON.stringify(input.slice(0, 40))}`);
  });
  if (bad.length > 0) {
    const more = bad.length > MAX_NAMED ? ` and ${bad.length - MAX_NAMED} more` : '';
    throw new ServiceError(
      'invalid_cnpj',
      `${bad.slice(0, MAX_NAMED).join(', ')}${more}: not a valid CNPJ (14 characters, letters or digits then 2 check digits that match; punctuation allowed)`,
    );
  }
  return [...valid];
}
