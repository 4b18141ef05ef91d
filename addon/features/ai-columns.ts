/**
 * AI column and research column: an instruction or a question, the context columns chosen by
 * the user, one value per row written to an output column. Research citations go into the
 * answer cell's note. Rows are sent in parallel, 20 per fetchAll; more become a server job.
 */
import { limitOf } from '../api/client.ts';
import { isOwnColumn, recogniseColumns, sameLabel } from './columns.ts';
import type { Processor, RowResult } from './job.ts';

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

export function aiColumnProcessor(): Processor<AiColumnOptions, 'aiColumn'> {
  return {
    operation: 'aiColumn',
    perFetch: PER_FETCH,
    prepare(rows, headers, o) {
      return rows.map((row) => {
        const context = rowContext(row.cells, headers, o.context, o.output, AI_CELL_CHARS);
        // `instruction` is the operation's own field; a column of that name goes in under another.
        return { input: { ...Object.fromEntries(Object.entries(context).map(([k, v]) => [k === 'instruction' ? 'instruction (column)' : k, v])), instruction: o.instruction } };
      });
    },
    read(value, o): RowResult {
      // The server says what it charged: creditsCharged is always there.
      const credits = value.creditsCharged;
      return { values: { [o.output]: value.value }, status: `✓ ${value.cached ? `from cache · ${credits} credits` : `${credits} credit${credits === 1 ? '' : 's'}`}`, credits };
    },
  };
}

export function researchProcessor(): Processor<ResearchOptions, 'research'> {
  return {
    operation: 'research',
    perFetch: PER_FETCH,
    prepare(rows, headers, o) {
      const columns = recogniseColumns(headers);
      return rows.map((row) => {
        const cell = (field: keyof typeof columns) => (columns[field] ? (row.cells[columns[field]! - 1] ?? '').trim() : '');
        const context = rowContext(row.cells, headers, o.context, o.output, RESEARCH_CELL_CHARS);
        return {
          input: {
            prompt: o.prompt,
            webSearch: o.webSearch,
            ...(cell('fullName') ? { name: cell('fullName') } : {}),
            ...(cell('companyName') ? { company: cell('companyName') } : {}),
            ...(cell('companyDomain') ? { website: cell('companyDomain') } : {}),
            ...(cell('linkedinUrl') ? { linkedinUrl: cell('linkedinUrl') } : {}),
            columns: Object.entries(context).map(([label, value], i) => ({ id: `c${i + 1}`, label, value })),
          },
        };
      });
    },
    read(r, o): RowResult {
      const credits = r.creditsCharged;
      return {
        values: { [o.output]: r.answer },
        status: `✓ research${o.webSearch ? ' with web search' : ''} · ${credits} credits`,
        credits,
        ...(r.citations.length ? { note: { label: o.output, text: r.citations.map((c) => `${c.title}\n${c.url}`).join('\n\n') } } : {}),
      };
    },
  };
}
