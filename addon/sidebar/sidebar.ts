/**
 * The sidebar's script: forms that validate before anything is sent, estimates before a run, the
 * Jobs panel that polls while a run works, and errors in plain words. It talks to the add-on only
 * through google.script.run.
 */
// Types only (erased from the bundle): one exchange with the agent, as the add-on answers it.
import type { AgentTurn } from '../features/agent.ts';

/** A run as the Jobs panel lists it (addon/entry.ts, jobView). */
interface JobView {
  id: string;
  title: string;
  text: string;
  running: boolean;
  cancelling: boolean;
  /** 0 to 1: rows looked up of those the run sends. */
  progress: number;
  credits: number;
}

/** The document's export as the add-on reports it (addon/features/export.ts, ExportView). */
interface ExportView {
  running: boolean;
  text: string;
  link?: string;
}

interface SidebarState {
  configured: boolean;
  balance: string | null;
  fields: string[];
  /** The catalog's configured providers, by name, with what a call costs and the fields it can fill. */
  providers: Array<{ id: string; name: string; cost: number; outputs: string[] }>;
  labels: Record<string, string>;
  headers: string[];
  /** Input field → the header of the column detected for it. */
  detected: Record<string, string>;
  selectedRows: number;
  templates: Array<{ templateId: string; name: string }>;
  /** Whether the server has a language model (the AI column, Research and Agent tabs need one); null when unknown. */
  languageModel: { configured: boolean; variable: string } | null;
  /** Credits, from the operation registry: per search row, per CNPJ found, per AI value, per research row (with the web). */
  prices: { companyRow: number; exportRow: number; change: number; personRow: number; cnpj: number; aiColumn: number; research: number; researchWithWeb: number };
  /** The most results a page of each search may ask for, and the most rows a search gives across its pages. */
  searchLimits: { people: number; companies: number; rows: number };
  /** The most rows an export writes, and its default. */
  exportLimits: { max: number; default: number };
  /** The most changes one establishment can have in one release (an estimate's upper bound). */
  mostChangesARelease: number;
  /** The document's export, running or ended; null when none was started. */
  exportRun: ExportView | null;
  /** The agent's longest message and most rows a selection sends, from the registry. */
  agentLimits: { message: number; rows: number };
  jobs: JobView[];
  /** Days a paid enrichment is given again for nothing; null: the server's default. */
  maxAgeDays: number | null;
  maxAgeLimit: number;
  /** Formulas answer only from what is paid for; "Refresh selected" alone spends. */
  safeMode: boolean;
  /** The build fixed the server (the manifest's only address): Settings asks for the key alone. */
  serverFixed: boolean;
}

/**
 * The add-on functions the sidebar calls (addon/entry.ts). The sidebar is compiled on its own, for
 * the browser, so they are declared here rather than imported.
 */
interface AddonFunctions {
  sidebarState(): SidebarState;
  sidebarStart(kind: string, options: Record<string, unknown>, trial: boolean): JobView[];
  sidebarJobs(): JobView[];
  sidebarCancelRun(id: string): JobView[];
  sidebarSetMaxAge(days: number | null): SidebarState;
  sidebarSearch(kind: 'people' | 'companies', filters: Record<string, unknown>, rows: number): { message: string; exportable: boolean };
  sidebarExport(filters: Record<string, unknown>, maxRows: number): ExportView;
  sidebarExportStatus(): ExportView | null;
  sidebarChanges(options: Record<string, unknown>, trial: boolean): string;
  sidebarCreateCampaign(fields: Record<string, string>): string;
  sidebarSaveSettings(apiKey: string, serverUrl: string): string;
  sidebarAgentChat(message: string, conversationId: string | null, withSelection: boolean): AgentTurn;
  sidebarSetSafeMode(on: boolean): SidebarState;
  sidebarRefreshSelected(): string;
}

/** google.script.run: each function takes its arguments and answers through the handlers set first. */
type Calls = { [Name in keyof AddonFunctions]: (...args: Parameters<AddonFunctions[Name]>) => void };
type ScriptRun = Calls & {
  withSuccessHandler<T>(fn: (value: T) => void): ScriptRun;
  withFailureHandler(fn: (err: Error) => void): ScriptRun;
};

