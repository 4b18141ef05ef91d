/// <reference types="google-apps-script" />
/**
 * The only names Apps Script sees: menu items, triggers and sidebar calls. addon/build.mjs
 * appends a top-level function for each export so Apps Script can find it.
 */
import type { ProspectaClient } from './api/client.ts';
import { agentLimits, askAgent, selectionContext, type AgentTurn } from './features/agent.ts';
import { CAMPAIGN_KEY, createCampaignFromRows, PROSPECTS_TAB, refreshProspects, syncProspects, type CampaignFields } from './features/campaigns.ts';
import { detectedColumns, isOwnColumn } from './features/columns.ts';
import { plainError, PlainError } from './features/errors.ts';
import { FIELD_LABELS, type EnrichOptions } from './features/enrich-rows.ts';
import { exportLimits, MOST_CHANGES_A_RELEASE, prices, searchLimits } from './features/rules.ts';
import { CHANGES_COLUMN, checkChanges, type ChangesOptions } from './features/changes.ts';
import { exportView, pollExport, SPREADSHEET_CELLS, startExport, type ExportDeps, type ExportFilters } from './features/export.ts';
import { MAX_ROWS_PER_SEARCH, searchCompaniesIntoSheet, searchPeopleIntoSheet, searchTabName, type SearchKind } from './features/search.ts';
import { activeJobs, cancelJob, jobHistory, runJobs, type Job } from './features/job.ts';
import { clientOf, describeJob, jobDeps, startRun, type RunKind, type RunOptions, type Runtime } from './features/runs.ts';
import {
  BUILT_SERVER,
  loadSettings,
  MAX_AGE_DAYS,
  maxAgeDays,
  maxAgeOption,
  saveSettings,
  setMaxAgeDays,
  SettingsError,
  testConnection as runTestConnection,
} from './features/settings.ts';
import { aiFormula, cnpjFormula, enrichFormula, perCell, safeMode, setSafeMode, type FormulaDeps } from './features/formulas.ts';
import { paidResults } from './features/paid-results.ts';
import { argumentValue, parseCall } from './features/refresh.ts';
import { urlFetch } from './gas/http.ts';
import { documentCache, documentProperties, userProperties } from './gas/properties.ts';
import { documentLock, gasClock, gasTriggers, sha256 } from './gas/runtime.ts';
import { cellsLeft, sheetNamed, sheetOrNew } from './gas/sheet.ts';

const DEFAULT_FIELDS: EnrichOptions['fields'] = ['email', 'emailStatus', 'title', 'linkedinUrl', 'phone'];

function runtime(): Runtime {
  return { http: urlFetch(), user: userProperties(), document: documentProperties(), sheet: sheetNamed, triggers: gasTriggers, lock: documentLock(), clock: gasClock };
}

/** The client for the user's settings; NotConfigured (a PlainError) when there are none. */
function api(): ProspectaClient {
  return clientOf({ http: urlFetch(), user: userProperties() });
}

function alert(message: string): void {
  const ui = SpreadsheetApp.getUi();
  ui.alert('prospecta', message, ui.ButtonSet.OK);
}

interface Selection {
  sheet: string;
  first: number;
  last: number;
}

/** The selected rows of the active sheet, header excluded. */
function selection(): Selection {
  const range = SpreadsheetApp.getActiveRange();
  const sheet = SpreadsheetApp.getActiveSheet();
  if (!range) return { sheet: sheet.getName(), first: 2, last: sheet.getLastRow() };
  return { sheet: sheet.getName(), first: Math.max(range.getRow(), 2), last: range.getLastRow() };
}

/** The selection, or a PlainError asking for one when only the header row is selected. */
function selectedRows(purpose = 'to work on'): Selection {
  const rows = selection();
  if (rows.last < rows.first) throw new PlainError(`Select the rows ${purpose} (below the header row).`);
  return rows;
}

