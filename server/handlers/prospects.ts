/** Prospects: list, detail, PATCH (status and message, never regenerated), delete, history. Free. */
import { notFound } from '../http/errors.ts';
import { eventView, prospectView } from '../outreach/prospects.ts';
import type { Handler } from './types.ts';

export const listProspects: Handler<'listProspects'> = async ({ campaignId, status }, ctx) => ({
  prospects: (await ctx.services.prospects.list(ctx.workspaceId, { ...(campaignId ? { campaignId } : {}), ...(status ? { status } : {}) })).map(prospectView),
});

export const getProspect: Handler<'getProspect'> = async ({ prospectId }, ctx) => {
  const prospect = await ctx.services.prospects.get(ctx.workspaceId, prospectId);
  if (!prospect) throw notFound('prospect');
  return prospectView(prospect);
};

export const updateProspect: Handler<'updateProspect'> = async ({ prospectId, ...changes }, ctx) => {
  const prospect = await ctx.services.prospects.update(ctx.workspaceId, prospectId, changes);
  if (!prospect) throw notFound('prospect');
  return prospectView(prospect);
};

export const deleteProspect: Handler<'deleteProspect'> = async ({ prospectId }, ctx) => {
  const removed = await ctx.services.prospects.remove(ctx.workspaceId, prospectId);
  if (!removed) throw notFound('prospect');
  await ctx.services.campaigns.release(removed.campaignId, 1);
  return { deleted: true, campaignDeleted: false };
};

export const listProspectEvents: Handler<'listProspectEvents'> = async ({ prospectId }, ctx) => {
  if (!(await ctx.services.prospects.get(ctx.workspaceId, prospectId))) throw notFound('prospect');
  return { events: (await ctx.services.prospects.history(prospectId)).map(eventView) };
};