declare const google: { script: { run: ScriptRun } };

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
let state: SidebarState | null = null;
let polling: ReturnType<typeof setInterval> | null = null;
/** The agent conversation this sidebar continues; null starts a new one. */
let conversationId: string | null = null;

function call<Name extends keyof AddonFunctions>(name: Name, ...args: Parameters<AddonFunctions[Name]>): Promise<ReturnType<AddonFunctions[Name]>> {
  return new Promise((resolve, reject) => {
    const runner: Calls = google.script.run.withSuccessHandler(resolve).withFailureHandler((err: Error) => reject(err));
    runner[name](...args);
  });
}

function showError(message: string | null): void {
  const box = $('error');
  box.hidden = !message;
  box.textContent = message ?? '';
}

function required(...ids: string[]): boolean {
  let ok = true;
  for (const id of ids) {
    const el = $<HTMLInputElement>(id);
    const empty = el.value.trim() === '';
    el.classList.toggle('invalid', empty);
    if (empty) ok = false;
  }
  if (!ok) showError('Fill in the fields marked in red.');
  return ok;
}

/** A whole number ≥ 0 typed in a field, null when it is empty; marks the field and says why when it is not. */
function wholeNumber(id: string, what: string, unit = 'credits', empty = 'no cap'): number | null | undefined {
  const el = $<HTMLInputElement>(id);
  const text = el.value.trim();
  const ok = text === '' || /^\d+$/.test(text);
  el.classList.toggle('invalid', !ok);
  if (!ok) {
    showError(`${what} must be a whole number of ${unit}, 0 or more (or empty for ${empty}).`);
    return undefined;
  }
  return text === '' ? null : Number(text);
}

const credits = (n: number) => `${n} credit${n === 1 ? '' : 's'}`;

/** The most rows a search gives across its pages, as the field's maximum; the filters of its kind; its estimate. */
function fitSearch(first: boolean): void {
  if (!state) return;
  const kind = $<HTMLSelectElement>('search-kind').value as 'people' | 'companies';
  const max = state.searchLimits.rows;
  const el = $<HTMLInputElement>('search-limit');
  el.max = String(max);
  if (first) el.value = '100';
  if (Number(el.value) > max) el.value = String(max);
  $('people-filters').hidden = kind !== 'people';
  $('company-filters').hidden = kind !== 'companies';
  const rows = searchRows();
  const price = kind === 'people' ? state.prices.personRow : state.prices.companyRow;
  $('search-estimate').textContent = `At most ${credits(rows * price)} (${credits(price)} a row found), in pages of ${state.searchLimits[kind]}.`;
}

/** The rows asked for: a whole number from 1 to the search's most. */
function searchRows(): number {
  const max = state?.searchLimits.rows ?? 1;
  return Math.min(Math.max(Math.trunc(Number($<HTMLInputElement>('search-limit').value)) || max, 1), max);
}

/** What each input field is called beside the column the sidebar offers for it. */
const INPUT_LABELS: Record<string, string> = {
  email: 'Email',
  linkedinUrl: 'LinkedIn',
  fullName: 'Name',
  firstName: 'First name',
  lastName: 'Last name',
  companyName: 'Company',
  companyDomain: 'Domain',
  cnpj: 'CNPJ',
  phone: 'Phone',
};

/** One select per input field, set to the detected column, for the analyst to confirm or change. */
function columnChoices(container: string, fields: string[], headers: string[], detected: Record<string, string>): void {
  $(container).innerHTML = '';
  for (const field of fields) {
    const label = document.createElement('label');
    const select = document.createElement('select');
    select.dataset.field = field;
    for (const header of ['', ...headers]) {
      const option = document.createElement('option');
      option.value = header;
      option.textContent = header || '(none)';
      option.selected = header === (detected[field] ?? '');
      select.append(option);
    }
    label.append(document.createTextNode(INPUT_LABELS[field] ?? field), select);
    $(container).append(label);
  }
}

