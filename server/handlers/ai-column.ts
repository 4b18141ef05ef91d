import { LlmError } from '../ai/llm.ts';
import { invalidRequest } from '../http/errors.ts';
import type { Handler } from './types.ts';

/** Row context larger than this is refused before any model call. */
export const MAX_CONTEXT_BYTES = 50_000;

/** Refuses an oversized row, naming its largest cell. */
export function checkContextSize(context: Record<string, string>): void {
  const sizes = Object.entries(context).map(([k, v]) => [k, Buffer.byteLength(k) + Buffer.byteLength(v)] as const);
  const total = sizes.reduce((n, [, size]) => n + size, 0);
  if (total > MAX_CONTEXT_BYTES) {
    const [largest] = [...sizes].sort((a, b) => b[1] - a[1])[0]!;
    throw invalidRequest(`the row context is over 50 kB (${total} bytes); ${largest} is the largest cell`);
  }
}

/** One short generated value; 1 credit, nothing when served from the cache. */
export const aiColumn: Handler<'aiColumn'> = async ({ instruction, ...context }, ctx) => {
  checkContextSize(context as Record<string, string>);
  try {
    const result = await ctx.services.aiColumns.value(ctx.workspaceId, instruction, context as Record<string, string>, ctx.signal);
    await ctx.charge(result.cached ? 0 : 1, 'AI column value');
    return { value: result.value, cached: result.cached, creditsCharged: result.cached ? 0 : 1 };
  } catch (err) {
    if (err instanceof LlmError) throw err.toApiError();
    throw err;
  }
};
