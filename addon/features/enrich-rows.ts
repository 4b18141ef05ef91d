/**
 * Enrich selected rows: each row with a person (an email, a LinkedIn profile, a name with a
 * company or domain) or only a company (domain, name or CNPJ) is one enrich request, so the
 * workspace's enrichment memory answers a subject it already paid for (`cached`, 0 credits)
 * within `maxAge`, and `providerOrder` applies to people and companies alike. Results land in
 * named output columns; the status cell says which provider filled what and what it cost. A row
 * whose wanted columns are all filled is skipped unless the user asked to overwrite.
 */
import type { InputOf } from '../../shared/operations/index.ts';
import type { EnrichResult } from '../../shared/types.ts';
import { columnsOf, type ColumnChoice, type InputField } from './columns.ts';
import type { InputRow, Prepared, Processor, RowResult } from './job.ts';

/** Requests in one fetchAll; a larger run becomes a server job. */
const PER_FETCH = 50;

/** Output columns for the enrichable fields. */
export const FIELD_LABELS: Record<string, string> = {
  email: 'Email',
  emailStatus: 'Email status',
  personalEmail: 'Personal email',
  phone: 'Phone',
  fullName: 'Full name',
  title: 'Title',
  seniority: 'Seniority',
  department: 'Department',
  linkedinUrl: 'LinkedIn',
  location: 'Location',
  country: 'Country',
  companyName: 'Company',
  companyDomain: 'Domain',
  companyLinkedinUrl: 'Company LinkedIn',
  industry: 'Industry',
  companySize: 'Company size',
  tradeName: 'Nome fantasia',
  registrationStatus: 'Situação cadastral',
  companyPhones: 'Company phones',
  companyEmail: 'Company email',
};

type EnrichInput = InputOf<'enrich'>;

export interface EnrichOptions {
  /** The fields wanted, as `goalFields` names them. */
  fields: NonNullable<EnrichInput['goalFields']>;
  providerOrder?: EnrichInput['providerOrder'];
  maxCredits?: number;
  /** Seconds a stored answer may be old to be given again for nothing; the server's default when absent. */
  maxAge?: number;
  overwrite?: boolean;
  /** Input field → the header of its column, as the analyst confirmed it; detected from the headers when absent. */
  columns?: ColumnChoice;
}

type Known = Partial<Record<InputField, string>>;
type FieldSources = EnrichResult['sources'];

/** The identifiers enrich takes, from the row's cells. */
function knownOf(row: InputRow, columns: Partial<Record<InputField, number>>): Known {
  const known: Known = {};
  for (const [field, column] of Object.entries(columns) as Array<[InputField, number]>) {
    const value = (row.cells[column - 1] ?? '').trim();
    if (value) known[field] = value;
  }
  if (!known.fullName && known.firstName && known.lastName) known.fullName = `${known.firstName} ${known.lastName}`;
  delete known.firstName;
  delete known.lastName;
  return known;
}

const isPerson = (k: Known) => Boolean(k.email || k.linkedinUrl || (k.fullName && (k.companyDomain || k.companyName)));
const isCompany = (k: Known) => Boolean(k.companyDomain || k.companyName || k.cnpj);

const text = (value: unknown) => (value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

/** "hunter: email, title · apollo: seniority" */
function sourcesText(sources: FieldSources, wanted: EnrichOptions['fields']): string {
  const by = new Map<string, string[]>();
  for (const field of wanted) {
    const source = sources?.[field];
    if (source && source !== 'input') by.set(source, [...(by.get(source) ?? []), field]);
  }
  return [...by].map(([provider, fields]) => `${provider}: ${fields.join(', ')}`).join(' · ');
}

const credits = (n: number) => `${n} credit${n === 1 ? '' : 's'}`;

export function enrichProcessor(): Processor<EnrichOptions, 'enrich'> {
  return {
    operation: 'enrich',
    perFetch: PER_FETCH,
    prepare(rows, headers, options) {
      const labels = options.fields.map((f) => FIELD_LABELS[f] ?? f);
      const columns = columnsOf(headers, options.columns, options.overwrite ? labels : []);
      return rows.map((row): Prepared<'enrich'> => {
        // A row whose output columns are already filled costs nothing again.
        const filled = labels.every((label) => {
          const column = headers.findIndex((h) => h.trim() === label);
          return column >= 0 && (row.cells[column] ?? '').trim() !== '';
        });
        if (filled && !options.overwrite) return { result: { status: '– already complete', skipped: true } };
        const known = knownOf(row, columns);
        if (!isPerson(known) && !isCompany(known)) return { result: { status: '– nothing to look up (no email, LinkedIn, name with company, or domain)', skipped: true } };
        return {
          input: {
            ...known,
            goalFields: options.fields,
            ...(options.providerOrder ? { providerOrder: options.providerOrder } : {}),
            ...(options.maxCredits !== undefined ? { maxCredits: options.maxCredits } : {}),
            ...(options.maxAge !== undefined ? { maxAge: options.maxAge } : {}),
          },
        };
      });
    },
    read({ record, sources, creditsCharged, cached }, options): RowResult {
      const values = Object.fromEntries(options.fields.flatMap((f) => (record[f] !== undefined && record[f] !== null && sources[f] !== 'input' ? [[FIELD_LABELS[f] ?? f, text(record[f])]] : [])));
      const cost = `${cached ? 'cached · ' : ''}${credits(creditsCharged)}`;
      return Object.keys(values).length
        ? { values, status: `✓ ${sourcesText(sources, options.fields) || 'found'} · ${cost}`, credits: creditsCharged }
        : { status: `– nothing found · ${cost}`, skipped: true, credits: creditsCharged };
    },
  };
}