/** Input field → the header chosen for it ('' for none). */
function chosenColumns(container: string): Record<string, string> {
  return Object.fromEntries([...$(container).querySelectorAll<HTMLSelectElement>('select')].map((s) => [s.dataset.field!, s.value]));
}

/** The most an enriched row can cost: every provider that can fill a wanted field, called once. */
function enrichEstimate(): void {
  if (!state) return;
  const rows = state.selectedRows;
  const wanted = checked('fields');
  const perRow = state.providers.filter((p) => p.outputs.some((f) => wanted.includes(f))).reduce((sum, p) => sum + p.cost, 0);
  const reuse = state.maxAgeDays === null ? "within the server's reuse window" : `within ${state.maxAgeDays} day(s)`;
  $('enrich-estimate').textContent = rows
    ? `${rows} selected row(s): at most ${credits(rows * perRow)} (${credits(perRow)} a row if every provider that can fill these fields is called); a row enriched ${reuse} costs nothing.`
    : 'Select the rows to enrich.';
}

function checked(container: string): string[] {
  return [...$(container).querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((el) => el.value);
}

function checkboxes(container: string, values: string[], labels: Record<string, string>, on: string[]): void {
  $(container).innerHTML = '';
  for (const value of values) {
    const label = document.createElement('label');
    label.className = 'inline';
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.value = value;
    box.checked = on.includes(value);
    label.append(box, document.createTextNode(labels[value] ?? value));
    $(container).append(label);
  }
}

function render(next: SidebarState): void {
  const first = state === null;
  state = next;
  $('balance').textContent = next.balance ?? '';
  if (first) {
    checkboxes('fields', next.fields, next.labels, ['email', 'title', 'linkedinUrl']);
    checkboxes('providers', next.providers.map((p) => p.id), Object.fromEntries(next.providers.map((p) => [p.id, `${p.name} (${credits(p.cost)} a call)`])), []);
    columnChoices('enrich-columns', Object.keys(INPUT_LABELS).filter((f) => f !== 'cnpj' || next.detected.cnpj), next.headers, next.detected);
    columnChoices('cnpj-columns', ['cnpj'], next.headers, next.detected);
    columnChoices('changes-columns', ['cnpj'], next.headers, next.detected);
    checkboxes('ai-context', next.headers, {}, next.headers);
    $<HTMLInputElement>('maxAgeDays').value = next.maxAgeDays === null ? '' : String(next.maxAgeDays);
    $<HTMLInputElement>('maxAgeDays').max = String(next.maxAgeLimit);
    for (const t of next.templates) {
      const option = document.createElement('option');
      option.value = t.templateId;
      option.textContent = t.name;
      $('template').append(option);
    }
    if (!next.configured) select('settings');
    fitSearch(true);
    $<HTMLInputElement>('export-rows').max = String(next.exportLimits.max);
    $<HTMLInputElement>('export-rows').value = String(next.exportLimits.default);
    showExport(next.exportRun);
    $<HTMLTextAreaElement>('agent-message').maxLength = next.agentLimits.message;
  }
  const rows = next.selectedRows;
  const p = next.prices;
  enrichEstimate();
  $('cnpj-estimate').textContent = rows ? `${rows} selected row(s): at most ${credits(rows * p.cnpj)}.` : 'Select the rows with CNPJs.';
  $('cnpj-price').textContent = `, ${credits(p.cnpj)} per company found`;
  $('changes-estimate').textContent = rows
    ? `${rows} selected row(s): ${credits(p.change)} per change found, nothing for a row that did not change; at most ${credits(rows * p.change * next.mostChangesARelease)} a release compared (${next.mostChangesARelease} kinds of change a row).`
    : 'Select the rows with CNPJs.';
  $('ai-estimate').textContent = rows ? `${rows} selected row(s): at most ${credits(rows * p.aiColumn)} (${credits(p.aiColumn)} a value).` : 'Select the rows to fill.';
  $('research-price').textContent = rows ? `${credits(p.research)} a row: at most ${credits(rows * p.research)} for ${rows} selected row(s).` : `${credits(p.research)} a row.`;
  $('web-price').textContent = ` (${credits(p.researchWithWeb)} a row instead of ${p.research})`;
  $('agent-rows').textContent = rows ? `: ${Math.min(rows, next.agentLimits.rows)} of ${rows} selected row(s)` : ': no rows selected';
  $('server-url').hidden = next.serverFixed;
  noModelNotices(next.languageModel);
  $<HTMLInputElement>('safe-mode').checked = next.safeMode;
  $('safe-mode-note').textContent = next.safeMode
    ? 'A formula not yet paid for shows an error until you select it and click Refresh selected, the only thing that spends.'
    : 'Formulas buy what they lack when Sheets calculates them, each input once.';
  renderJobs(next.jobs);
  exportEstimate();
}

/** The tabs a model serves, and their run buttons: said before anything is typed when the server has none. */
const MODEL_TABS = { ai: ['run-ai', 'try-ai'], research: ['run-research', 'try-research'], agent: ['run-agent'] } as const;

function noModelNotices(model: SidebarState['languageModel']): void {
  const missing = model !== null && !model.configured;
  for (const [tab, buttons] of Object.entries(MODEL_TABS)) {
    const notice = $(`${tab}-no-model`);
    notice.hidden = !missing;
    notice.textContent = missing
      ? `No language model is configured on the server, so this tab cannot run: its operator sets ${model.variable} (an OpenAI-compatible endpoint).${tab === 'agent' ? '' : ' Nothing is charged meanwhile.'}`
      : '';
    for (const id of buttons) $<HTMLButtonElement>(id).disabled = missing;
  }
}

/** A new element with its class and text. */
function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ''): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  el.className = className;
  el.textContent = text;
  return el;
}

