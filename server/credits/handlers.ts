import { ApiError } from '../http/errors.ts';
import type { Handler } from '../pipeline/handler.ts';

export const getCredits: Handler<'getCredits'> = async (_input, ctx) => {
  const view = await ctx.services.credits.view(ctx.workspaceId);
  if (!view) throw new ApiError(404, 'not_found', 'workspace not found');
  return view;
};
