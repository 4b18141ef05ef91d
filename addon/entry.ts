/// <reference types="google-apps-script" />
/**
 * The only names Apps Script sees: menu items, triggers and sidebar calls. addon/build.mjs
 * appends a top-level function for each export so Apps Script can find it.
 */
import { ProspectaClient } from './api/client.ts';
import { createCampaignFromRows, PROSPECTS_TAB, refreshProspects, syncProspects, type CampaignFields } from './features/campaigns.ts';
import { plainError } from './features/errors.ts';
import { FIELD_LABELS } from './features/enrich-rows.ts';
import { searchCompaniesIntoSheet, searchPeopleIntoSheet } from './features/search.ts';
import { activeJobs, cancelJob, loadJob, runJobs } from './features/job.ts';
import { describeJob, jobDeps, NotConfigured, startRun, type RunKind, type Runtime } from './features/runs.ts';
import { loadSettings, saveSettings, SettingsError, testConnection as runTestConnection } from './features/settings.ts';
import { urlFetch } from './gas/http.ts';
import { documentProperties, userProperties } from './gas/properties.ts';
import { documentLock, gasClock, gasTriggers } from './gas/runtime.ts';
import { sheetNamed, sheetOrNew } from './gas/sheet.ts';

const DEFAULT_FIELDS = ['email', 'emailStatus', 'title', 'linkedinUrl', 'phone'];

function runtime(): Runtime {
  return { http: urlFetch(), user: userProperties(), document: documentProperties(), sheet: sheetNamed, triggers: gasTriggers, lock: documentLock(), clock: gasClock };
}

/** The selected rows of the active sheet, header excluded. */
function selection(): { sheet: string; first: number; last: number } {
  const range = SpreadsheetApp.getActiveRange();
  const sheet = SpreadsheetApp.getActiveSheet();
  if (!range) return { sheet: sheet.getName(), first: 2, last: sheet.getLastRow() };
  return { sheet: sheet.getName(), first: Math.max(range.getRow(), 2), last: range.getLastRow() };
}

function start(kind: 'cnpj' | 'enrich', options = {}): void {
  const ui = SpreadsheetApp.getUi();
  const { sheet, first, last } = selection();
  if (last < first) return void ui.alert('prospecta', 'Select the rows to work on (below the header row).', ui.ButtonSet.OK);
  try {
    ui.alert('prospecta', describeJob(startRun(runtime(), kind, sheet, first, last, options)), ui.ButtonSet.OK);
  } catch (err) {
    if (!(err instanceof NotConfigured)) throw err;
    ui.alert('prospecta', err.message, ui.ButtonSet.OK);
  }
}

/** Menu: company data for the CNPJ column of the selected rows. */
export function fillCnpj(): void {
  start('cnpj');
}

/** Menu: email, title, LinkedIn and phone for the selected people or companies. */
export function enrichSelection(): void {
  start('enrich', { fields: DEFAULT_FIELDS });
}

/** Time-driven trigger: goes on with the runs an execution had to hand over. */
export function continueJobs(): void {
  runJobs(jobDeps(runtime()));
}

/** Menu: stops every run in progress after its current chunk. */
export function cancelRuns(): void {
  const props = documentProperties();
  const cancelled = activeJobs(props).map((id) => cancelJob(props, id)).filter(Boolean);
  SpreadsheetApp.getUi().alert('prospecta', cancelled.length ? `Cancelled ${cancelled.length} run(s).` : 'No run in progress.', SpreadsheetApp.getUi().ButtonSet.OK);
}

export function onOpen(): void {
  SpreadsheetApp.getUi()
    .createAddonMenu()
    .addItem('Open prospecta', 'showSidebar')
    .addItem('Enrich selected rows', 'enrichSelection')
    .addItem('Fill CNPJ data for selected rows', 'fillCnpj')
    .addItem('Cancel runs in progress', 'cancelRuns')
    .addSeparator()
    .addItem('Create campaign from selected rows…', 'createCampaignFromSelection')
    .addItem('Refresh prospects', 'refreshProspectsTab')
    .addItem('Sync prospect edits', 'syncProspectEdits')
    .addSeparator()
    .addItem('Settings…', 'showSettings')
    .addItem('Test connection', 'testConnection')
    .addToUi();
}

