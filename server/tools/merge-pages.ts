/**
 * A stream operation called as a tool answers once: its pages gathered into one result (every
 * row, then what `done` says), with a callback per page for bindings that report progress.
 */
import type { StreamEvent } from '../invocation/outcome.ts';

export async function mergePages(
  events: AsyncIterable<StreamEvent>,
  onPage: (pages: number, source: string, rows: number) => Promise<void>,
): Promise<Record<string, unknown>> {
  const results: unknown[] = [];
  let pages = 0;
  let done: Record<string, unknown> = {};
  for await (const { event, data } of events) {
    const payload = data as { source?: string; results?: unknown[] };
    if (event === 'page') {
      results.push(...(payload.results ?? []));
      await onPage(++pages, payload.source ?? '', payload.results?.length ?? 0);
    } else if (event === 'done') {
      done = data as Record<string, unknown>;
    }
  }
  return { results, ...done };
}
