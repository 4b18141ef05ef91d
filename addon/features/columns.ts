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

/** Input field → the header label the analyst chose for it ('' for none), as the sidebar sends it. */
export type ColumnChoice = Partial<Record<InputField, string>>;

/**
 * The columns a run reads: the analyst's choice where given (found by label, so a column moved
 * since is still found; '' reads nothing for that field), the detected column elsewhere. A column
 * in `outputs` is never detected as input: a run writing its Email column again must not send the
 * email it wrote last time as what it knows.
 */
export function columnsOf(headers: string[], chosen: ColumnChoice = {}, outputs: string[] = []): Partial<Record<InputField, number>> {
  const columns = recogniseColumns(headers.map((h) => (outputs.some((o) => sameLabel(o, h)) ? '' : h)));
  for (const [field, label] of Object.entries(chosen) as Array<[InputField, string]>) {
    const index = label ? headers.findIndex((h) => sameLabel(h, label)) : -1;
    if (index >= 0) columns[field] = index + 1;
    else delete columns[field];
  }
  return columns;
}

/** Each input field's detected column, by its header label, for the sidebar to show and edit. */
export function detectedColumns(headers: string[]): ColumnChoice {
  return Object.fromEntries(Object.entries(recogniseColumns(headers)).map(([field, column]) => [field, headers[column - 1]!.trim()]));
}

export const sameLabel = (a: string, b: string) => foldText(a) === foldText(b);

/** The add-on's own columns (status, hidden row ids, pulled state): never row data or context. */
export const isOwnColumn = (label: string) => label.trim().startsWith('prospecta');
