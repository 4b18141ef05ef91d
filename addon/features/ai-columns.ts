/**
 * AI column and research column: an instruction or a question, the context columns chosen by
 * the user, one value per row written to an output column. Research citations go into the
 * answer cell's note. Rows are sent in parallel, 20 per fetchAll.
 */
import { limitOf, ProspectaClient } from '../api/client.ts';
import type { HttpPort } from '../api/http.ts';
import { isOwnColumn, recogniseColumns, sameLabel } from './columns.ts';
import type { Processor, RowResult } from './job.ts';
import type { Clock } from './ports.ts';
import { sendAll } from './send.ts';

const PER_FETCH = 20;
/** The most characters of one context cell each operation takes. */
const AI_CELL_CHARS = limitOf('aiColumn', '*', 'maxLength');
const RESEARCH_CELL_CHARS = limitOf('research', 'columns.[].value', 'maxLength');

export interface AiColumnOptions {
  instruction: string;
  /** Header labels of the columns given as context (all columns when empty). */
  context: string[];
  output: string;
}

export interface ResearchOptions {
  prompt: string;
  context: string[];
  output: string;
  webSearch: boolean;
}

/**
 * The chosen cells of a row, by header label, each cut to `maxChars`; empty cells, the add-on's
 * own columns and the output column (matched as the output is found: sameLabel) left out.
 */
function rowContext(cells: string[], headers: string[], chosen: string[], output: string, maxChars: number): Record<string, string> {
  const context: Record<string, string> = {};
  headers.forEach((header, i) => {
    const label = header.trim();
    if (!label || sameLabel(label, output) || isOwnColumn(label)) return;
    if (chosen.length > 0 && !chosen.includes(label)) return;
    const value = (cells[i] ?? '').trim();
    if (value) context[label] = value.slice(0, maxChars);
  });
  return context;
}

export function aiColumnProcessor(client: ProspectaClient, http: HttpPort, clock: Clock): Processor<AiColumnOptions> {
  return {
    chunkRows: PER_FETCH,
    run(rows, headers, job) {
      const o = job.options;
      const contexts = rows.map((row) => rowContext(row.cells, headers, o.context, o.output, AI_CELL_CHARS));
      // `instruction` is the operation's own field; a column of that name goes in under another.
      const inputs = contexts.map((c) => ({ ...Object.fromEntries(Object.entries(c).map(([k, v]) => [k === 'instruction' ? 'instruction (column)' : k, v])), instruction: o.instruction }));
      const answers = sendAll(client, http, clock, 'aiColumn', inputs);
      return answers.map((a): RowResult => {
        if (!a.ok) return { status: `✗ ${a.error}`, failed: true };
        // The server says what it charged: creditsCharged is always there.
        const value = a.value;
        const credits = value.creditsCharged;
        return { values: { [o.output]: value.value }, status: `✓ ${value.cached ? `from cache · ${credits} credits` : `${credits} credit${credits === 1 ? '' : 's'}`}`, credits };
      });
    },
  };
}

export function researchProcessor(client: ProspectaClient, http: HttpPort, clock: Clock): Processor<ResearchOptions> {
  return {
    chunkRows: PER_FETCH,
    run(rows, headers, job) {
      const o = job.options;
      const columns = recogniseColumns(headers);
      const inputs = rows.map((row) => {
        const cell = (field: keyof typeof columns) => (columns[field] ? (row.cells[columns[field]! - 1] ?? '').trim() : '');
        const context = rowContext(row.cells, headers, o.context, o.output, RESEARCH_CELL_CHARS);
        return {
          prompt: o.prompt,
          webSearch: o.webSearch,
          ...(cell('fullName') ? { name: cell('fullName') } : {}),
          ...(cell('companyName') ? { company: cell('companyName') } : {}),
          ...(cell('companyDomain') ? { website: cell('companyDomain') } : {}),
          ...(cell('linkedinUrl') ? { linkedinUrl: cell('linkedinUrl') } : {}),
          columns: Object.entries(context).map(([label, value], i) => ({ id: `c${i + 1}`, label, value })),
        };
      });
      const answers = sendAll(client, http, clock, 'research', inputs);
      return answers.map((a): RowResult => {
        if (!a.ok) return { status: `✗ ${a.error}`, failed: true };
        const r = a.value;
        const credits = r.creditsCharged;
        return {
          values: { [o.output]: r.answer },
          status: `✓ research${o.webSearch ? ' with web search' : ''} · ${credits} credits`,
          credits,
          ...(r.citations.length ? { note: { label: o.output, text: r.citations.map((c) => `${c.title}\n${c.url}`).join('\n\n') } } : {}),
        };
      });
    },
  };
}
