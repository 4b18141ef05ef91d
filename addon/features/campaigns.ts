/**
 * Campaigns from selected rows. Rows get stable ids in a hidden column, are synced to the
 * server's sheet (the sheets extension), and a campaign is created from the first 25 and given
 * the rest 25 at a time. A "Prospects" tab shows each prospect's status and messages for review;
 * "Sync" sends the cells the user changed (and only those) back, "Refresh" pulls the current state.
 */
import { PROSPECT_STATUSES } from '../../shared/schemas/prospects.ts';
import { maxItems, type ProspectaClient } from '../api/client.ts';
import type { PropertiesPort, SheetPort } from './ports.ts';

export const ROW_ID_COLUMN = 'prospecta row id';
export const PROSPECTS_TAB = 'Prospects';
const PER_CALL = maxItems('addProspects', 'rowIds');
const ROWS_PER_UPSERT = maxItems('upsertSheetRows', 'rows');

/** The Prospects tab's columns; the last one, hidden, keeps what was pulled, to see edits. */
const TAB = ['Prospect id', 'Row', 'Status', 'Connection note', 'Email subject', 'Email body', 'Updated', 'prospecta pulled'] as const;
const EDITABLE: Array<[(typeof TAB)[number], 'status' | 'connectionNote' | 'emailSubject' | 'emailBody']> = [
  ['Status', 'status'],
  ['Connection note', 'connectionNote'],
  ['Email subject', 'emailSubject'],
  ['Email body', 'emailBody'],
];

export interface CampaignFields {
  name: string;
  offering: string;
  templateId?: string;
  senderName?: string;
  tone?: string;
  language?: string;
  businessContext?: string;
}

const newRowId = () => `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** Each selected row's stable id, given in the hidden id column when it has none. */
export function ensureRowIds(sheet: SheetPort, first: number, last: number): string[] {
  const column = sheet.ensureColumn(ROW_ID_COLUMN);
  sheet.hideColumn(column);
  const cells = sheet.readRows(first, last - first + 1);
  const ids = cells.map((row) => (row[column - 1] ?? '').trim() || newRowId());
  sheet.writeColumn(first, column, ids);
  return ids;
}

/** The selected rows on the server, under the sheet id this tab keeps in the document's properties. */
export function syncRows(client: ProspectaClient, props: PropertiesPort, sheet: SheetPort, first: number, last: number): { sheetId: string; rowIds: string[] } {
  const rowIds = ensureRowIds(sheet, first, last);
  const headers = sheet.headers();
  const cells = sheet.readRows(first, last - first + 1);
  const rows = cells.map((row, i) => ({
    rowId: rowIds[i]!,
    values: Object.fromEntries(
      headers.flatMap((h, c) => (h.trim() && !h.startsWith('prospecta') && (row[c] ?? '').trim() ? [[h.trim(), (row[c] ?? '').slice(0, 5000)]] : [])),
    ),
  }));
  const key = `prospecta.sheetId.${sheet.name}`;
  let sheetId = props.get(key);
  for (let i = 0; i < rows.length; i += ROWS_PER_UPSERT) {
    const part = rows.slice(i, i + ROWS_PER_UPSERT);
    if (sheetId) {
      try {
        client.call('upsertSheetRows', { sheetId, rows: part });
        continue;
      } catch (err) {
        // The server's sheet was deleted: start a new one.
        if ((err as { status?: number }).status !== 404) throw err;
      }
    }
    sheetId = client.call('createSheet', { name: sheet.name.slice(0, 120), rows: part }).sheetId;
    props.set(key, sheetId);
  }
  return { sheetId: sheetId!, rowIds };
}

export function createCampaignFromRows(
  client: ProspectaClient,
  props: PropertiesPort,
  sheet: SheetPort,
  first: number,
  last: number,
  fields: CampaignFields,
): { campaignId: string; created: number } {
  const { sheetId, rowIds } = syncRows(client, props, sheet, first, last);
  const unique = [...new Set(rowIds)];
  const created = client.call('createCampaign', { ...fields, sheetId, rowIds: unique.slice(0, PER_CALL) });
  let total = created.created;
  for (let i = PER_CALL; i < unique.length; i += PER_CALL) {
    total += client.call('addProspects', { campaignId: created.campaignId, sheetId, rowIds: unique.slice(i, i + PER_CALL) }).added;
  }
  props.set('prospecta.campaign', created.campaignId);
  return { campaignId: created.campaignId, created: total };
}

const pulledOf = (p: { status: string; connectionNote: string; emailSubject: string; emailBody: string }) =>
  JSON.stringify([p.status, p.connectionNote, p.emailSubject, p.emailBody]);

/** The Prospects tab, rewritten from the server's current state. */
export function refreshProspects(client: ProspectaClient, campaignId: string, tab: SheetPort): number {
  const { prospects } = client.call('listProspects', { campaignId });
  tab.replaceAll([
    [...TAB],
    ...prospects.map((p) => [p.prospectId, p.rowId, p.status, p.connectionNote, p.emailSubject, p.emailBody, p.updatedAt, pulledOf(p)]),
  ]);
  tab.hideColumn(TAB.indexOf('prospecta pulled') + 1);
  tab.hideColumn(TAB.indexOf('Prospect id') + 1);
  return prospects.length;
}

/** Sends the cells changed since the last refresh, then refreshes; says what it did. */
export function syncProspects(client: ProspectaClient, campaignId: string, tab: SheetPort): { updated: number; problems: string[] } {
  const headers = tab.headers();
  const at = (label: string) => headers.indexOf(label);
  const rows = tab.lastRow() > 1 ? tab.readRows(2, tab.lastRow() - 1) : [];
  const problems: string[] = [];
  let updated = 0;
  rows.forEach((row, i) => {
    const id = row[at('Prospect id')] ?? '';
    let pulled: string[];
    try {
      pulled = JSON.parse(row[at('prospecta pulled')] ?? '');
    } catch {
      return;
    }
    const changes: Record<string, string> = {};
    EDITABLE.forEach(([label, field], k) => {
      const value = row[at(label)] ?? '';
      if (value !== pulled[k]) changes[field] = field === 'status' ? value.trim().toLowerCase().replace(/\s+/g, '_') : value;
    });
    if (Object.keys(changes).length === 0) return;
    if (changes.status !== undefined && !(PROSPECT_STATUSES as readonly string[]).includes(changes.status)) {
      problems.push(`row ${i + 2}: status must be one of ${PROSPECT_STATUSES.join(', ')}`);
      return;
    }
    try {
      client.call('updateProspect', { prospectId: id, ...changes });
      updated++;
    } catch (err) {
      problems.push(`row ${i + 2}: ${(err as Error).message}`);
    }
  });
  // With problems, the tab keeps the user's edits so they can be fixed and synced again.
  if (problems.length === 0) refreshProspects(client, campaignId, tab);
  return { updated, problems };
}
