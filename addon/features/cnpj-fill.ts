/**
 * CNPJ fill: the CNPJ column of the selected rows → one batch lookup a row (so a server job's
 * result names its row) → company columns. Identifiers that are not CNPJs at all are marked here
 * without being sent.
 */
import { normalizeCnpj } from '../../shared/cnpj.ts';
import type { Company } from '../../shared/types.ts';
import { columnsOf, type ColumnChoice } from './columns.ts';
import { prices } from './rules.ts';
import { StopJob, type Prepared, type Processor, type RowResult } from './job.ts';

/** Lookups in one fetchAll; a larger run becomes a server job. */
const PER_FETCH = 100;

export interface CnpjOptions {
  /** The header of the CNPJ column, as the analyst confirmed it; detected from the headers when absent. */
  columns?: Pick<ColumnChoice, 'cnpj'>;
}

const SIZES: Record<NonNullable<Company['fiscalSize']>, string> = { '01': 'Microempresa', '03': 'Empresa de pequeno porte', '05': 'Demais', '00': 'Não informado' };

/** Output column label → how to read it from a company. */
export const CNPJ_COLUMNS: Array<[string, (c: Company) => string]> = [
  ['Razão social', (c) => c.name],
  ['Nome fantasia', (c) => c.tradeName ?? ''],
  ['Situação cadastral', (c) => c.registrationStatus ?? ''],
  ['Atividade principal', (c) => (c.mainActivity ? `${c.mainActivity.code} ${c.mainActivity.description}` : '')],
  ['Cidade/UF', (c) => [c.address.city, c.address.state].filter(Boolean).join('/')],
  ['Telefone', (c) => c.phones.map((p) => p.replace(/^(\d{2})(\d{4,5})(\d{4})$/, '($1) $2-$3')).join(', ')],
  ['Email', (c) => c.email ?? ''],
  ['Capital social', (c) => (typeof c.capital === 'number' ? c.capital.toFixed(2) : '')],
  ['Porte', (c) => (c.fiscalSize ? SIZES[c.fiscalSize] : '')],
  ['Sócios', (c) => c.partners.map((p) => (p.qualification ? `${p.name} (${p.qualification})` : p.name)).join('; ')],
];

export function cnpjProcessor(): Processor<CnpjOptions, 'lookupCnpjBatch'> {
  return {
    operation: 'lookupCnpjBatch',
    perFetch: PER_FETCH,
    prepare(rows, headers, options) {
      const column = columnsOf(headers, options.columns).cnpj;
      if (!column) throw new StopJob('No CNPJ column: name a column "CNPJ".');
      return rows.map((row): Prepared<'lookupCnpjBatch'> => {
        const raw = row.cells[column - 1] ?? '';
        const cnpj = normalizeCnpj(raw);
        if (!raw.trim()) return { result: { status: '– no CNPJ', skipped: true } };
        if (!cnpj) return { result: { status: '✗ not a CNPJ', failed: true } };
        return { input: { cnpjs: [cnpj] } };
      });
    },
    read(answer): RowResult {
      const company = answer.results[0];
      if (company) {
        // The lookup's answer states no charge: a company found costs the registry's price.
        const credits = prices().cnpj;
        return {
          values: Object.fromEntries(CNPJ_COLUMNS.map(([label, read]) => [label, read(company)])),
          status: `✓ ${company.source} · ${credits} credit${credits === 1 ? '' : 's'}`,
          credits,
        };
      }
      return answer.invalid.length ? { status: '✗ invalid check digits', failed: true } : { status: '– not found', skipped: true };
    },
  };
}
