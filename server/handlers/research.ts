import { research as runResearch, rowContext } from '../ai/research.ts';
import { checkContextSize } from '../ai/untrusted-data.ts';
import type { Handler } from './types.ts';

/**
 * A question about one row, answered from the row (and the web with `webSearch`), priced by the
 * registry. A model or search failure is a 502/503 raised before the charge.
 */
export const research: Handler<'research'> = async (input, ctx) => {
  checkContextSize({ prompt: input.prompt, ...rowContext(input) });
  const { llm, webSearch, config } = ctx.services;
  const result = await runResearch(input, { llm, search: webSearch, allowLoopback: config.webAllowLoopback }, ctx.workspaceId, ctx.signal);
  const charged = await ctx.charge(1, result.webSearch ? 'research with web search' : 'research');
  return { ...result, creditsCharged: charged };
};