export function onInstall(): void {
  onOpen();
}

export function showSettings(): void {
  const ui = SpreadsheetApp.getUi();
  const key = ui.prompt('prospecta: API key', 'Paste your workspace API key (service_live_…).', ui.ButtonSet.OK_CANCEL);
  if (key.getSelectedButton() !== ui.Button.OK) return;
  const url = ui.prompt('prospecta: server URL', 'The address of your prospecta server (https://…).', ui.ButtonSet.OK_CANCEL);
  if (url.getSelectedButton() !== ui.Button.OK) return;
  try {
    saveSettings(userProperties(), { apiKey: key.getResponseText(), serverUrl: url.getResponseText() });
    ui.alert('prospecta', runTestConnection(userProperties(), urlFetch()).message, ui.ButtonSet.OK);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    ui.alert('prospecta', err.message, ui.ButtonSet.OK);
  }
}

export function testConnection(): void {
  const ui = SpreadsheetApp.getUi();
  ui.alert('prospecta', runTestConnection(userProperties(), urlFetch()).message, ui.ButtonSet.OK);
}

function client(): ProspectaClient | null {
  const settings = loadSettings(userProperties());
  if (!settings) SpreadsheetApp.getUi().alert('prospecta', 'Open Settings and enter your API key and server URL first.', SpreadsheetApp.getUi().ButtonSet.OK);
  return settings ? new ProspectaClient(urlFetch(), settings) : null;
}

function ask(title: string, prompt: string): string | null {
  const ui = SpreadsheetApp.getUi();
  const answer = ui.prompt(title, prompt, ui.ButtonSet.OK_CANCEL);
  return answer.getSelectedButton() === ui.Button.OK && answer.getResponseText().trim() ? answer.getResponseText().trim() : null;
}

/** For the sidebar: a campaign from the selected rows, from a template and/or typed fields. */
export function sidebarCreateCampaign(input: Omit<CampaignFields, 'offering'> & { offering?: string }): string {
  const api = client();
  if (!api) throw new Error('Open Settings and enter your API key and server URL first.');
  // The interface wants an offering even with a template: the template's, unless one was typed.
  const template = input.templateId ? api.call('listTemplates', {}).templates.find((t) => t.templateId === input.templateId) : undefined;
  const offering = input.offering ?? template?.offering;
  if (!offering) throw new Error('Type what you offer, or choose a template.');
  const fields: CampaignFields = { ...input, offering };
  const { sheet, first, last } = selection();
  if (last < first) throw new Error('Select the rows to make prospects of (below the header row).');
  try {
    const { campaignId, created } = createCampaignFromRows(api, documentProperties(), sheetNamed(sheet)!, first, last, fields);
    refreshProspects(api, campaignId, sheetOrNew(PROSPECTS_TAB));
    return `Campaign "${fields.name}" created with ${created} prospects: review them in the ${PROSPECTS_TAB} tab.`;
  } catch (err) {
    throw new Error(plainError(err));
  }
}

/** Menu: a campaign (draft) from the selected rows, one personalized message per row. */
export function createCampaignFromSelection(): void {
  const api = client();
  if (!api) return;
  const ui = SpreadsheetApp.getUi();
  const { sheet, first, last } = selection();
  const name = ask('New campaign', 'Campaign name');
  const offering = name && ask('New campaign', 'What are you offering? (one or two sentences)');
  if (!name || !offering) return;
  try {
    const { created } = createCampaignFromRows(api, documentProperties(), sheetNamed(sheet)!, first, last, { name, offering });
    const count = refreshProspects(api, documentProperties().get('prospecta.campaign')!, sheetOrNew(PROSPECTS_TAB));
    ui.alert('prospecta', `Campaign "${name}" created with ${created} prospects; review them in the ${PROSPECTS_TAB} tab (${count} rows).`, ui.ButtonSet.OK);
  } catch (err) {
    ui.alert('prospecta', plainError(err), ui.ButtonSet.OK);
  }
}

/** Menu: the Prospects tab from the server's current state. */
export function refreshProspectsTab(): void {
  const api = client();
  const campaignId = documentProperties().get('prospecta.campaign');
  if (!api || !campaignId) return;
  try {
    refreshProspects(api, campaignId, sheetOrNew(PROSPECTS_TAB));
  } catch (err) {
    SpreadsheetApp.getUi().alert('prospecta', plainError(err), SpreadsheetApp.getUi().ButtonSet.OK);
  }
}

