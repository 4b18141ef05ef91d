/**
 * Enrich selected rows: a row with a person (a name with a company or domain, an email or a
 * LinkedIn profile) goes through hydrate, 25 leads a request and four requests in one fetchAll;
 * a row with only a company (domain, name or CNPJ) through enrich, in parallel. Results land in
 * named output columns; the status cell says which provider filled what and what it cost. A row
 * whose wanted columns are all filled is skipped unless the user asked to overwrite.
 */
import { maxItems, ProspectaClient } from '../api/client.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import type { EnrichResult } from '../../shared/types.ts';
import type { HttpPort } from '../api/http.ts';
import { recogniseColumns, type InputField } from './columns.ts';
import type { InputRow, Processor, RowResult } from './job.ts';
import type { Clock } from './ports.ts';
import { sendAll } from './send.ts';

const LEADS_PER_HYDRATE = maxItems('hydratePeople', 'leads');
const HYDRATES_PER_FETCH = 4;

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
  overwrite?: boolean;
}

type Known = Partial<Record<InputField, string>>;
type FieldSources = EnrichResult['sources'];

function knownOf(row: InputRow, columns: Partial<Record<InputField, number>>): Known {
  const known: Known = {};
  for (const [field, column] of Object.entries(columns) as Array<[InputField, number]>) {
    const value = (row.cells[column - 1] ?? '').trim();
    if (value) known[field] = value;
  }
  if (!known.fullName && known.firstName && known.lastName) known.fullName = `${known.firstName} ${known.lastName}`;
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

export function enrichProcessor(client: ProspectaClient, http: HttpPort, clock: Clock): Processor<EnrichOptions> {
  return {
    chunkRows: LEADS_PER_HYDRATE * HYDRATES_PER_FETCH,
    run(rows, headers, job) {
      const options = job.options;
      const columns = recogniseColumns(headers);
      const labels = options.fields.map((f) => FIELD_LABELS[f] ?? f);
      const results: RowResult[] = rows.map(() => ({ status: '' }));
      const people: Array<{ index: number; known: Known }> = [];
      const companies: Array<{ index: number; known: Known }> = [];

      rows.forEach((row, index) => {
        // A row whose output columns are already filled costs nothing again.
        const filled = labels.every((label) => {
          const column = headers.findIndex((h) => h.trim() === label);
          return column >= 0 && (row.cells[column] ?? '').trim() !== '';
        });
        if (filled && !options.overwrite) {
          results[index] = { status: '– already complete', skipped: true };
          return;
        }
        const known = knownOf(row, columns);
        // A person's lead carries no CNPJ: one malformed cell would fail the whole request of 25.
        if (isPerson(known)) people.push({ index, known: { ...known, cnpj: undefined } });
        else if (isCompany(known)) companies.push({ index, known });
        else results[index] = { status: '– nothing to look up (no email, LinkedIn, name with company, or domain)', skipped: true };
      });

      const leadBatches: Array<typeof people> = [];
      for (let i = 0; i < people.length; i += LEADS_PER_HYDRATE) leadBatches.push(people.slice(i, i + LEADS_PER_HYDRATE));
      const hydrated = sendAll(
        client,
        http,
        clock,
        'hydratePeople',
        leadBatches.map((batch) => ({ leads: batch.map((p) => p.known), ...(options.maxCredits !== undefined ? { maxCredits: options.maxCredits } : {}) })),
      );
      leadBatches.forEach((batch, k) => {
        const answer = hydrated[k]!;
        batch.forEach((p, j) => {
          if (!answer.ok) {
            results[p.index] = { status: `✗ ${answer.error}`, failed: true };
            return;
          }
          const lead = answer.value.results[j];
          if (!lead?.enriched) {
            results[p.index] = { status: lead && 'providers' in lead ? '– nothing found · 0 credits' : '– not processed (credit cap)', skipped: true };
            return;
          }
          results[p.index] = {
            values: Object.fromEntries(options.fields.flatMap((f) => (lead[f] !== undefined ? [[FIELD_LABELS[f] ?? f, text(lead[f])]] : []))),
            status: `✓ ${sourcesText(lead.sources, options.fields) || 'found'} · 1 credit`,
            credits: 1,
          };
        });
      });

      const enriched = sendAll(
        client,
        http,
        clock,
        'enrich',
        companies.map((c) => ({
          ...c.known,
          goalFields: options.fields,
          ...(options.providerOrder ? { providerOrder: options.providerOrder } : {}),
          ...(options.maxCredits !== undefined ? { maxCredits: options.maxCredits } : {}),
        })),
      );
      companies.forEach((c, k) => {
        const answer = enriched[k]!;
        if (!answer.ok) {
          results[c.index] = { status: `✗ ${answer.error}`, failed: true };
          return;
        }
        const { record, sources, creditsCharged } = answer.value;
        const values = Object.fromEntries(options.fields.flatMap((f) => (record[f] !== undefined && sources[f] !== 'input' ? [[FIELD_LABELS[f] ?? f, text(record[f])]] : [])));
        results[c.index] = Object.keys(values).length
          ? { values, status: `✓ ${sourcesText(sources, options.fields)} · ${creditsCharged} credit${creditsCharged === 1 ? '' : 's'}`, credits: creditsCharged }
          : { status: '– nothing found · 0 credits', skipped: true };
      });
      return results;
    },
  };
}
