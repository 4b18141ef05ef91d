/**
 * Turning sheet rows into prospects of a campaign, shared by campaign creation and add-prospects,
 * in an order that keeps failures clean: rows checked, messages written (no write yet), then
 * places reserved, prospects inserted and unused places released. Any failure after the writes
 * began releases the places and removes the prospects it inserted, with their history.
 */
import { ServiceError, invalidRequest, notFound } from '../lib/errors.ts';
import { defaultCadence } from './cadence.ts';
import type { CampaignDoc, Campaigns } from './campaigns.ts';
import type { Brief, MessageWriter } from './message-writer.ts';
import type { NewProspect, Prospects } from './prospects.ts';
import type { SheetRow, Sheets } from './sheets.ts';
import type { TraceContext } from '../lib/trace-context.ts';

/** What turning rows into prospects reads and writes, for one workspace. */
export interface AddRowsDeps {
  workspaceId: string;
  sheets: Pick<Sheets, 'get' | 'someRows'>;
  campaigns: Pick<Campaigns, 'reserve' | 'release' | 'ensureCadence'>;
  prospects: Pick<Prospects, 'insert' | 'discard'>;
  messageWriter: Pick<MessageWriter, 'write'>;
  /** CAMPAIGN_MAX_PROSPECTS. */
  maxProspects: number;
  signal: AbortSignal;
  /** The request's trace, for the model calls writing the messages. */
  trace?: TraceContext;
}

/** The rows asked for, in order, first occurrence of a repeated id; 404/400 when the sheet or a row is unknown. */
export async function sheetRows(deps: AddRowsDeps, sheetId: string, rowIds: string[]): Promise<SheetRow[]> {
  const sheet = await deps.sheets.get(deps.workspaceId, sheetId);
  if (!sheet) throw notFound('sheet');
  const ids = [...new Set(rowIds)];
  const found = await deps.sheets.someRows(sheetId, ids);
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw invalidRequest(`rowIds not in sheet ${sheetId}: ${missing.map((id) => JSON.stringify(id)).join(', ')}`);
  }
  return ids.map((id) => found.get(id)!);
}

/**
 * A prospect per row, messages written. Nothing is stored yet: a failure here, a client that
 * leaves, or a process that dies during the (slow) generation leaves nothing behind.
 */
export async function writeProspects(deps: AddRowsDeps, brief: Brief, sheetId: string, rows: SheetRow[]): Promise<NewProspect[]> {
  const messages = await deps.messageWriter.write(brief, rows.map((r) => r.values), deps.workspaceId, deps.signal, deps.trace);
  return rows.map((row, i) => ({ sheetId, rowId: row.rowId, context: row.values, message: messages[i]! }));
}

const full = (wanted: number, max: number) =>
  new ServiceError('campaign_full', `The campaign cannot take ${wanted} more prospects (at most ${max}); nothing was added`);

/** 409 before any work when the rows could not fit even now; the reservation decides for real. */
export function checkRoom(deps: Pick<AddRowsDeps, 'maxProspects'>, campaign: Pick<CampaignDoc, 'prospectCount'> | null, wanted: number): void {
  if ((campaign?.prospectCount ?? 0) + wanted > deps.maxProspects) throw full(wanted, deps.maxProspects);
}

/**
 * Stores written prospects in a campaign: places reserved with one conditional update (so
 * concurrent adds never pass CAMPAIGN_MAX_PROSPECTS), prospects inserted under the unique index
 * (a row another request inserted meanwhile is a duplicate), unused places released, the
 * default cadence set on first prospects.
 */
export async function placeProspects(deps: AddRowsDeps, campaign: CampaignDoc, written: NewProspect[]): Promise<{ added: number; duplicates: number }> {
  const { campaigns, prospects, maxProspects: max } = deps;
  if (!(await campaigns.reserve(campaign._id, written.length, max))) throw full(written.length, max);
  // Every place goes back unless the prospects in it stay: insert is all or nothing, and what it
  // inserted is taken back if the cadence cannot be set.
  let unused = written.length;
  try {
    const inserted = await prospects.insert(deps.workspaceId, campaign._id, written);
    if (inserted.added.length > 0) {
      try {
        await campaigns.ensureCadence(campaign._id, defaultCadence(campaign.language));
      } catch (err) {
        await prospects.discard(inserted.added.map((p) => p._id));
        throw err;
      }
    }
    unused = inserted.duplicates;
    return { added: inserted.added.length, duplicates: inserted.duplicates };
  } finally {
    await campaigns.release(campaign._id, unused);
  }
}
