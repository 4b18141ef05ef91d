import { ServiceError } from '../errors.ts';
import type { Handler } from '../pipeline/handler.ts';

export const getCredits: Handler<'getCredits'> = async (_input, ctx) => {
  const view = await ctx.services.credits.view(ctx.workspaceId);
  if (!view) throw new ServiceError('not_found', 'workspace not found');
  return view;
};

export const listLedger: Handler<'listLedger'> = async ({ limit = 50, before, operation }, ctx) =>
  ctx.services.credits.page(ctx.workspaceId, { limit, before, operation });

export const getUsage: Handler<'getUsage'> = async ({ days = 30 }, ctx) => {
  const [usage, memorySaved] = await Promise.all([
    ctx.services.credits.usage(ctx.workspaceId, days),
    ctx.services.enrichMemory.savedThisMonth(ctx.workspaceId),
  ]);
  return { days: usage, memorySaved };
};