/** The Jobs panel: each run with its progress bar, credits and Cancel; polled while one runs. */
function renderJobs(jobs: JobView[]): void {
  const list = $('job-list');
  list.innerHTML = '';
  if (jobs.length === 0) list.textContent = 'No runs yet.';
  for (const job of jobs) {
    const item = element('div', `job${job.running ? '' : ' ended'}`);
    item.dataset.id = job.id;
    const bar = element('div', 'bar');
    const fill = document.createElement('span');
    fill.style.width = `${Math.round(job.progress * 100)}%`;
    bar.append(fill);
    const meta = element('div', 'meta');
    meta.append(element('span', 'credits', `${Math.round(job.progress * 100)}% · ${credits(job.credits)}`));
    if (job.running && !job.cancelling) {
      const cancel = element('button', 'cancel', 'Cancel');
      cancel.addEventListener('click', () => void jobsCall(() => call('sidebarCancelRun', job.id)));
      meta.append(cancel);
    }
    item.append(element('div', 'title', job.title), bar, element('div', 'text', job.text), meta);
    list.append(item);
  }
  const running = jobs.some((j) => j.running);
  if (running && !polling) polling = setInterval(() => void jobsCall(() => call('sidebarJobs')), 5000);
  if (!running && polling) {
    clearInterval(polling);
    polling = null;
  }
}

async function jobsCall(fetch: () => Promise<JobView[]>): Promise<void> {
  try {
    renderJobs(await fetch());
  } catch (err) {
    showError((err as Error).message);
  }
}

async function refresh(): Promise<void> {
  try {
    render(await call('sidebarState'));
  } catch (err) {
    showError((err as Error).message);
  }
}

/** Starts a run (its first five rows with `trial`), then shows it in the Jobs panel. */
async function start(kind: string, options: Record<string, unknown>, button: string, trial = false): Promise<void> {
  showError(null);
  const el = $<HTMLButtonElement>(button);
  el.disabled = true;
  try {
    renderJobs(await call('sidebarStart', kind, options, trial));
    select('jobs');
  } catch (err) {
    showError((err as Error).message);
  } finally {
    el.disabled = false;
  }
}

function select(tab: string): void {
  document.querySelectorAll('nav button').forEach((b) => b.classList.toggle('active', (b as HTMLElement).dataset.tab === tab));
  document.querySelectorAll('.tab').forEach((s) => s.classList.toggle('active', s.id === tab));
}

