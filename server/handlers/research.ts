import { LlmError } from '../ai/llm.ts';
import { research as runResearch, rowContext } from '../ai/research.ts';
import { checkContextSize } from './ai-column.ts';
import type { Handler } from './types.ts';

/** A question about one row, answered from the row (and the web with `webSearch`); 2 credits, 5 with the web. */
export const research: Handler<'research'> = async (input, ctx) => {
  checkContextSize({ prompt: input.prompt, ...rowContext(input) });
  const { llm, webSearch, config } = ctx.services;
  try {
    const result = await runResearch(input, { llm, search: webSearch, allowLoopback: config.webAllowLoopback }, ctx.workspaceId, ctx.signal);
    const cost = result.webSearch ? 5 : 2;
    await ctx.charge(cost, result.webSearch ? 'research with web search' : 'research');
    return { ...result, creditsCharged: cost };
  } catch (err) {
    if (err instanceof LlmError) throw err.toApiError();
    throw err;
  }
};
