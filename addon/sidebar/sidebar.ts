/**
 * The sidebar's script: forms that validate before anything is sent, progress that polls while
 * a run works, and errors in plain words. It talks to the add-on only through google.script.run.
 */
// Types only (erased from the bundle): one exchange with the agent, as the add-on answers it.
import type { AgentTurn } from '../features/agent.ts';

interface SidebarState {
  configured: boolean;
  balance: string | null;
  fields: string[];
  labels: Record<string, string>;
  headers: string[];
  selectedRows: number;
  templates: Array<{ templateId: string; name: string }>;
  /** Credits, from the operation registry: per person, per CNPJ found, per research row (with the web). */
  prices: { person: number; cnpj: number; aiColumn: number; research: number; researchWithWeb: number };
  /** The most results each search may ask for. */
  searchLimits: { people: number; companies: number };
  /** The agent's longest message and most rows a selection sends, from the registry. */
  agentLimits: { message: number; rows: number };
  run: { id: string; text: string; running: boolean } | null;
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
  sidebarStart(kind: string, options: Record<string, unknown>): SidebarState;
  sidebarCancel(): SidebarState;
  sidebarSearch(kind: 'people' | 'companies', filters: Record<string, unknown>): string;
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
function wholeNumber(id: string, what: string): number | null | undefined {
  const el = $<HTMLInputElement>(id);
  const text = el.value.trim();
  const ok = text === '' || /^\d+$/.test(text);
  el.classList.toggle('invalid', !ok);
  if (!ok) {
    showError(`${what} must be a whole number of credits, 0 or more (or empty for no cap).`);
    return undefined;
  }
  return text === '' ? null : Number(text);
}

const credits = (n: number) => `${n} credit${n === 1 ? '' : 's'}`;

/** The search kind's most results, as the field's maximum (and its value when above it). */
function fitSearchLimit(first: boolean): void {
  if (!state) return;
  const max = state.searchLimits[$<HTMLSelectElement>('search-kind').value as 'people' | 'companies'];
  const el = $<HTMLInputElement>('search-limit');
  el.max = String(max);
  if (first || Number(el.value) > max) el.value = String(max);
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
    checkboxes('ai-context', next.headers, {}, next.headers);
    for (const t of next.templates) {
      const option = document.createElement('option');
      option.value = t.templateId;
      option.textContent = t.name;
      $('template').append(option);
    }
    if (!next.configured) select('settings');
    fitSearchLimit(true);
    $<HTMLTextAreaElement>('agent-message').maxLength = next.agentLimits.message;
  }
  const rows = next.selectedRows;
  const p = next.prices;
  $('enrich-estimate').textContent = rows ? `${rows} selected row(s): at most ${credits(rows * p.person)} for people; companies cost what their providers charge.` : 'Select the rows to enrich.';
  $('cnpj-estimate').textContent = rows ? `${rows} selected row(s): at most ${credits(rows * p.cnpj)}.` : 'Select the rows with CNPJs.';
  $('cnpj-price').textContent = `, ${credits(p.cnpj)} per company found`;
  $('ai-estimate').textContent = rows ? `${rows} selected row(s): at most ${credits(rows * p.aiColumn)} (${credits(p.aiColumn)} a value).` : 'Select the rows to fill.';
  $('research-price').textContent = rows ? `${credits(p.research)} a row: at most ${credits(rows * p.research)} for ${rows} selected row(s).` : `${credits(p.research)} a row.`;
  $('web-price').textContent = ` (${credits(p.researchWithWeb)} a row instead of ${p.research})`;
  $('agent-rows').textContent = rows ? `: ${Math.min(rows, next.agentLimits.rows)} of ${rows} selected row(s)` : ': no rows selected';
  $('server-url').hidden = next.serverFixed;
  $<HTMLInputElement>('safe-mode').checked = next.safeMode;
  $('safe-mode-note').textContent = next.safeMode
    ? 'A formula not yet paid for shows an error until you select it and click Refresh selected, the only thing that spends.'
    : 'Formulas buy what they lack when Sheets calculates them, each input once.';
  const progress = $('progress');
  progress.hidden = !next.run;
  $('progress-text').textContent = next.run?.text ?? '';
  $('cancel').hidden = !next.run?.running;
  if (next.run?.running && !polling) polling = setInterval(refresh, 5000);
  if (!next.run?.running && polling) {
    clearInterval(polling);
    polling = null;
  }
}

