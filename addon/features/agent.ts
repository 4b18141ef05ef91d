/**
 * The sidebar's Agent tab: one message to the agent and its whole answer (Apps Script cannot read
 * a stream, so the chat is asked for JSON), optionally with the selected rows as data. The
 * selection is cut to the contract's limits, read from the registry, and the user is told what
 * was left out rather than getting a 400.
 */
import type { ProspectaClient } from '../api/client.ts';
import { limitOf } from '../api/client.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import { AGENT_CONTEXT_MAX_CHARS } from '../../shared/schemas/agent.ts';
import { isOwnColumn } from './columns.ts';
import type { SheetPort } from './ports.ts';

type AgentContext = NonNullable<InputOf<'agentChat'>['context']>;

/** What the sidebar shows of one exchange. */
export interface AgentTurn {
  conversationId: string;
  reply: string;
  toolCalls: Array<{ tool: string; creditsCharged: number; isError: boolean }>;
  creditsCharged: number;
  /** A step that failed midway, in words; the reply holds what came before. */
  failedStep: string | null;
  /** What of the selection was not sent, when something was not. */
  note: string | null;
}

/** What the sidebar holds its form to: the longest message, and the most rows a selection sends. */
export function agentLimits(): { message: number; rows: number } {
  return { message: limitOf('agentChat', 'message', 'maxLength'), rows: limitOf('agentChat', 'context.rows', 'maxItems') };
}

export function contextLimits() {
  return {
    columns: limitOf('agentChat', 'context.header', 'maxItems'),
    label: limitOf('agentChat', 'context.header.[]', 'maxLength'),
    rows: limitOf('agentChat', 'context.rows', 'maxItems'),
    cell: limitOf('agentChat', 'context.rows.[].[]', 'maxLength'),
    chars: AGENT_CONTEXT_MAX_CHARS,
  };
}

/**
 * Rows `first`…`last` of `sheet` under its labelled columns (the add-on's own status columns
 * left out), within the contract's limits: the first columns and rows that fit, long cells cut.
 */
export function selectionContext(sheet: SheetPort, first: number, last: number): { context: AgentContext; note: string | null } {
  const limits = contextLimits();
  const labels = sheet.headers();
  const columns = labels.map((label, i) => ({ label: label.trim(), i })).filter((c) => c.label && !isOwnColumn(c.label));
  const kept = columns.slice(0, limits.columns);
  const selected = last - first + 1;
  // Empty rows say nothing: they are neither sent nor counted as left out.
  const filled = sheet.readRows(first, Math.min(selected, limits.rows)).filter((row) => row.some((cell) => String(cell).trim()));
  let cut = false;
  const fit = (text: string, max: number) => (text.length > max ? ((cut = true), `${text.slice(0, max - 1)}…`) : text);
  const context: AgentContext = {
    header: kept.map((c) => fit(c.label, limits.label)),
    rows: filled.map((row) => kept.map((c) => fit(String(row[c.i] ?? ''), limits.cell))),
  };
  let weight = JSON.stringify(context).length;
  while (weight > limits.chars && context.rows.length > 0) weight -= JSON.stringify(context.rows.pop()).length + 1;

  const left: string[] = [];
  if (context.rows.length < filled.length || selected > limits.rows) left.push(`only the first ${context.rows.length} of ${selected > limits.rows ? selected : filled.length} rows were sent`);
  if (kept.length < columns.length) left.push(`only the first ${kept.length} of ${columns.length} columns`);
  if (cut) left.push(`cells longer than ${limits.cell} characters were cut`);
  return { context, note: left.length ? `To fit what the agent takes, ${left.join('; ')}.` : null };
}

/** One message to the agent, and its answer as the sidebar shows it. */
export function askAgent(client: ProspectaClient, input: InputOf<'agentChat'>, note: string | null = null): AgentTurn {
  const answer = client.call('agentChat', input);
  return {
    conversationId: answer.conversationId,
    reply: answer.reply,
    toolCalls: answer.toolCalls.map((c) => ({ tool: c.tool, creditsCharged: c.creditsCharged, isError: c.isError })),
    creditsCharged: answer.creditsCharged,
    failedStep: answer.error ? (answer.error.message ?? answer.error.error) : null,
    note,
  };
}