/** Menu: sends the edits made in the Prospects tab. */
export function syncProspectEdits(): void {
  const api = client();
  const campaignId = documentProperties().get('prospecta.campaign');
  if (!api || !campaignId) return;
  const ui = SpreadsheetApp.getUi();
  try {
    const { updated, problems } = syncProspects(api, campaignId, sheetOrNew(PROSPECTS_TAB));
    ui.alert('prospecta', `${updated} prospect(s) updated.${problems.length ? `\nNot sent:\n${problems.join('\n')}` : ''}`, ui.ButtonSet.OK);
  } catch (err) {
    ui.alert('prospecta', plainError(err), ui.ButtonSet.OK);
  }
}

/** Menu: the sidebar, where every run is configured. */
export function showSidebar(): void {
  SpreadsheetApp.getUi().showSidebar(HtmlService.createHtmlOutputFromFile('Sidebar').setTitle('prospecta'));
}

/** For the sidebar: settings, the fields on offer, the active sheet's headers, the last run. */
export function sidebarState() {
  const settings = loadSettings(userProperties());
  let fields = Object.keys(FIELD_LABELS);
  let balance: string | null = null;
  let templates: Array<{ templateId: string; name: string }> = [];
  if (settings) {
    const api = new ProspectaClient(urlFetch(), settings);
    try {
      const credits = api.call('getCredits', {});
      balance = `${credits.balance} credits`;
      templates = api.call('listTemplates', {}).templates.map((t) => ({ templateId: t.templateId, name: t.name }));
      fields = (api.call('listProviders', {}) as { enrichmentFields?: string[] }).enrichmentFields ?? fields;
    } catch (err) {
      balance = plainError(err);
    }
  }
  const sheet = SpreadsheetApp.getActiveSheet();
  const columns = sheet.getLastColumn();
  const headers = columns ? sheet.getRange(1, 1, 1, columns).getValues()[0]!.map(String).filter((h) => h && !h.startsWith('prospecta')) : [];
  const { first, last } = selection();
  const lastJob = documentProperties().get('prospecta.lastJob');
  const job = lastJob ? loadJob(documentProperties(), lastJob) : null;
  return {
    configured: Boolean(settings),
    balance,
    fields,
    labels: FIELD_LABELS,
    headers,
    selectedRows: Math.max(0, last - first + 1),
    templates,
    run: job ? { id: job.id, text: describeJob(job), running: job.state === 'running' } : null,
  };
}

/** For the sidebar: starts a run on the selected rows. Errors reach the sidebar's failure handler. */
export function sidebarStart(kind: RunKind, options: Record<string, unknown>) {
  const { sheet, first, last } = selection();
  if (last < first) throw new Error('Select the rows to work on (below the header row).');
  const job = startRun(runtime(), kind, sheet, first, last, options as never);
  documentProperties().set('prospecta.lastJob', job.id);
  return sidebarState();
}

export function sidebarCancel() {
  const props = documentProperties();
  for (const id of activeJobs(props)) cancelJob(props, id);
  return sidebarState();
}

export function sidebarSaveSettings(apiKey: string, serverUrl: string): string {
  saveSettings(userProperties(), { apiKey, serverUrl });
  const result = runTestConnection(userProperties(), urlFetch());
  if (!result.ok) throw new Error(result.message);
  return result.message;
}

/** For the sidebar: a search written to a new tab named after it. */
export function sidebarSearch(kind: 'people' | 'companies', filters: Record<string, unknown>): string {
  const api = client();
  if (!api) throw new Error('Open Settings and enter your API key and server URL first.');
  const name = `${kind === 'people' ? 'People' : 'Companies'}: ${Object.entries(filters).filter(([k]) => k !== 'limit').map(([, v]) => v).join(', ')}`.slice(0, 90);
  const tab = sheetOrNew(name);
  try {
    const found = kind === 'people' ? searchPeopleIntoSheet(api, filters, tab) : searchCompaniesIntoSheet(api, filters, tab);
    return `${found} found, written to the tab "${name}".`;
  } catch (err) {
    throw new Error(plainError(err));
  }
}
