/**
 * Campaigns: created as drafts from a template and/or the fields sent (sent fields prevail), with
 * one prospect per selected row; listed with counts per status; edited; cadence edits; prospects
 * added. Free; plan required.
 */
import { ApiError, notFound } from '../http/errors.ts';
import { checkRoom, placeProspects, sheetRows, writeProspects } from '../outreach/add-rows.ts';
import { campaignView, emptyCounts, type CampaignConfig } from '../outreach/campaigns.ts';
import { prospectView } from '../outreach/prospects.ts';
import type { SheetRow } from '../outreach/sheets.ts';
import type { Handler } from './types.ts';

const CONFIG_FIELDS = ['offering', 'senderName', 'tone', 'businessContext', 'language'] as const;

export const createCampaign: Handler<'createCampaign'> = async (input, ctx) => {
  const { templateId, sheetId, rowIds = [] } = input;
  const template = templateId ? await ctx.services.templates.get(ctx.workspaceId, templateId) : null;
  if (templateId && !template) throw notFound('template');
  if (rowIds.length > 0 && !sheetId) throw new ApiError(400, 'invalid_request', 'sheetId is required with rowIds');
  // Sheet and rows are checked before anything is created.
  const rows: SheetRow[] = sheetId ? await sheetRows(ctx, sheetId, rowIds) : [];

  const config: CampaignConfig = { name: input.name, offering: input.offering };
  for (const field of CONFIG_FIELDS) {
    const value = input[field] ?? template?.[field];
    if (value !== undefined) config[field] = value;
  }
  checkRoom(null, rows.length, ctx.services.config.campaignMaxProspects);
  // Messages first: the campaign is only stored once every row has one.
  const written = rows.length > 0 ? await writeProspects(ctx, config, sheetId!, rows) : [];
  const campaign = await ctx.services.campaigns.create(ctx.workspaceId, config, template?._id ?? null);
  if (written.length === 0) return { campaignId: campaign._id, campaignName: campaign.name, created: 0 };
  try {
    const { added } = await placeProspects(ctx, campaign, written);
    return { campaignId: campaign._id, campaignName: campaign.name, created: added };
  } catch (err) {
    // All or nothing: a campaign whose prospects could not all be stored is not left behind.
    await ctx.services.campaigns.remove(campaign._id);
    throw err;
  }
};

export const listCampaigns: Handler<'listCampaigns'> = async (_input, ctx) => {
  const [campaigns, counts] = await Promise.all([
    ctx.services.campaigns.list(ctx.workspaceId),
    ctx.services.prospects.counts(ctx.workspaceId),
  ]);
  return { campaigns: campaigns.map((c) => campaignView(c, counts.get(c._id) ?? emptyCounts())) };
};

export const getCampaign: Handler<'getCampaign'> = async ({ campaignId }, ctx) => {
  const campaign = await ctx.services.campaigns.get(ctx.workspaceId, campaignId);
  if (!campaign) throw notFound('campaign');
  const prospects = await ctx.services.prospects.list(ctx.workspaceId, { campaignId });
  const counts = emptyCounts();
  for (const p of prospects) counts[p.status]++;
  return { ...campaignView(campaign, counts), prospects: prospects.map(prospectView) };
};

export const updateCampaign: Handler<'updateCampaign'> = async ({ campaignId, ...fields }, ctx) => {
  const campaign = await ctx.services.campaigns.update(ctx.workspaceId, campaignId, fields);
  if (!campaign) throw notFound('campaign');
  const counts = (await ctx.services.prospects.counts(ctx.workspaceId, campaignId)).get(campaignId) ?? emptyCounts();
  return campaignView(campaign, counts);
};

export const updateCadence: Handler<'updateCadence'> = async ({ campaignId, steps, prospectId }, ctx) => {
  const { campaigns, prospects } = ctx.services;
  const campaign = await campaigns.get(ctx.workspaceId, campaignId);
  if (!campaign) throw notFound('campaign');
  if (campaign.cadence === null) {
    throw new ApiError(409, 'cadence_not_generated', 'The cadence is generated when the campaign first receives prospects');
  }
  if (prospectId) {
    if (!(await prospects.setCadence(ctx.workspaceId, campaignId, prospectId, steps))) throw notFound('prospect in this campaign');
    return { campaignId, prospectId, cadence: steps };
  }
  await campaigns.setCadence(ctx.workspaceId, campaignId, steps);
  await prospects.campaignCadenceEdited(ctx.workspaceId, campaignId, steps.length);
  return { campaignId, cadence: steps };
};

export const addProspects: Handler<'addProspects'> = async ({ campaignId, sheetId, rowIds }, ctx) => {
  const campaign = await ctx.services.campaigns.get(ctx.workspaceId, campaignId);
  if (!campaign) throw notFound('campaign');
  const rows = await sheetRows(ctx, sheetId, rowIds);
  const existing = await ctx.services.prospects.existingRows(campaignId, sheetId, rows.map((r) => r.rowId));
  const fresh = rows.filter((r) => !existing.has(r.rowId));
  if (fresh.length === 0) return { ok: true, added: 0, skipped: rows.length };
  checkRoom(campaign, fresh.length, ctx.services.config.campaignMaxProspects);
  const { added, duplicates } = await placeProspects(ctx, campaign, await writeProspects(ctx, campaign, sheetId, fresh));
  return { ok: true, added, skipped: existing.size + duplicates };
};