document.querySelectorAll('nav button').forEach((b) => b.addEventListener('click', () => select((b as HTMLElement).dataset.tab!)));

/** Each paid tab's run, as its button and its "Try on 5 rows" start it; null when its form is not ready. */
const RUNS: Record<string, { kind: string; options: () => Record<string, unknown> | null }> = {
  enrich: {
    kind: 'enrich',
    options: () => {
      const fields = checked('fields');
      if (fields.length === 0) return showError('Choose at least one field to fill.'), null;
      const cap = wholeNumber('maxCredits', 'The credit cap');
      if (cap === undefined) return null;
      const order = checked('providers');
      return {
        fields,
        columns: chosenColumns('enrich-columns'),
        ...(order.length ? { providerOrder: order } : {}),
        ...(cap !== null ? { maxCredits: cap } : {}),
        overwrite: $<HTMLInputElement>('overwrite').checked,
      };
    },
  },
  cnpj: { kind: 'cnpj', options: () => ({ columns: chosenColumns('cnpj-columns') }) },
  ai: {
    kind: 'aiColumn',
    options: () =>
      required('instruction', 'ai-output') ? { instruction: $<HTMLInputElement>('instruction').value.trim(), output: $<HTMLInputElement>('ai-output').value.trim(), context: checked('ai-context') } : null,
  },
  research: {
    kind: 'research',
    options: () =>
      required('prompt', 'research-output')
        ? { prompt: $<HTMLInputElement>('prompt').value.trim(), output: $<HTMLInputElement>('research-output').value.trim(), context: [], webSearch: $<HTMLInputElement>('webSearch').checked }
        : null,
  },
};
for (const [tab, run] of Object.entries(RUNS)) {
  for (const trial of [false, true]) {
    const button = `${trial ? 'try' : 'run'}-${tab}`;
    $(button).addEventListener('click', () => {
      const options = run.options();
      if (options) void start(run.kind, options, button, trial);
    });
  }
}
$('fields').addEventListener('change', enrichEstimate);

/** The Changes tab's options; null (the field marked) when the release is not a month. */
function changesOptions(): Record<string, unknown> | null {
  const el = $<HTMLInputElement>('changes-since');
  const since = el.value.trim();
  const ok = since === '' || /^\d{4}-(0[1-9]|1[0-2])$/.test(since);
  el.classList.toggle('invalid', !ok);
  if (!ok) return showError('The release is a month, YYYY-MM (e.g. 2026-10), or empty for the latest release.'), null;
  return { columns: chosenColumns('changes-columns'), ...(since ? { since } : {}) };
}

for (const trial of [false, true]) {
  const button = `${trial ? 'try' : 'run'}-changes`;
  $(button).addEventListener('click', async () => {
    const options = changesOptions();
    if (!options) return;
    showError(null);
    const el = $<HTMLButtonElement>(button);
    el.disabled = true;
    try {
      $('progress').hidden = false;
      $('progress-text').textContent = await call('sidebarChanges', options, trial);
      void refresh();
    } catch (err) {
      showError((err as Error).message);
    } finally {
      el.disabled = false;
    }
  });
}

/** The search's filters as the registry names them; companies are active ones unless unticked. */
function searchFilters(kind: 'people' | 'companies'): Record<string, unknown> {
  const value = (id: string) => $<HTMLInputElement>(id).value.trim();
  const ticked = (id: string) => $<HTMLInputElement>(id).checked;
  const text = (key: string, id: string) => (value(id) ? { [key]: value(id) } : {});
  if (kind === 'people') return { ...text('jobTitle', 'search-title'), ...text('industry', 'search-industry'), ...text('location', 'search-location') };
  return {
    ...text('industry', 'search-industry'),
    ...(value('search-state') ? { state: value('search-state').toUpperCase() } : {}),
    ...text('city', 'search-city'),
    ...(value('search-size') ? { fiscalSizes: [value('search-size')] } : {}),
    ...text('openingDateMin', 'search-since'),
    ...(ticked('search-active') ? { registrationStatuses: ['ATIVA'] } : {}),
    ...(ticked('search-simples') ? { simpleOption: true } : {}),
    ...(ticked('search-phone') ? { hasPhone: true } : {}),
    ...(ticked('search-email') ? { hasEmail: true } : {}),
  };
}

