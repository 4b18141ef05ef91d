/**
 * Which columns of a sheet hold what, from the shared list of headers in English, Portuguese and
 * Spanish (shared/column-headers.ts), in the names of the fields the add-on sends.
 */
import { headerMeaning, type HeaderMeaning } from '../../shared/column-headers.ts';
import { foldText } from '../../shared/fold-text.ts';

export type InputField = 'email' | 'linkedinUrl' | 'fullName' | 'firstName' | 'lastName' | 'companyName' | 'companyDomain' | 'cnpj' | 'phone';

const AS_INPUT: Partial<Record<HeaderMeaning, InputField>> = {
  email: 'email',
  linkedinUrl: 'linkedinUrl',
  name: 'fullName',
  firstName: 'firstName',
  lastName: 'lastName',
  company: 'companyName',
  domain: 'companyDomain',
  cnpj: 'cnpj',
  phone: 'phone',
};

/** Input field → its column (1-based), for the headers that name one; the first column wins. */
export function recogniseColumns(headers: string[]): Partial<Record<InputField, number>> {
  const found: Partial<Record<InputField, number>> = {};
  headers.forEach((header, i) => {
    const meaning = headerMeaning(header);
    const field = meaning && AS_INPUT[meaning];
    if (field && found[field] === undefined) found[field] = i + 1;
  });
  return found;
}

export const sameLabel = (a: string, b: string) => foldText(a) === foldText(b);

/** The add-on's own columns (status, hidden row ids, pulled state): never row data or context. */
export const isOwnColumn = (label: string) => label.trim().startsWith('prospecta');
