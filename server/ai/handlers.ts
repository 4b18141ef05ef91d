/** AI: research on a row and short generated column values, priced by the registry. */
import type { Handler } from '../invocation/handler.ts';
import type { AiColumns } from './ai-column.ts';
import type { Llm } from './llm.ts';
import { checkSiteFields, research as runResearch, rowContext } from './research.ts';
import { checkContextSize } from './untrusted-data.ts';
import type { WebSearch } from './web-search.ts';

export interface AiDeps {
  /** null until a model is configured (503). */
  llm: Llm | null;
  webSearch: WebSearch | null;
  aiColumns: AiColumns;
  /** WEB_FETCH_ALLOW_LOOPBACK: research may fetch loopback pages (tests). */
  allowLoopback: boolean;
}

export function createAiHandlers({ llm, webSearch, aiColumns, allowLoopback }: AiDeps) {
  /**
   * A question about one row, answered from the row (and the web with `webSearch`), priced by the
   * registry. A model or search failure is a 502/503 raised before the charge.
   */
  const research: Handler<'research'> = async (input, ctx) => {
    checkSiteFields(input);
    checkContextSize({ prompt: input.prompt, ...rowContext(input) });
    const result = await runResearch(input, { llm, search: webSearch, allowLoopback }, ctx.workspaceId, ctx.signal, ctx.trace);
    const charged = await ctx.charge(1, result.webSearch ? 'research with web search' : 'research');
    return { ...result, creditsCharged: charged };
  };

  /**
   * One short generated value, priced by the registry; nothing when served from the cache. A model
   * failure is a 502/503 raised before the charge.
   */
  const aiColumn: Handler<'aiColumn'> = async ({ instruction, ...context }, ctx) => {
    checkContextSize(context);
    const result = await aiColumns.value(ctx.workspaceId, instruction, context, ctx.signal, ctx.trace);
    const charged = await ctx.charge(result.cached ? 0 : 1, 'AI column value');
    return { value: result.value, cached: result.cached, creditsCharged: charged };
  };

  return { research, aiColumn };
}
