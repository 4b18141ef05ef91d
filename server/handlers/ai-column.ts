import { checkContextSize } from '../ai/untrusted-data.ts';
import type { Handler } from './types.ts';

/**
 * One short generated value, priced by the registry; nothing when served from the cache. A model
 * failure is a 502/503 raised before the charge.
 */
export const aiColumn: Handler<'aiColumn'> = async ({ instruction, ...context }, ctx) => {
  checkContextSize(context as Record<string, string>);
  const result = await ctx.services.aiColumns.value(ctx.workspaceId, instruction, context as Record<string, string>, ctx.signal);
  const charged = await ctx.charge(result.cached ? 0 : 1, 'AI column value');
  return { value: result.value, cached: result.cached, creditsCharged: charged };
};