/** The filters of the last company search that matched more than it wrote: what an export writes. */
let exportFilters: Record<string, unknown> | null = null;
let exportPolling: ReturnType<typeof setInterval> | null = null;
/** The document's export as last reported. */
let currentExport: ExportView | null = null;

/** The rows an export may write: a whole number from 1 to the most, or null (marked) when it is not. */
function exportRows(): number | null {
  const el = $<HTMLInputElement>('export-rows');
  const max = state?.exportLimits.max ?? 1;
  const rows = Number(el.value);
  const ok = /^\d+$/.test(el.value.trim()) && rows >= 1 && rows <= max;
  el.classList.toggle('invalid', !ok);
  return ok ? rows : null;
}

function exportEstimate(): void {
  if (!state) return;
  const rows = exportRows();
  const price = state.prices.exportRow;
  $('export-estimate').textContent =
    rows === null
      ? `Rows at most: a whole number from 1 to ${state.exportLimits.max.toLocaleString('en')}.`
      : `At most ${credits(rows * price)} (${credits(price)} a row written), charged as the rows are written; the export stops when the credits run out, keeping what it wrote.`;
}

/** The export panel: the form after a search that matched more, the status of the document's export, its link. */
function showExport(run: ExportView | null): void {
  currentExport = run;
  $('export-panel').hidden = !run && !exportFilters;
  $('export-form').hidden = !exportFilters || Boolean(run?.running);
  $('export-status').textContent = run?.text ?? '';
  const link = $<HTMLAnchorElement>('export-link');
  link.hidden = !run?.link;
  if (run?.link) link.href = run.link;
  if (run?.running && !exportPolling) exportPolling = setInterval(() => void followExport(), 5000);
  if (!run?.running && exportPolling) {
    clearInterval(exportPolling);
    exportPolling = null;
  }
}

async function followExport(): Promise<void> {
  try {
    showExport(await call('sidebarExportStatus'));
  } catch (err) {
    showExport({ running: false, text: currentExport?.text ?? '' });
    showError((err as Error).message);
  }
}

$('export-rows').addEventListener('input', exportEstimate);
$('run-export').addEventListener('click', async () => {
  const rows = exportRows();
  if (rows === null) return showError(`Rows at most: a whole number from 1 to ${(state?.exportLimits.max ?? 1).toLocaleString('en')}.`);
  if (!exportFilters) return;
  showError(null);
  const button = $<HTMLButtonElement>('run-export');
  button.disabled = true;
  try {
    showExport(await call('sidebarExport', exportFilters, rows));
  } catch (err) {
    showError((err as Error).message);
  } finally {
    button.disabled = false;
  }
});

