/**
 * Outreach, free and plan-gated: campaigns, created as drafts from a template and/or the fields
 * sent (sent fields prevail) with one prospect per selected row, listed with counts per status,
 * edited, their cadence edited and prospects added; prospects (status and message edited, never
 * regenerated) and their history; templates; and the sheets campaigns are made from.
 */
import { invalidRequest, notFound, ServiceError } from '../lib/errors.ts';
import type { Handler, HandlerContext } from '../invocation/handler.ts';
import { checkRoom, placeProspects, sheetRows, writeProspects, type AddRowsDeps } from './add-rows.ts';
import { campaignView, emptyCounts, type CampaignConfig, type Campaigns } from './campaigns.ts';
import type { MessageWriter } from './message-writer.ts';
import { languageNote } from './writer-language.ts';
import { eventView, prospectView, type Prospects } from './prospects.ts';
import type { SheetRow, Sheets } from './sheets.ts';
import { templateView, type Templates } from './templates.ts';

/** Names are stored trimmed; the schema (`NOT_BLANK`) has already refused a blank one. */
function trimmedName<T extends { name?: string }>(fields: T): T {
  return fields.name === undefined ? fields : { ...fields, name: fields.name.trim() };
}

const CONFIG_FIELDS = ['senderName', 'tone', 'businessContext', 'language'] as const;

export interface OutreachDeps {
  templates: Templates;
  campaigns: Campaigns;
  prospects: Prospects;
  sheets: Sheets;
  writer: MessageWriter;
  /** CAMPAIGN_MAX_PROSPECTS. */
  maxProspects: number;
}

