/**
 * Campaigns from selected rows. Rows get stable ids in a hidden column, are synced to the
 * server's sheet (the sheets extension), and a campaign is created from the first 25 and given
 * the rest 25 at a time. The campaign's id and how far it got are saved after every call, so a
 * run that Apps Script stops half-way is finished by running it again on the same rows (the
 * server skips rows already in the campaign) instead of creating a second campaign. A
 * "Prospects" tab shows each prospect's status and messages for review; "Sync" sends the cells
 * the user changed (and only those) back, "Refresh" pulls the current state.
 */
import { PROSPECT_STATUSES } from '../../shared/schemas/prospects.ts';
import { ApiCallError, limitOf, maxItems, type ProspectaClient } from '../api/client.ts';
import { isOwnColumn } from './columns.ts';
import { plainError } from './errors.ts';
import type { PropertiesPort, SheetPort } from './ports.ts';

export const ROW_ID_COLUMN = 'prospecta row id';
export const PROSPECTS_TAB = 'Prospects';
const FIRST_CALL = maxItems('createCampaign', 'rowIds');
const PER_CALL = maxItems('addProspects', 'rowIds');
const ROWS_PER_UPSERT = maxItems('upsertSheetRows', 'rows');
const CELL_CHARS = limitOf('upsertSheetRows', 'rows.[].values.*', 'maxLength');
const SHEET_NAME_CHARS = limitOf('createSheet', 'name', 'maxLength');
/** The campaign the Prospects tab shows. */
export const CAMPAIGN_KEY = 'prospecta.campaign';
/** Prefix of the campaigns being created, one property per selection until all its rows are in. */
export const CAMPAIGN_RUN_KEY = 'prospecta.campaignRun';

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
function ensureRowIds(sheet: SheetPort, first: number, last: number): string[] {
  const column = sheet.ensureColumn(ROW_ID_COLUMN);
  sheet.hideColumn(column);
  const cells = sheet.readRows(first, last - first + 1);
  const ids = cells.map((row) => (row[column - 1] ?? '').trim() || newRowId());
  sheet.writeColumn(first, column, ids);
  return ids;
}

/** The selected rows on the server, under the sheet id this tab keeps in the document's properties. */
function syncRows(client: ProspectaClient, props: PropertiesPort, sheet: SheetPort, first: number, last: number): { sheetId: string; rowIds: string[] } {
  const rowIds = ensureRowIds(sheet, first, last);
  const headers = sheet.headers();
  const cells = sheet.readRows(first, last - first + 1);
  const rows = cells.map((row, i) => ({
    rowId: rowIds[i]!,
    values: Object.fromEntries(
      headers.flatMap((h, c) => (h.trim() && !isOwnColumn(h) && (row[c] ?? '').trim() ? [[h.trim(), (row[c] ?? '').slice(0, CELL_CHARS)]] : [])),
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
        if (!(err instanceof ApiCallError && err.status === 404)) throw err;
      }
    }
    sheetId = client.call('createSheet', { name: sheet.name.slice(0, SHEET_NAME_CHARS), rows: part }).sheetId;
    props.set(key, sheetId);
  }
  return { sheetId: sheetId!, rowIds };
}

/** A campaign being created: saved after each call so a stopped execution can be finished. */
interface CampaignRun {
  campaignId: string;
  name: string;
  /** How many of the selection's rows were sent so far. */
  next: number;
  created: number;
}

/**
 * The property that keeps the campaign being created from these rows: the tab, the server's
 * sheet and the rows' ids. The ids would outgrow a property value (9 kB) for large selections,
 * so their count and a 32-bit FNV-1a digest stand for them.
 */
function runKey(tab: string, sheetId: string, rowIds: string[]): string {
  let hash = 0x811c9dc5;
  for (const ch of [tab, sheetId, ...rowIds].join('\n')) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return `${CAMPAIGN_RUN_KEY}.${rowIds.length}.${hash.toString(36)}`;
}

function loadRun(props: PropertiesPort, key: string): CampaignRun | null {
  const raw = props.get(key);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as CampaignRun;
  } catch {
    return null;
  }
}

function saveRun(props: PropertiesPort, key: string, run: CampaignRun | null): void {
  if (run) props.set(key, JSON.stringify(run));
  else props.delete(key);
}

/**
 * A campaign with one prospect per selected row. When a previous run on the same rows stopped
 * before all of them were in, that campaign is finished instead (`resumed`), with its own name
 * and fields. `created` adds up what the server reported created; an answer lost when an
 * execution was stopped is not in it, so the campaign's prospect list is the count to show.
 */
export function createCampaignFromRows(
  client: ProspectaClient,
  props: PropertiesPort,
  sheet: SheetPort,
  first: number,
  last: number,
  fields: CampaignFields,
): { campaignId: string; name: string; created: number; resumed: boolean } {
  const { sheetId, rowIds } = syncRows(client, props, sheet, first, last);
  const unique = [...new Set(rowIds)];
  const key = runKey(sheet.name, sheetId, unique);
  let run = loadRun(props, key);
  const resumed = run !== null;
  if (!run) {
    const created = client.call('createCampaign', { ...fields, sheetId, rowIds: unique.slice(0, FIRST_CALL) });
    run = { campaignId: created.campaignId, name: created.campaignName, next: Math.min(FIRST_CALL, unique.length), created: created.created };
    saveRun(props, key, run);
    props.set(CAMPAIGN_KEY, created.campaignId);
  }
  while (run.next < unique.length) {
    let added: number;
    try {
      added = client.call('addProspects', { campaignId: run.campaignId, sheetId, rowIds: unique.slice(run.next, run.next + PER_CALL) }).added;
    } catch (err) {
      // The unfinished campaign was deleted meanwhile (the sheet was just synced): start afresh.
      if (!(resumed && err instanceof ApiCallError && err.status === 404)) throw err;
      saveRun(props, key, null);
      return createCampaignFromRows(client, props, sheet, first, last, fields);
    }
    run = { ...run, next: run.next + PER_CALL, created: run.created + added };
    saveRun(props, key, run);
  }
  saveRun(props, key, null);
  props.set(CAMPAIGN_KEY, run.campaignId);
  return { campaignId: run.campaignId, name: run.name, created: run.created, resumed };
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
      problems.push(`row ${i + 2}: ${plainError(err)}`);
    }
  });
  // With problems, the tab keeps the user's edits so they can be fixed and synced again.
  if (problems.length === 0) refreshProspects(client, campaignId, tab);
  return { updated, problems };
}