/** A run's options with the user's settings that apply to it (enrich's freshness). */
function withSettings<K extends RunKind>(kind: K, options: RunOptions[K]): RunOptions[K] {
  return kind === 'enrich' ? { ...options, ...maxAgeOption(userProperties()) } : options;
}

function start<K extends 'cnpj' | 'enrich'>(kind: K, options: RunOptions[K]): void {
  try {
    const { sheet, first, last } = selectedRows();
    alert(describeJob(startRun(runtime(), kind, sheet, first, last, withSettings(kind, options))));
  } catch (err) {
    if (!(err instanceof PlainError)) throw err;
    alert(err.message);
  }
}

/** Menu: company data for the CNPJ column of the selected rows. */
export function fillCnpj(): void {
  start('cnpj', {});
}

/** Menu: email, title, LinkedIn and phone for the selected people or companies. */
export function enrichSelection(): void {
  start('enrich', { fields: DEFAULT_FIELDS });
}

/** Time-driven trigger: writes the results the server's jobs finished, while the sheet is closed too. */
export function continueJobs(): void {
  runJobs(jobDeps(runtime()));
}

/** Menu: cancels every run in progress; what they had finished is still written. */
export function cancelRuns(): void {
  try {
    const deps = jobDeps(runtime());
    const cancelled = activeJobs(deps.properties).map((id) => cancelJob(deps, id)).filter(Boolean);
    alert(cancelled.length ? `Cancelled ${cancelled.length} run(s); what they had finished is still written.` : 'No run in progress.');
  } catch (err) {
    alert(plainError(err));
  }
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
  const url = BUILT_SERVER ? null : ui.prompt('prospecta: server URL', 'The address of your prospecta server (https://…).', ui.ButtonSet.OK_CANCEL);
  if (url && url.getSelectedButton() !== ui.Button.OK) return;
  try {
    saveSettings(userProperties(), { apiKey: key.getResponseText(), serverUrl: url?.getResponseText() ?? '' });
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

function ask(title: string, prompt: string): string | null {
  const ui = SpreadsheetApp.getUi();
  const answer = ui.prompt(title, prompt, ui.ButtonSet.OK_CANCEL);
  return answer.getSelectedButton() === ui.Button.OK && answer.getResponseText().trim() ? answer.getResponseText().trim() : null;
}

const CAMPAIGN_ROWS = 'to make prospects of';

/**
 * The one way a campaign is made, from the menu or the sidebar: the selected rows become
 * prospects (finishing the campaign a stopped run left half-made on the same rows), and the
 * Prospects tab shows them.
 */
function campaignFromSelection(client: ProspectaClient, rows: Selection, fields: CampaignFields): string {
  const { campaignId, name, resumed } = createCampaignFromRows(client, documentProperties(), sheetNamed(rows.sheet)!, rows.first, rows.last, fields);
  const count = refreshProspects(client, campaignId, sheetOrNew(PROSPECTS_TAB));
  return resumed
    ? `Campaign "${name}" was already started from these rows; it is now complete, with ${count} prospects: review them in the ${PROSPECTS_TAB} tab.`
    : `Campaign "${name}" created with ${count} prospects: review them in the ${PROSPECTS_TAB} tab.`;
}

/** For the sidebar: a campaign from the selected rows, from a template and/or typed fields. */
export function sidebarCreateCampaign(input: Omit<CampaignFields, 'offering'> & { offering?: string }): string {
  try {
    const client = api();
    const rows = selectedRows(CAMPAIGN_ROWS);
    // The interface wants an offering even with a template: the template's, unless one was typed.
    const template = input.templateId ? client.call('listTemplates', {}).templates.find((t) => t.templateId === input.templateId) : undefined;
    const offering = input.offering ?? template?.offering;
    if (!offering) throw new PlainError('Type what you offer, or choose a template.');
    return campaignFromSelection(client, rows, { ...input, offering });
  } catch (err) {
    throw new Error(plainError(err));
  }
}

/** Menu: a campaign (draft) from the selected rows, one personalized message per row. */
export function createCampaignFromSelection(): void {
  try {
    const client = api();
    const rows = selectedRows(CAMPAIGN_ROWS);
    const name = ask('New campaign', 'Campaign name');
    const offering = name && ask('New campaign', 'What are you offering? (one or two sentences)');
    if (!name || !offering) return;
    alert(campaignFromSelection(client, rows, { name, offering }));
  } catch (err) {
    alert(plainError(err));
  }
}

/** The campaign the Prospects tab shows, or a PlainError when none was made in this document. */
function currentCampaign(): string {
  const campaignId = documentProperties().get(CAMPAIGN_KEY);
  if (!campaignId) throw new PlainError('No campaign yet: create one from selected rows first.');
  return campaignId;
}

/** Menu: the Prospects tab from the server's current state. */
export function refreshProspectsTab(): void {
  try {
    const client = api();
    refreshProspects(client, currentCampaign(), sheetOrNew(PROSPECTS_TAB));
  } catch (err) {
    alert(plainError(err));
  }
}

/** Menu: sends the edits made in the Prospects tab. */
export function syncProspectEdits(): void {
  try {
    const client = api();
    const { updated, problems } = syncProspects(client, currentCampaign(), sheetOrNew(PROSPECTS_TAB));
    alert(`${updated} prospect(s) updated.${problems.length ? `\nNot sent:\n${problems.join('\n')}` : ''}`);
  } catch (err) {
    alert(plainError(err));
  }
}

/** Menu: the sidebar, where every run is configured. */
export function showSidebar(): void {
  SpreadsheetApp.getUi().showSidebar(HtmlService.createHtmlOutputFromFile('Sidebar').setTitle('prospecta'));
}

/** A run as the Jobs panel lists it. */
function jobView(job: Job) {
  const requests = job.requests || 1;
  const finished = job.server ? job.server.finished : job.state === 'running' ? 0 : requests;
  return {
    id: job.id,
    title: `${RUN_TITLES[job.kind as RunKind] ?? job.kind}: ${job.sheet}, rows ${job.first}–${job.last}`,
    text: describeJob(job),
    running: job.state === 'running',
    cancelling: Boolean(job.server?.cancelling),
    progress: Math.min(1, finished / requests),
    credits: Math.max(job.totals.credits, job.server?.credits ?? 0),
  };
}

const RUN_TITLES: Record<RunKind, string> = { enrich: 'Enrich', cnpj: 'CNPJ fill', aiColumn: 'AI column', research: 'Research' };

/** The Jobs panel: every run of this document, newest first. */
function jobsPanel() {
  return jobHistory(documentProperties()).map(jobView);
}

/** The catalog's providers as the Enrich tab offers them: by name, with what a call costs. */
type ProviderChoice = { id: string; name: string; cost: number; outputs: string[] };

/** For the sidebar: settings, the fields and providers on offer, the active sheet's headers and detected columns, the runs. */
export function sidebarState() {
  const settings = loadSettings(userProperties());
  let fields = Object.keys(FIELD_LABELS);
  let providers: ProviderChoice[] = [];
  let balance: string | null = null;
  let templates: Array<{ templateId: string; name: string }> = [];
  /** Null until the server says (no settings yet, or it could not be reached). */
  let languageModel: { configured: boolean; variable: string } | null = null;
  if (settings) {
    const client = api();
    try {
      const credits = client.call('getCredits', {});
      balance = `${credits.balance} credits`;
      templates = client.call('listTemplates', {}).templates.map((t) => ({ templateId: t.templateId, name: t.name }));
      const catalog = client.call('listProviders', {});
      fields = catalog.enrichmentFields;
      providers = catalog.providers.filter((p) => p.configured).map((p) => ({ id: p.id, name: p.name, cost: p.cost, outputs: p.outputs }));
      languageModel = catalog.languageModel;
    } catch (err) {
      balance = plainError(err);
    }
  }
  const sheet = SpreadsheetApp.getActiveSheet();
  const columns = sheet.getLastColumn();
  const all = columns ? sheet.getRange(1, 1, 1, columns).getValues()[0]!.map(String) : [];
  const headers = all.filter((h) => h && !isOwnColumn(h));
  const { first, last } = selection();
  return {
    configured: Boolean(settings),
    balance,
    fields,
    providers,
    labels: FIELD_LABELS,
    headers,
    detected: detectedColumns(all),
    selectedRows: Math.max(0, last - first + 1),
    templates,
    languageModel,
    prices: prices(),
    searchLimits: { ...searchLimits(), rows: MAX_ROWS_PER_SEARCH },
    exportLimits: exportLimits(),
    mostChangesARelease: MOST_CHANGES_A_RELEASE,
    exportRun: exportView(documentProperties()),
    agentLimits: agentLimits(),
    jobs: jobsPanel(),
    safeMode: safeMode(userProperties()),
    maxAgeDays: maxAgeDays(userProperties()),
    maxAgeLimit: MAX_AGE_DAYS,
    serverFixed: BUILT_SERVER !== null,
  };
}

/** Rows "Try on 5 rows" runs: the first of the selection. */
const TRY_ROWS = 5;

/**
 * For the sidebar: starts a run on the selected rows (their first five when `trial`). Errors
 * reach the sidebar's failure handler. Answers the Jobs panel.
 */
export function sidebarStart<K extends RunKind>(kind: K, options: RunOptions[K], trial = false) {
  const { sheet, first, last } = selectedRows();
  startRun(runtime(), kind, sheet, first, trial ? Math.min(last, first + TRY_ROWS - 1) : last, withSettings(kind, options));
  return jobsPanel();
}

/**
 * For the sidebar's Changes tab: what changed in the registry for the CNPJ column of the selected
 * rows (their first five when `trial`), one line per row; answers what it found and cost.
 */
export function sidebarChanges(options: ChangesOptions, trial = false): string {
  try {
    const client = api();
    const { sheet, first, last } = selectedRows('with CNPJs to check');
    const o = checkChanges(client, urlFetch(), gasClock, sheetNamed(sheet)!, first, trial ? Math.min(last, first + TRY_ROWS - 1) : last, options);
    const counts = `${o.changed} changed, ${o.unchanged} unchanged, ${o.failed} not checked, ${o.skipped} without a CNPJ; ${o.credits} credit${o.credits === 1 ? '' : 's'}`;
    return o.stoppedBy ? `Stopped: ${o.stoppedBy} (${counts}).` : `Done: ${counts}. See the "${CHANGES_COLUMN}" column.`;
  } catch (err) {
    throw new Error(plainError(err));
  }
}

/** For the sidebar's Jobs panel: writes what the server's jobs finished since, then lists the runs. */
export function sidebarJobs() {
  if (activeJobs(documentProperties()).length > 0) runJobs(jobDeps(runtime()));
  return jobsPanel();
}

/** For the sidebar: cancels one run; its finished results are still written. */
export function sidebarCancelRun(id: string) {
  cancelJob(jobDeps(runtime()), id);
  return sidebarJobs();
}

/** For the sidebar: how old a paid enrichment may be to be given again for nothing (null: the server's default). */
export function sidebarSetMaxAge(days: number | null) {
  try {
    setMaxAgeDays(userProperties(), days);
  } catch (err) {
    throw new Error(plainError(err));
  }
  return sidebarState();
}

export function sidebarSaveSettings(apiKey: string, serverUrl = ''): string {
  saveSettings(userProperties(), { apiKey, serverUrl });
  const result = runTestConnection(userProperties(), urlFetch());
  if (!result.ok) throw new Error(result.message);
  return result.message;
}

/**
 * For the sidebar: a search of up to `rows` rows (its pages), written to a new tab named after
 * it, made once the server answered. `exportable`: a company search matched more rows than it
 * wrote, so the sidebar offers to export them all.
 */
export function sidebarSearch(kind: SearchKind, filters: Record<string, unknown>, rows: number): { message: string; exportable: boolean } {
  const name = searchTabName(kind, filters);
  try {
    const client = api();
    const tab = () => sheetOrNew(name);
    const { found, stoppedBy, more } = kind === 'people' ? searchPeopleIntoSheet(client, filters, rows, tab, gasClock) : searchCompaniesIntoSheet(client, filters, rows, tab, gasClock);
    return { message: `${found} found, written to the tab "${name}".${stoppedBy ? ` Stopped before ${rows}: ${stoppedBy}` : ''}`, exportable: kind === 'companies' && more };
  } catch (err) {
    throw new Error(plainError(err));
  }
}

function exportDeps(): ExportDeps {
  const client = api();
  return {
    client,
    properties: documentProperties(),
    lock: documentLock(),
    tab: sheetOrNew,
    cellsLeft: () => cellsLeft(SPREADSHEET_CELLS),
    baseUrl: loadSettings(userProperties())!.baseUrl,
  };
}

/** For the sidebar: an export job of every company matching the search's filters, up to `maxRows`. */
export function sidebarExport(filters: Record<string, unknown>, maxRows: number) {
  try {
    const { companyOrder: _sources, ...rest } = filters as ExportFilters & { companyOrder?: unknown };
    return startExport(exportDeps(), rest, maxRows, searchTabName('export', rest));
  } catch (err) {
    throw new Error(plainError(err));
  }
}

/** For the sidebar, while an export runs: its progress; once it ended, its file written to its tab. */
export function sidebarExportStatus() {
  try {
    return pollExport(exportDeps());
  } catch (err) {
    throw new Error(plainError(err));
  }
}

/**
 * For the sidebar's Agent tab: one message, continuing `conversationId` when given, with the
 * selected rows (and the header row) as data when asked. Errors in plain words, as thrown.
 */
export function sidebarAgentChat(message: string, conversationId: string | null, withSelection: boolean): AgentTurn {
  try {
    const client = api();
    let selected: ReturnType<typeof selectionContext> | null = null;
    if (withSelection) {
      const rows = selectedRows('to give the agent');
      selected = selectionContext(sheetNamed(rows.sheet)!, rows.first, rows.last);
    }
    return askAgent(client, { message, ...(conversationId ? { conversationId } : {}), ...(selected ? { context: selected.context } : {}) }, selected?.note ?? null);
  } catch (err) {
    throw new Error(plainError(err));
  }
}

/** What a formula needs; `spend` whether it may buy what is not paid for yet. */
function formulaDeps(spend: boolean): FormulaDeps {
  return { client: api, paid: paidResults(documentCache(), documentProperties(), documentLock()), digest: sha256, spend };
}

/** Of the 30 seconds Apps Script gives a custom function, what a range of inputs may use. */
const FORMULA_BUDGET_MS = 20_000;

/** A custom function over one cell or a range: safe mode decides whether it may spend. */
function formula(input: unknown, one: (deps: FormulaDeps, cell: unknown) => string): string | string[][] {
  const deps = formulaDeps(!safeMode(userProperties()));
  return perCell(input, (cell) => one(deps, cell), gasClock.now, gasClock.now() + FORMULA_BUDGET_MS);
}

/**
 * Company data from Brazil's registry for a CNPJ; charged once, then served from this document.
 *
 * @param {string} cnpj The CNPJ (with or without punctuation), or a range of them.
 * @param {string} [field] name (default), tradeName, status, activity, city, phone, email, capital, size or partners.
 * @return The company's field.
 * @customfunction
 */
export function PROSPECTA_CNPJ(cnpj: unknown, field?: unknown): string | string[][] {
  return formula(cnpj, (deps, cell) => cnpjFormula(deps, cell, field));
}

/**
 * Enriches a person or company from an email, LinkedIn URL, domain, CNPJ or company name; charged once.
 *
 * @param {string} identifier An email, LinkedIn URL, domain, CNPJ or company name, or a range of them.
 * @param {string} [field] The field wanted, e.g. email, phone, title, linkedinUrl, companyDomain.
 * @return The field found.
 * @customfunction
 */
export function PROSPECTA_ENRICH(identifier: unknown, field?: unknown): string | string[][] {
  return formula(identifier, (deps, cell) => enrichFormula(deps, cell, field));
}

/**
 * A short value written by AI from an instruction and the cells given as context; charged once.
 *
 * @param {string} instruction What to write, e.g. "industry in two words".
 * @param {string} [context] Cells or ranges the AI reads.
 * @return The value written.
 * @customfunction
 */
export function PROSPECTA_AI(instruction: unknown, ...context: unknown[]): string {
  const deps = formulaDeps(!safeMode(userProperties()));
  return aiFormula(deps, instruction, context);
}

/** For the sidebar: formulas answer only from what is paid for (on), or may buy (off). */
export function sidebarSetSafeMode(on: boolean) {
  setSafeMode(userProperties(), on);
  return sidebarState();
}

const FORMULAS: Record<string, (deps: FormulaDeps, args: unknown[]) => string | string[][]> = {
  PROSPECTA_CNPJ: (deps, [cnpj, field]) => perCell(cnpj, (cell) => cnpjFormula(deps, cell, field), gasClock.now, Infinity),
  PROSPECTA_ENRICH: (deps, [id, field]) => perCell(id, (cell) => enrichFormula(deps, cell, field), gasClock.now, Infinity),
  PROSPECTA_AI: (deps, [instruction, ...context]) => aiFormula(deps, instruction, context),
};

/**
 * For the sidebar: the one action that spends on formulas. Each prospecta formula in the selected
 * cells buys what it lacks; then it is written again so Sheets recalculates it from what was paid.
 */
export function sidebarRefreshSelected(): string {
  const range = SpreadsheetApp.getActiveRange();
  if (!range) throw new Error('Select the cells with prospecta formulas to refresh.');
  const sheet = SpreadsheetApp.getActiveSheet();
  const book = SpreadsheetApp.getActiveSpreadsheet();
  const read = (name: string | null, a1: string) => (name ? book.getSheetByName(name) : sheet)?.getRange(a1).getValues() ?? [[]];
  let bought = 0;
  const client = api();
  const deps = { ...formulaDeps(true), client: () => (bought++, client) };
  const deadline = gasClock.now() + 4.5 * 60_000;
  const problems: string[] = [];
  let formulas = 0;
  let pending = 0;
  range.getFormulas().forEach((row, r) =>
    row.forEach((text, c) => {
      const call = parseCall(text);
      if (!call) return;
      formulas++;
      if (gasClock.now() > deadline) return void pending++;
      const cell = range.getCell(r + 1, c + 1);
      try {
        FORMULAS[call.name]!(deps, call.args.map((a) => argumentValue(a, read)));
      } catch (err) {
        problems.push(`${cell.getA1Notation()}: ${plainError(err)}`);
      }
      // Written again, the formula is recalculated, and answers from what was just paid for.
      cell.setValue('');
      SpreadsheetApp.flush();
      cell.setFormula(text);
    }),
  );
  if (formulas === 0) return 'No prospecta formula in the selected cells.';
  const spent = `${formulas} formula(s) refreshed; ${bought} bought, the rest already paid for.`;
  return [spent, pending ? `${pending} left for lack of time: Refresh selected again.` : '', ...problems].filter(Boolean).join('\n');
}