export function createOutreachHandlers({ templates, campaigns, prospects, sheets, writer, maxProspects }: OutreachDeps) {
  function addRowsDeps(ctx: HandlerContext): AddRowsDeps {
    const { workspaceId, signal, trace } = ctx;
    return { workspaceId, sheets, campaigns, prospects, messageWriter: writer, maxProspects, signal, trace };
  }

  const createCampaign: Handler<'createCampaign'> = async (input, ctx) => {
    const { templateId, sheetId, rowIds = [] } = input;
    const deps = addRowsDeps(ctx);
    const template = templateId ? await templates.get(ctx.workspaceId, templateId) : null;
    if (templateId && !template) throw notFound('template');
    if (rowIds.length > 0 && !sheetId) throw new ServiceError('invalid_request', 'sheetId is required with rowIds');
    // Sheet and rows are checked before anything is created.
    const rows: SheetRow[] = sheetId ? await sheetRows(deps, sheetId, rowIds) : [];

    // The template's fields, then the fields sent on top; the required ones must come from one of them.
    // A template's blank campaignName names nothing, and its own name serves instead: no campaign is stored without a name.
    const name = input.name?.trim() ?? (template ? template.campaignName?.trim() || template.name : undefined);
    if (name === undefined) throw invalidRequest('name is required');
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
    const campaign = await campaigns.create(ctx.workspaceId, config, template?._id ?? null);
    const note = languageNote(campaign.language);
    const answer = (created: number) => ({ campaignId: campaign._id, campaignName: campaign.name, created, ...(note ? { languageNote: note } : {}) });
    if (written.length === 0) return answer(0);
    try {
      const { added } = await placeProspects(deps, campaign, written);
      return answer(added);
    } catch (err) {
      // All or nothing: a campaign whose prospects could not all be stored is not left behind.
      await campaigns.remove(campaign._id);
      throw err;
    }
  };

  const listCampaigns: Handler<'listCampaigns'> = async (_input, ctx) => {
    const [docs, counts] = await Promise.all([campaigns.list(ctx.workspaceId), prospects.counts(ctx.workspaceId)]);
    return { campaigns: docs.map((c) => campaignView(c, counts.get(c._id) ?? emptyCounts())) };
  };

  const getCampaign: Handler<'getCampaign'> = async ({ campaignId }, ctx) => {
    const campaign = await campaigns.get(ctx.workspaceId, campaignId);
    if (!campaign) throw notFound('campaign');
    const members = await prospects.list(ctx.workspaceId, { campaignId });
    const counts = emptyCounts();
    for (const p of members) counts[p.status]++;
    return { ...campaignView(campaign, counts), prospects: members.map(prospectView) };
  };

  const updateCampaign: Handler<'updateCampaign'> = async ({ campaignId, ...fields }, ctx) => {
    const campaign = await campaigns.update(ctx.workspaceId, campaignId, trimmedName(fields));
    if (!campaign) throw notFound('campaign');
    const counts = (await prospects.counts(ctx.workspaceId, campaignId)).get(campaignId) ?? emptyCounts();
    return campaignView(campaign, counts);
  };

  const updateCadence: Handler<'updateCadence'> = async ({ campaignId, steps, prospectId }, ctx) => {
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

  const addProspects: Handler<'addProspects'> = async ({ campaignId, sheetId, rowIds }, ctx) => {
    const campaign = await campaigns.get(ctx.workspaceId, campaignId);
    if (!campaign) throw notFound('campaign');
    const deps = addRowsDeps(ctx);
    const rows = await sheetRows(deps, sheetId, rowIds);
    const existing = await prospects.existingRows(campaignId, sheetId, rows.map((r) => r.rowId));
    const fresh = rows.filter((r) => !existing.has(r.rowId));
    if (fresh.length === 0) return { ok: true, added: 0, skipped: rows.length };
    checkRoom(deps, campaign, fresh.length);
    const { added, duplicates } = await placeProspects(deps, campaign, await writeProspects(deps, campaign, sheetId, fresh));
    return { ok: true, added, skipped: existing.size + duplicates };
  };

  const listProspects: Handler<'listProspects'> = async ({ campaignId, status }, ctx) => ({
    prospects: (await prospects.list(ctx.workspaceId, { ...(campaignId ? { campaignId } : {}), ...(status ? { status } : {}) })).map(prospectView),
  });

  const getProspect: Handler<'getProspect'> = async ({ prospectId }, ctx) => {
    const prospect = await prospects.get(ctx.workspaceId, prospectId);
    if (!prospect) throw notFound('prospect');
    return prospectView(prospect);
  };

  const updateProspect: Handler<'updateProspect'> = async ({ prospectId, ...changes }, ctx) => {
    const prospect = await prospects.update(ctx.workspaceId, prospectId, changes);
    if (!prospect) throw notFound('prospect');
    return prospectView(prospect);
  };

  const deleteProspect: Handler<'deleteProspect'> = async ({ prospectId }, ctx) => {
    const removed = await prospects.remove(ctx.workspaceId, prospectId);
    if (!removed) throw notFound('prospect');
    await campaigns.release(removed.campaignId, 1);
    return { deleted: true, campaignDeleted: false };
  };

  const listProspectEvents: Handler<'listProspectEvents'> = async ({ prospectId }, ctx) => {
    if (!(await prospects.get(ctx.workspaceId, prospectId))) throw notFound('prospect');
    return { events: (await prospects.history(prospectId)).map(eventView) };
  };

  const createSheet: Handler<'createSheet'> = async ({ name, rows }, ctx) => {
    const { sheet, rowCount } = await sheets.create(ctx.workspaceId, name.trim(), rows);
    return { sheetId: sheet._id, rowCount };
  };

  const upsertSheetRows: Handler<'upsertSheetRows'> = async ({ sheetId, rows }, ctx) => {
    const sheet = await sheets.get(ctx.workspaceId, sheetId);
    const rowCount = sheet && (await sheets.upsert(sheet, rows));
    if (rowCount === null) throw notFound('sheet');
    return { sheetId, rowCount };
  };

  const getSheet: Handler<'getSheet'> = async ({ sheetId }, ctx) => {
    const sheet = await sheets.get(ctx.workspaceId, sheetId);
    if (!sheet) throw notFound('sheet');
    const { _id, name, createdAt, updatedAt } = sheet;
    const rows = await sheets.allRows(sheetId);
    return { sheetId: _id, name, rowCount: rows.length, rows, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
  };

  const deleteSheet: Handler<'deleteSheet'> = async ({ sheetId }, ctx) => {
    if (!(await sheets.remove(ctx.workspaceId, sheetId))) throw notFound('sheet');
    return { deleted: true };
  };

  const listTemplates: Handler<'listTemplates'> = async (_input, ctx) => ({
    templates: (await templates.list(ctx.workspaceId)).map(templateView),
  });

  const createTemplate: Handler<'createTemplate'> = async (input, ctx) =>
    templateView((await templates.save(ctx.workspaceId, trimmedName(input))).template);

  const updateTemplate: Handler<'updateTemplate'> = async ({ templateId, ...fields }, ctx) =>
    templateView(await templates.update(ctx.workspaceId, templateId, trimmedName(fields)));

  const deleteTemplate: Handler<'deleteTemplate'> = async ({ templateId }, ctx) => {
    if (!(await templates.remove(ctx.workspaceId, templateId))) throw notFound('template');
    return { deleted: true };
  };

  return { createCampaign, listCampaigns, getCampaign, updateCampaign, updateCadence, addProspects, listProspects, getProspect, updateProspect, deleteProspect, listProspectEvents, createSheet, upsertSheetRows, getSheet, deleteSheet, listTemplates, createTemplate, updateTemplate, deleteTemplate };
}
