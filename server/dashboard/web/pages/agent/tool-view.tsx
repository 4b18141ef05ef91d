/** A tool call in the reply: its name, its arguments in a line, and running, failed or what it cost; a stored one's result as data. */
import { plural } from '../../format.ts';
import type { ToolCall } from './turns.ts';

/** A tool's arguments in one short line: `name: "Ana", limit: 5`. */
export function summarize(input: Record<string, unknown>, max = 140): string {
  const text = Object.entries(input)
    .map(([key, value]) => {
      const shown = JSON.stringify(value) ?? String(value);
      return `${key}: ${shown.length > 60 ? `${shown.slice(0, 57)}…` : shown}`;
    })
    .join(', ');
  if (!text) return 'no arguments';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function ToolView({ call: c }: { call: ToolCall }) {
  if (c.stored !== undefined) {
    return (
      <details class="tool">
        <summary>Tool result</summary>
        <pre>{c.stored.length > 2000 ? `${c.stored.slice(0, 2000)}…` : c.stored}</pre>
      </details>
    );
  }
  const state = !c.result
    ? 'running…'
    : c.result.isError
      ? `failed${c.result.error ? ` (${c.result.error})` : ''}, no credits`
      : `${plural(c.result.creditsCharged, 'credit')}`;
  return (
    <div class={`tool${c.result?.isError ? ' failed' : ''}`}>
      <span class="tool-name">
        <span class="sr-only">Tool call: </span>
        <code>{c.tool}</code>
      </span>{' '}
      <span class="tool-input">{summarize(c.input)}</span> <span class="tool-cost">{state}</span>
    </div>
  );
}