async function refresh(): Promise<void> {
  try {
    render(await call('sidebarState'));
  } catch (err) {
    showError((err as Error).message);
  }
}

async function start(kind: string, options: Record<string, unknown>, button: string): Promise<void> {
  showError(null);
  const el = $<HTMLButtonElement>(button);
  el.disabled = true;
  try {
    render(await call('sidebarStart', kind, options));
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

$('run-enrich').addEventListener('click', () => {
  const fields = checked('fields');
  if (fields.length === 0) return showError('Choose at least one field to fill.');
  const cap = wholeNumber('maxCredits', 'The credit cap');
  if (cap === undefined) return;
  const order = $<HTMLInputElement>('providerOrder').value.split(',').map((s) => s.trim()).filter(Boolean);
  void start('enrich', { fields, ...(order.length ? { providerOrder: order } : {}), ...(cap !== null ? { maxCredits: cap } : {}), overwrite: $<HTMLInputElement>('overwrite').checked }, 'run-enrich');
});
$('run-cnpj').addEventListener('click', () => void start('cnpj', {}, 'run-cnpj'));
$('run-ai').addEventListener('click', () => {
  if (!required('instruction', 'ai-output')) return;
  void start('aiColumn', { instruction: $<HTMLInputElement>('instruction').value.trim(), output: $<HTMLInputElement>('ai-output').value.trim(), context: checked('ai-context') }, 'run-ai');
});
$('run-research').addEventListener('click', () => {
  if (!required('prompt', 'research-output')) return;
  void start('research', { prompt: $<HTMLInputElement>('prompt').value.trim(), output: $<HTMLInputElement>('research-output').value.trim(), context: [], webSearch: $<HTMLInputElement>('webSearch').checked }, 'run-research');
});
$('run-search').addEventListener('click', async () => {
  const value = (id: string) => $<HTMLInputElement>(id).value.trim();
  const kind = value('search-kind') as 'people' | 'companies';
  const max = state?.searchLimits[kind] ?? 1;
  const limit = Math.min(Math.max(Math.trunc(Number(value('search-limit'))) || max, 1), max);
  const filters: Record<string, unknown> =
    kind === 'people'
      ? { ...(value('search-title') ? { jobTitle: value('search-title') } : {}), ...(value('search-industry') ? { industry: value('search-industry') } : {}), ...(value('search-location') ? { location: value('search-location') } : {}), limit }
      : { ...(value('search-industry') ? { industry: value('search-industry') } : {}), ...(value('search-location') ? { location: value('search-location') } : {}), limit };
  if (Object.keys(filters).length === 1) return showError('Give at least one filter.');
  showError(null);
  try {
    const message: string = await call('sidebarSearch', kind, filters);
    $('progress').hidden = false;
    $('progress-text').textContent = message;
    $('cancel').hidden = true;
  } catch (err) {
    showError((err as Error).message);
  }
});
$('search-kind').addEventListener('change', () => fitSearchLimit(false));
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
    $('cancel').hidden = true;
  } catch (err) {
    showError((err as Error).message);
  } finally {
    el.disabled = false;
  }
});
/** Appends one exchange to the Agent tab's log: the message, each tool call with its cost, the reply. */
function showExchange(message: string, turn: AgentTurn): void {
  const add = (tag: string, className: string, text: string) => {
    const el = document.createElement(tag);
    el.className = className;
    el.textContent = text;
    return el;
  };
  const log = $('agent-log');
  log.append(add('div', 'user', message));
  if (turn.note) log.append(add('p', 'muted', turn.note));
  if (turn.toolCalls.length) {
    const list = document.createElement('ul');
    for (const call of turn.toolCalls) list.append(add('li', call.isError ? 'failed' : '', `${call.tool}: ${call.isError ? 'failed, ' : ''}${call.creditsCharged ? credits(call.creditsCharged) : 'free'}`));
    log.append(list);
  }
  log.append(add('div', 'reply', turn.reply));
  if (turn.failedStep) log.append(add('div', 'error', turn.failedStep));
  log.append(add('p', 'muted', `This message: ${credits(turn.creditsCharged)}.`));
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
$('cancel').addEventListener('click', async () => {
  render(await call('sidebarCancel'));
});

void refresh();
