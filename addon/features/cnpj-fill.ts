/**
 * CNPJ fill: the CNPJ column of the selected rows → the batch lookup, 500 CNPJs a request and
 * four requests in one fetchAll → company columns. Identifiers that are not CNPJs at all are
 * marked here without being sent (the server refuses a whole batch that holds one).
 */
import { normalizeCnpj } from '../../shared/cnpj.ts';
import type { Company } from '../../shared/types.ts';
import { maxItems, ProspectaClient } from '../api/client.ts';
import type { HttpPort } from '../api/http.ts';
import { recogniseColumns } from './columns.ts';
import { StopJob, type Processor, type RowResult } from './job.ts';
import type { Clock } from './ports.ts';
import { sendAll } from './send.ts';

const BATCH = maxItems('lookupCnpjBatch', 'cnpjs');
const BATCHES_PER_FETCH = 4;

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

export function cnpjProcessor(client: ProspectaClient, http: HttpPort, clock: Clock): Processor<Record<string, never>> {
  return {
    chunkRows: BATCH * BATCHES_PER_FETCH,
    run(rows, headers) {
      const column = recogniseColumns(headers).cnpj;
      if (!column) throw new StopJob('No CNPJ column: name a column "CNPJ".');
      const results: RowResult[] = rows.map(() => ({ status: '' }));
      const wanted: Array<{ index: number; cnpj: string }> = [];
      rows.forEach((row, index) => {
        const raw = row.cells[column - 1] ?? '';
        const cnpj = normalizeCnpj(raw);
        if (!raw.trim()) results[index] = { status: '– no CNPJ', skipped: true };
        else if (!cnpj) results[index] = { status: '✗ not a CNPJ', failed: true };
        else wanted.push({ index, cnpj });
      });
      const batches: Array<Array<{ index: number; cnpj: string }>> = [];
      for (let i = 0; i < wanted.length; i += BATCH) batches.push(wanted.slice(i, i + BATCH));
      const answers = sendAll(client, http, clock, 'lookupCnpjBatch', batches.map((b) => ({ cnpjs: b.map((w) => w.cnpj) })));
      batches.forEach((batch, k) => {
        const answer = answers[k]!;
        if (!answer.ok) {
          for (const w of batch) results[w.index] = { status: `✗ ${answer.error}`, failed: true };
          return;
        }
        const found = new Map(answer.value.results.map((c) => [c.cnpj, c]));
        const invalid = new Set(answer.value.invalid);
        for (const w of batch) {
          const company = found.get(w.cnpj);
          if (company) {
            results[w.index] = {
              values: Object.fromEntries(CNPJ_COLUMNS.map(([label, read]) => [label, read(company)])),
              status: `✓ ${company.source} · 1 credit`,
              credits: 1,
            };
          } else results[w.index] = invalid.has(w.cnpj) ? { status: '✗ invalid check digits', failed: true } : { status: '– not found', skipped: true };
        }
      });
      return results;
    },
  };
}