$('run-search').addEventListener('click', async () => {
  const kind = $<HTMLSelectElement>('search-kind').value as 'people' | 'companies';
  const filters = searchFilters(kind);
  // Being active is a default, not a filter the analyst gave.
  if (Object.keys(filters).filter((k) => k !== 'registrationStatuses').length === 0) return showError('Give at least one filter.');
  const state = $<HTMLInputElement>('search-state');
  const badState = kind === 'companies' && state.value.trim() !== '' && !/^[A-Za-z]{2}$/.test(state.value.trim());
  state.classList.toggle('invalid', badState);
  if (badState) return showError('The state is its two letters, e.g. SP.');
  showError(null);
  const button = $<HTMLButtonElement>('run-search');
  button.disabled = true;
  try {
    const { message, exportable } = await call('sidebarSearch', kind, filters, searchRows());
    $('progress').hidden = false;
    $('progress-text').textContent = message;
    exportFilters = exportable ? filters : null;
    showExport(currentExport);
  } catch (err) {
    showError((err as Error).message);
  } finally {
    button.disabled = false;
  }
});
$('search-kind').addEventListener('change', () => fitSearch(false));
$('search-limit').addEventListener('input', () => fitSearch(false));
$('run-campaign').addEventListener('click', async () => {
  const value = (id: string) => $<HTMLInputElement>(id).value.trim();
  const templateId = value('template');
  if (!required('campaign-name', ...(templateId ? [] : ['offering']))) return;
  showError(null);
  const fields: Record<string, string> = { name: value('campaign-name') };
  for (const [id, key] of [['offering', 'offering'], ['sender', 'senderName'], ['tone', 'tone'], ['language', 'language']]) if (value(id!)) fields[key!] = value(id!);
  if (templateId) fields.templateId = templateId;
  const el = $<HTMLButtonElement>('run-campaign');
  el.disabled = true;
  try {
    const message: string = await call('sidebarCreateCampaign', fields);
    $('progress').hidden = false;
    $('progress-text').textContent = message;
  } catch (err) {
    showError((err as Error).message);
  } finally {
    el.disabled = false;
  }
});
/** Appends one exchange to the Agent tab's log: the message, each tool call with its cost, the reply. */
function showExchange(message: string, turn: AgentTurn): void {
  const log = $('agent-log');
  log.append(element('div', 'user', message));
  if (turn.note) log.append(element('p', 'muted', turn.note));
  if (turn.toolCalls.length) {
    const list = document.createElement('ul');
    for (const call of turn.toolCalls) list.append(element('li', call.isError ? 'failed' : '', `${call.tool}: ${call.isError ? 'failed, ' : ''}${call.creditsCharged ? credits(call.creditsCharged) : 'free'}`));
    log.append(list);
  }
  log.append(element('div', 'reply', turn.reply));
  if (turn.failedStep) log.append(element('div', 'error', turn.failedStep));
  log.append(element('p', 'muted', `This message: ${credits(turn.creditsCharged)}.`));
}

$('run-agent').addEventListener('click', async () => {
  if (!required('agent-message')) return;
  showError(null);
  const message = $<HTMLTextAreaElement>('agent-message').value.trim();
  const el = $<HTMLButtonElement>('run-agent');
  el.disabled = true;
  try {
    const turn: AgentTurn = await call('sidebarAgentChat', message, conversationId, $<HTMLInputElement>('agent-selection').checked);
    conversationId = turn.conversationId;
    showExchange(message, turn);
    $('agent-new').hidden = false;
    $<HTMLTextAreaElement>('agent-message').value = '';
    // The balance the tools' charges left.
    if (turn.creditsCharged > 0) void refresh();
  } catch (err) {
    showError((err as Error).message);
  } finally {
    el.disabled = false;
  }
});
$('agent-new').addEventListener('click', () => {
  conversationId = null;
  $('agent-log').innerHTML = '';
  $('agent-new').hidden = true;
});
$('save-settings').addEventListener('click', async () => {
  if (!required(...(state?.serverFixed ? ['apiKey'] : ['apiKey', 'serverUrl']))) return;
  showError(null);
  try {
    const message: string = await call('sidebarSaveSettings', $<HTMLInputElement>('apiKey').value, $<HTMLInputElement>('serverUrl').value);
    $('balance').textContent = message;
    await refresh();
  } catch (err) {
    showError((err as Error).message);
  }
});
$('safe-mode').addEventListener('change', async () => {
  showError(null);
  try {
    render(await call('sidebarSetSafeMode', $<HTMLInputElement>('safe-mode').checked));
  } catch (err) {
    showError((err as Error).message);
  }
});
$('refresh-formulas').addEventListener('click', async () => {
  showError(null);
  const button = $<HTMLButtonElement>('refresh-formulas');
  button.disabled = true;
  try {
    $('refresh-result').textContent = await call('sidebarRefreshSelected');
    await refresh();
  } catch (err) {
    showError((err as Error).message);
  } finally {
    button.disabled = false;
  }
});
$('save-max-age').addEventListener('click', async () => {
  const days = wholeNumber('maxAgeDays', 'The reuse window', 'days', "the server's default");
  if (days === undefined) return;
  showError(null);
  try {
    render(await call('sidebarSetMaxAge', days));
  } catch (err) {
    showError((err as Error).message);
  }
});

void refresh();
