/**
 * Turning sheet rows into prospects of a campaign, shared by campaign creation and add-prospects:
 * rows checked, places reserved under the campaign's limit, messages written, prospects inserted
 * (duplicates skipped by the unique index), the cadence set on first prospects. Any failure
 * releases the places and leaves no prospect behind.
 */
import { ApiError, invalidRequest, notFound } from '../http/errors.ts';
import type { HandlerContext } from '../handlers/types.ts';
import { defaultCadence } from './cadence.ts';
import type { CampaignDoc } from './campaigns.ts';
import type { SheetRow } from './sheets.ts';

/** The rows asked for, in order, first occurrence of a repeated id; 404/400 when the sheet or a row is unknown. */
export async function sheetRows(ctx: HandlerContext, sheetId: string, rowIds: string[]): Promise<SheetRow[]> {
  const sheet = await ctx.services.sheets.get(ctx.workspaceId, sheetId);
  if (!sheet) throw notFound('sheet');
  const ids = [...new Set(rowIds)];
  const found = await ctx.services.sheets.someRows(sheetId, ids);
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw invalidRequest(`rowIds not in sheet ${sheetId}: ${missing.map((id) => JSON.stringify(id)).join(', ')}`);
  }
  return ids.map((id) => found.get(id)!);
}

export async function addRows(ctx: HandlerContext, campaign: CampaignDoc, sheetId: string, rows: SheetRow[]): Promise<{ added: number; skipped: number }> {
  const { campaigns, prospects, messageWriter, config } = ctx.services;
  const existing = await prospects.existingRows(campaign._id, sheetId, rows.map((r) => r.rowId));
  const fresh = rows.filter((r) => !existing.has(r.rowId));
  if (fresh.length === 0) return { added: 0, skipped: rows.length };

  const max = config.campaignMaxProspects;
  if (!(await campaigns.reserve(campaign._id, fresh.length, max))) {
    throw new ApiError(409, 'campaign_full', `The campaign cannot take ${fresh.length} more prospects (at most ${max}); nothing was added`);
  }
  let duplicates = fresh.length;
  try {
    const messages = await messageWriter.write(campaign, fresh.map((r) => r.values), ctx.workspaceId, ctx.signal);
    const inserted = await prospects.insert(
      ctx.workspaceId,
      campaign._id,
      fresh.map((row, i) => ({ sheetId, rowId: row.rowId, context: row.values, message: messages[i]! })),
    );
    duplicates = inserted.duplicates;
    if (inserted.added.length > 0) await campaigns.ensureCadence(campaign._id, defaultCadence(campaign.language));
    return { added: inserted.added.length, skipped: existing.size + inserted.duplicates };
  } finally {
    await campaigns.release(campaign._id, duplicates);
  }
}
