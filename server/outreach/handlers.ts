/**
 * Outreach, free and plan-gated: campaigns, created as drafts from a template and/or the fields
 * sent (sent fields prevail) with one prospect per selected row, listed with counts per status,
 * edited, their cadence edited and prospects added; prospects (status and message edited, never
 * regenerated) and their history; templates; and the sheets campaigns are made from.
 */
import { invalidRequest, notFound, ServiceError } from '../errors.ts';
import type { Handler, HandlerContext } from '../pipeline/handler.ts';
import { checkRoom, placeProspects, sheetRows, writeProspects, type AddRowsDeps } from './add-rows.ts';
import { campaignView, emptyCounts, type CampaignConfig } from './campaigns.ts';
import { eventView, prospectView } from './prospects.ts';
import type { SheetRow } from './sheets.ts';
import { templateView } from './templates.ts';

function addRowsDeps(ctx: HandlerContext): AddRowsDeps {
  const { sheets, campaigns, prospects, messageWriter, config } = ctx.services;
  const { workspaceId, signal, trace } = ctx;
  return { workspaceId, sheets, campaigns, prospects, messageWriter, maxProspects: config.campaignMaxProspects, signal, trace };
}

/** Names are stored trimmed; the schema (`NOT_BLANK`) has already refused a blank one. */
function trimmedName<T extends { name?: string }>(fields: T): T {
  return fields.name === undefined ? fields : { ...fields, name: fields.name.trim() };
}

const CONFIG_FIELDS = ['senderName', 'tone', 'businessContext', 'language'] as const;

export const createCampaign: Handler<'createCampaign'> = async (input, ctx) => {
  const { templateId, sheetId, rowIds = [] } = input;
  const deps = addRowsDeps(ctx);
  const template = templateId ? await ctx.services.templates.get(ctx.workspaceId, templateId) : null;
  if (templateId && !template) throw notFound('template');
  if (rowIds.length > 0 && !sheetId) throw new ServiceError('invalid_request', 'sheetId is required with rowIds');
  // Sheet and rows are checked before anything is created.
  const rows: SheetRow[] = sheetId ? await sheetRows(deps, sheetId, rowIds) : [];

  // The template's fields, then the fields sent on top; the required ones must come from one of them.
  const name = input.name?.trim() ?? template?.campaignName;
  if (name === undefined) throw invalidRequest(template ? 'name is required: the template has no campaignName' : 'name is required');
  const offering = input.offering ?? template?.offering;
  if (offering === undefined) throw invalidRequest('offering is required');
  const config: CampaignConfig = { name, offering };
  for (const field of CONFIG_FIELDS) {
    const value = input[field] ?? template?.[field];
    if (value !== undefined) config[field] = value;
  }
  checkRoom(deps, null, rows.length);
  // Messages first: the campaign is only stored once every row has one.
  const written = rows.length > 0 ? await writeProspects(deps, config, sheetId!, rows) : [];
  const campaign = await ctx.services.campaigns.create(ctx.workspaceId, config, template?._id ?? null);
  if (written.length === 0) return { campaignId: campaign._id, campaignName: campaign.name, created: 0 };
  try {
    const { added } = await placeProspects(deps, campaign, written);
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
  const campaign = await ctx.services.campaigns.update(ctx.workspaceId, campaignId, trimmedName(fields));
  if (!campaign) throw notFound('campaign');
  const counts = (await ctx.services.prospects.counts(ctx.workspaceId, campaignId)).get(campaignId) ?? emptyCounts();
  return campaignView(campaign, counts);
};

export const updateCadence: Handler<'updateCadence'> = async ({ campaignId, steps, prospectId }, ctx) => {
  const { campaigns, prospects } = ctx.services;
  const campaign = await campaigns.get(ctx.workspaceId, campaignId);
  if (!campaign) throw notFound('campaign');
  if (campaign.cadence === null) {
    throw new ServiceError('cadence_not_generated', 'The cadence is generated when the campaign first receives prospects');
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
  const deps = addRowsDeps(ctx);
  const rows = await sheetRows(deps, sheetId, rowIds);
  const existing = await ctx.services.prospects.existingRows(campaignId, sheetId, rows.map((r) => r.rowId));
  const fresh = rows.filter((r) => !existing.has(r.rowId));
  if (fresh.length === 0) return { ok: true, added: 0, skipped: rows.length };
  checkRoom(deps, campaign, fresh.length);
  const { added, duplicates } = await placeProspects(deps, campaign, await writeProspects(deps, campaign, sheetId, fresh));
  return { ok: true, added, skipped: existing.size + duplicates };
};

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

export const createSheet: Handler<'createSheet'> = async ({ name, rows }, ctx) => {
  const { sheet, rowCount } = await ctx.services.sheets.create(ctx.workspaceId, name.trim(), rows);
  return { sheetId: sheet._id, rowCount };
};

export const upsertSheetRows: Handler<'upsertSheetRows'> = async ({ sheetId, rows }, ctx) => {
  const sheet = await ctx.services.sheets.get(ctx.workspaceId, sheetId);
  const rowCount = sheet && (await ctx.services.sheets.upsert(sheet, rows));
  if (rowCount === null) throw notFound('sheet');
  return { sheetId, rowCount };
};

export const getSheet: Handler<'getSheet'> = async ({ sheetId }, ctx) => {
  const sheet = await ctx.services.sheets.get(ctx.workspaceId, sheetId);
  if (!sheet) throw notFound('sheet');
  const { _id, name, createdAt, updatedAt } = sheet;
  const rows = await ctx.services.sheets.allRows(sheetId);
  return { sheetId: _id, name, rowCount: rows.length, rows, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
};

export const deleteSheet: Handler<'deleteSheet'> = async ({ sheetId }, ctx) => {
  if (!(await ctx.services.sheets.remove(ctx.workspaceId, sheetId))) throw notFound('sheet');
  return { deleted: true };
};

export const listTemplates: Handler<'listTemplates'> = async (_input, ctx) => ({
  templates: (await ctx.services.templates.list(ctx.workspaceId)).map(templateView),
});

export const createTemplate: Handler<'createTemplate'> = async (input, ctx) =>
  templateView((await ctx.services.templates.save(ctx.workspaceId, trimmedName(input))).template);

export const updateTemplate: Handler<'updateTemplate'> = async ({ templateId, ...fields }, ctx) =>
  templateView(await ctx.services.templates.update(ctx.workspaceId, templateId, trimmedName(fields)));

export const deleteTemplate: Handler<'deleteTemplate'> = async ({ templateId }, ctx) => {
  if (!(await ctx.services.templates.remove(ctx.workspaceId, templateId))) throw notFound('template');
  return { deleted: true };
};
