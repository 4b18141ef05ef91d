import { ServiceError } from '../errors.ts';
import type { Handler } from '../pipeline/handler.ts';

export const getCredits: Handler<'getCredits'> = async (_input, ctx) => {
  const view = await ctx.services.credits.view(ctx.workspaceId);
  if (!view) throw new ServiceError('not_found', 'workspace not found');
  return view;
};
