/**
 * The add-on's runs end to end: a sheet in the fake SpreadsheetApp, the add-on's own Apps Script
 * adapters, real synchronous HTTP to a real prospecta server (its own process, with an imported
 * synthetic registry and fake providers in another process), columns out.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { HttpPort, HttpRequest } from '../../addon/api/http.ts';
import type { EnrichOptions } from '../../addon/features/enrich-rows.ts';
import type { Runtime } from '../../addon/features/runs.ts';
import { controlSocketPath, sendControl } from '../../server/cli/control.ts';
import { CSV_COLUMNS } from '../../server/exports/export-file.ts';
import { generateRelease } from '../../server/seed/release-generator.ts';
import { cnpjCheckDigits } from '../../shared/cnpj.ts';
import { addonIn, type Addon } from '../helpers/addon-sandbox.ts';
import { eventually } from '../helpers/eventually.ts';
import { fakeGas, type FakeGas } from '../helpers/fake-gas.ts';
import { commandHere } from '../helpers/commands.ts';
import { startFakeProviderProcess, startServer, type ServerProcess } from '../helpers/processes.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { unzip } from '../helpers/zip.ts';

let server: ServerProcess;
let providers: { env: Record<string, string>; stop(): void };
let dataDir: string;
let cnpjs: string[];
let gas: FakeGas;
/** The add-on, in an Apps Script sandbox over this test's fakes. */
let A: Addon;

async function command(name: string, args: Record<string, string>): Promise<any> {
  const reply = await sendControl(controlSocketPath(dataDir), { command: name, args });
  if (!reply.ok) throw new Error(reply.message);
  return reply.result;
}

/** The workspace of each API key made here, for what needs its id (a dashboard sign-in). */
const workspaceOf = new Map<string, string>();

async function workspace(credits: number): Promise<string> {
  const { workspaceId, apiKey } = await command('workspace create', { name: 'Sheet user', plan: 'active' });
  if (credits > 0) await command('credits grant', { workspace: workspaceId, amount: String(credits) });
  workspaceOf.set(apiKey, workspaceId);
  return apiKey;
}

/** The dashboard's session cookie for the workspace of `apiKey`, signed in as a browser is by a one-time link. */
async function dashboardCookie(apiKey: string): Promise<string> {
  const { url } = await command('dashboard link', { workspace: workspaceOf.get(apiKey)! });
  const token = new URL(url).searchParams.get('token')!;
  const res = await fetch(`${server.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: server.url },
    body: new URLSearchParams({ token }).toString(),
  });
  return res.headers.getSetCookie().find((c) => c.startsWith('prospecta_session='))!.split(';')[0]!;
}

beforeAll(async () => {
  dataDir = await tempDir('addon-runs');
  const release = path.join(dataDir, 'release');
  await generateRelease({ dir: release, establishments: 800 });
  expect(await commandHere({ DATA_DIR: dataDir }, 'import cnpj', { dir: release })).toMatchObject({ complete: true });
  const zips = (await readdir(release)).filter((f) => f.startsWith('Estabelecimentos'));
  const csv = (await Promise.all(zips.map((f) => unzip(path.join(release, f))))).flat().map((e) => e.bytes.toString('latin1')).join('\n');
  cnpjs = csv.split('\n').filter(Boolean).map((line) => line.split(';').slice(0, 3).map((f) => f.replace(/"/g, '')).join(''));
  providers = await startFakeProviderProcess();
  server = await startServer({ DATA_DIR: dataDir, ...providers.env });
}, 60_000);

afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  providers.stop();
});

let now = 0;
function runtime(budgetMs?: number): Runtime {
  return {
    http: A.urlFetch(),
    user: A.userProperties(),
    document: A.documentProperties(),
    sheet: A.sheetNamed,
    triggers: A.gasTriggers,
    lock: A.documentLock(),
    // A clock the test moves: each reading is a second later, so budgets are spent predictably.
    clock: { now: () => (now += 1000), sleep: () => undefined },
    ...(budgetMs !== undefined ? { budgetMs } : {}),
  };
}

beforeEach(async () => {
  gas = fakeGas();
  A = await addonIn(gas);
});

const pretty = (c: string) => c.replace(/^(.{2})(.{3})(.{3})(.{4})(.{2})$/, '$1.$2.$3/$4-$5');

/** What the workspace of `apiKey` has spent, as the server's ledger says. */
async function consumed(apiKey: string): Promise<number> {
  const credits = (await fetch(`${server.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${apiKey}` } }).then((r) => r.json())) as { consumed: number };
  return credits.consumed;
}

/** What the server answers a GET of `/v1/api` + `path`, for what the add-on itself never reads. */
async function serverGet(apiKey: string, path: string): Promise<any> {
  return fetch(`${server.url}/v1/api${path}`, { headers: { Authorization: `Bearer ${apiKey}` } }).then((r) => r.json());
}

/** The workspace's jobs on the server. */
async function serverJobs(apiKey: string): Promise<Array<{ jobId: string; status: string; total: number }>> {
  const list = (await fetch(`${server.url}/v1/api/jobs`, { headers: { Authorization: `Bearer ${apiKey}` } }).then((r) => r.json())) as { jobs: Array<{ jobId: string; status: string; total: number }> };
  return list.jobs;
}

/** Polls as the Jobs panel and the trigger do, until the run has written all its results. */
async function finish(deps: () => ReturnType<Addon['jobDeps']>, id: string) {
  return eventually(
    () => {
      A.runJobs(deps());
      const job = A.loadJob(A.documentProperties(), id)!;
      expect(job.state).not.toBe('running');
      return job;
    },
    { timeoutMs: 90_000, intervalMs: 300, message: 'the run to write all its results' },
  );
}

describe('CNPJ fill', () => {
  it('a run that fits one fetchAll is sent at once, and marks what it could not use', async () => {
    const apiKey = await workspace(10_000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const wrongDigits = cnpjs[0]!.slice(0, 12) + String((Number(cnpjs[0]!.slice(12)) + 1) % 100).padStart(2, '0');
    const absent = '99999999' + '0001' + cnpjCheckDigits('999999990001');
    const rows = [
      ['Cliente', 'CNPJ'],
      ...cnpjs.slice(0, 60).map((c, i) => [`Cliente ${i}`, i % 2 ? pretty(c) : c]),
      ['Sem CNPJ', ''],
      ['Errado', 'abc'],
      ['Dígitos', wrongDigits],
      ['Ausente', absent],
    ];
    const sheet = gas.addSheet('Clientes', rows);
    const calls = gas.http.calls;
    const job = A.startRun(runtime(), 'cnpj', 'Clientes', 2, rows.length, {});
    expect(job.state).toBe('done');
    expect(job.server).toBeUndefined();
    expect(gas.http.calls - calls).toBe(1);
    expect(job.totals).toEqual({ done: 60, failed: 2, skipped: 2, credits: 60 });
    expect(await consumed(apiKey)).toBe(60);

    const table = sheet.table();
    expect(table[0]).toEqual(['Cliente', 'CNPJ', 'prospecta status', 'Razão social', 'Nome fantasia', 'Situação cadastral', 'Atividade principal', 'Cidade/UF', 'Telefone', 'Email', 'Capital social', 'Porte', 'Sócios']);
    expect(sheet.column('Razão social').slice(0, 60).every((v) => v.length > 0)).toBe(true);
    expect(sheet.column('prospecta status').slice(0, 60).every((s) => s.startsWith('✓ receita_federal · 1 credit · job '))).toBe(true);
    expect(sheet.column('prospecta status').slice(60).map((s) => s.replace(/ · job \w+$/, ''))).toEqual([
      '– no CNPJ',
      '✗ not a CNPJ',
      '✗ invalid check digits',
      '– not found',
    ]);
    expect(gas.triggers).toEqual([]);
  });

  it('reads the column the analyst chose, not the one detected', async () => {
    const apiKey = await workspace(100);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Clientes', [['CNPJ', 'CNPJ do cliente'], ['', cnpjs[0]!], ['abc', cnpjs[1]!]]);
    const job = A.startRun(runtime(), 'cnpj', 'Clientes', 2, 3, { columns: { cnpj: 'CNPJ do cliente' } });
    expect(job.totals).toMatchObject({ done: 2, credits: 2 });
    expect(sheet.column('Razão social').every((v) => v.length > 0)).toBe(true);
  });
});

// A job's items run on a busy server's runner: its tests wait for it longer than the default 60 s.
describe('runs larger than one fetchAll: server jobs', { timeout: 180_000 }, () => {
  it('become one job on the server, whose results are written as they finish; the trigger goes on until all are', async () => {
    const apiKey = await workspace(10_000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const rows = [['CNPJ'], ...cnpjs.slice(0, 250).map((c) => [c]), ['abc']];
    const sheet = gas.addSheet('Grande', rows);
    const calls = gas.http.calls;
    const started = A.startRun(runtime(), 'cnpj', 'Grande', 2, rows.length, {});
    expect(started).toMatchObject({ state: 'running', requests: 250, server: { jobId: expect.any(String) } });
    // One request started the job; the row that needs none is marked at once.
    expect(gas.http.calls - calls).toBe(1);
    expect(sheet.column('prospecta status').at(-1)).toBe(`✗ not a CNPJ · job ${started.id}`);
    expect(gas.triggers.map((t) => t.handler)).toEqual(['continueJobs']);
    expect(await serverJobs(apiKey)).toEqual([expect.objectContaining({ jobId: started.server!.jobId, total: 250 })]);

    const done = await finish(() => A.jobDeps(runtime()), started.id);
    expect(done).toMatchObject({ state: 'done', totals: { done: 250, failed: 1, skipped: 0, credits: 250 }, server: { finished: 250, credits: 250 } });
    const statuses = sheet.column('prospecta status');
    expect(statuses.slice(0, 250).every((s) => s === `✓ receita_federal · 1 credit · job ${started.id}`)).toBe(true);
    expect(sheet.column('Razão social').slice(0, 250).every((v) => v.length > 0)).toBe(true);
    expect(await consumed(apiKey)).toBe(250);
    expect(gas.triggers).toEqual([]);
    // The Jobs panel lists it, finished, with its credits.
    expect(A.sidebarJobs()).toEqual([expect.objectContaining({ id: started.id, running: false, progress: 1, credits: 250, text: 'Done: 250 filled, 0 skipped, 1 failed, 250 credits.' })]);
  });

  it('never starts a second job: a start whose answer was lost is sent again with its key, and answered the same job', async () => {
    const apiKey = await workspace(10_000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Grande', [['CNPJ'], ...cnpjs.slice(0, 150).map((c) => [c])]);
    // The answer to the start is lost (the connection drops once the server has started the job).
    const real = A.urlFetch();
    const dying: HttpPort = {
      fetchAll: (rs) => real.fetchAll(rs),
      fetch(r) {
        const answer = real.fetch(r);
        if (r.method === 'post' && r.url.endsWith('/api/jobs')) throw new Error('Address unavailable');
        return answer;
      },
    };
    const lost = A.startRun({ ...runtime(), http: dying }, 'cnpj', 'Grande', 2, 151, {});
    expect(lost).toMatchObject({ state: 'running', server: { jobId: null, key: expect.any(String) } });
    const id = lost.id;
    expect(A.activeJobs(A.documentProperties())).toEqual([id]);
    expect(gas.triggers.map((t) => t.handler)).toEqual(['continueJobs']);
    expect(await serverJobs(apiKey)).toHaveLength(1);

    const done = await finish(() => A.jobDeps(runtime()), id);
    expect(done).toMatchObject({ state: 'done', totals: { done: 150, credits: 150 } });
    expect(await serverJobs(apiKey)).toHaveLength(1);
    expect(await consumed(apiKey)).toBe(150);
    expect(sheet.column('prospecta status').every((s) => s.split(`job ${id}`).length === 2)).toBe(true);
  });

  it('a reopened sheet resumes writing the job it started, from the document, without a second job', async () => {
    const apiKey = await workspace(10_000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Grande', [['CNPJ'], ...cnpjs.slice(0, 200).map((c) => [c])]);
    gas.spreadsheet.selection = { row: 2, rows: 200 };
    const [started] = A.sidebarStart('cnpj', {});
    expect(started).toMatchObject({ running: true, title: 'CNPJ fill: Grande, rows 2–201' });

    // The sheet is closed and opened again: a new execution context, the same document.
    const reopened = await addonIn(gas);
    const done = await eventually(
      () => {
        const [job] = reopened.sidebarJobs();
        expect(job).toMatchObject({ id: started!.id, running: false });
        return job!;
      },
      { timeoutMs: 90_000, intervalMs: 300, message: 'the reopened sheet to write the results' },
    );
    expect(done).toMatchObject({ progress: 1, credits: 200 });
    expect(await serverJobs(apiKey)).toHaveLength(1);
    expect(await consumed(apiKey)).toBe(200);
    expect(sheet.column('prospecta status').every((s) => s === `✓ receita_federal · 1 credit · job ${started!.id}`)).toBe(true);
  });

  it('refuses a run of more rows to look up than a job takes, before anything is sent', async () => {
    const apiKey = await workspace(10);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const rows = 10_001;
    gas.addSheet('Enorme', [['CNPJ'], ...Array.from({ length: rows }, (_, i) => [cnpjs[i % cnpjs.length]!])]);
    const calls = gas.http.calls;
    const job = A.startRun(runtime(), 'cnpj', 'Enorme', 2, rows + 1, {});
    expect(job).toMatchObject({ state: 'stopped', error: 'A run takes at most 10,000 rows to look up; select fewer.' });
    expect(gas.http.calls).toBe(calls);
    expect(await serverJobs(apiKey)).toEqual([]);
  });

  it('Cancel stops the server job; what it had finished is still written, and nothing else is charged', async () => {
    const apiKey = await workspace(10_000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Grande', [['CNPJ'], ...cnpjs.slice(0, 800).map((c) => [c])]);
    gas.spreadsheet.selection = { row: 2, rows: 800 };
    const [started] = A.sidebarStart('cnpj', {});
    const [cancelling] = A.sidebarCancelRun(started!.id);
    expect(cancelling).toMatchObject({ id: started!.id });
    const done = await finish(() => A.jobDeps(runtime()), started!.id);
    // Cancelled, unless the job had already finished every item (then it is simply done).
    expect(['cancelled', 'done']).toContain(done.state);
    const [onServer] = await serverJobs(apiKey);
    expect(onServer!.status).toBe(done.state);
    const filled = sheet.column('prospecta status').filter((s) => s.startsWith('✓'));
    expect(filled.length).toBe(done.totals.done);
    expect(await consumed(apiKey)).toBe(filled.length);
    expect(done.totals.credits).toBe(filled.length);
  });
});

describe('AI column and research column', () => {
  it('one value per row from the chosen context columns; research answers in their own column', async () => {
    const apiKey = await workspace(100);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Contas', [
      ['Empresa', 'Cidade', 'Notas'],
      ['Padaria Sol', 'Recife', 'cliente antigo'],
      ['Acme Software', 'Curitiba', ''],
    ]);
    const job = A.startRun(runtime(), 'aiColumn', 'Contas', 2, 3, { instruction: 'setor em duas palavras', context: ['Empresa', 'Cidade'], output: 'Setor' });
    expect(job.state).toBe('done');
    expect(sheet.column('Setor')).toEqual(['setor em duas palavras: Padaria Sol', 'setor em duas palavras: Acme Software']);
    expect(sheet.column('prospecta status')[0]).toMatch(/^✓ 1 credit · job/);
    const again = A.startRun(runtime(), 'aiColumn', 'Contas', 2, 2, { instruction: 'setor em duas palavras', context: ['Empresa', 'Cidade'], output: 'Setor' });
    expect(again.totals.credits).toBe(0);

    const research = A.startRun(runtime(), 'research', 'Contas', 2, 3, { prompt: 'Vendem para hospitais?', context: [], output: 'Pesquisa', webSearch: false });
    expect(research.totals).toMatchObject({ done: 2, credits: 4 });
    expect(sheet.column('Pesquisa')[0]).toBe('About Padaria Sol: nothing in the row says.');
  });

  it('leaves the output column out of the context however its label is written, and the add-on\'s own columns too', async () => {
    const apiKey = await workspace(100);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const long = 'n'.repeat(6000); // above the old hard-coded 5,000, within the schema's 50,000
    const sheet = gas.addSheet('Contas', [
      ['Empresa', 'Setor', 'prospecta status', 'Notas'],
      ['Padaria Sol', 'antigo', 'x', long],
    ]);
    const sent: HttpRequest[] = [];
    const real = A.urlFetch();
    const spy: HttpPort = { fetch: (r) => real.fetch(r), fetchAll: (rs) => (sent.push(...rs), real.fetchAll(rs)) };
    const job = A.startRun({ ...runtime(), http: spy }, 'aiColumn', 'Contas', 2, 2, { instruction: 'setor', context: [], output: ' SETOR ' });
    expect(job.state).toBe('done');
    expect(sent.map((r) => JSON.parse(r.payload!))).toEqual([{ Empresa: 'Padaria Sol', Notas: long, instruction: 'setor' }]);
    // The output went to the existing column, as ensureColumn matches labels.
    expect(sheet.table()[0]).toEqual(['Empresa', 'Setor', 'prospecta status', 'Notas']);
    expect(sheet.column('Setor')[0]).not.toBe('antigo');
  });
});

describe('enrich selected rows', () => {
  it('one enrich request a row, people and companies alike; status says who filled what; complete rows are skipped next time', async () => {
    const apiKey = await workspace(1000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Leads', [
      ['Nome', 'Empresa', 'Site', 'LinkedIn'],
      ['Ana Souza', 'Acme Software', 'acme.com.br', ''],
      ['', '', '', 'https://www.linkedin.com/in/carla-mendes'],
      ['Nobody Here', 'Nowhere', 'nowhere.example', ''],
      ['', '', '', ''],
    ]);
    const options: EnrichOptions = { fields: ['email', 'title', 'linkedinUrl'] };
    const job = A.startRun(runtime(), 'enrich', 'Leads', 2, 5, options);
    expect(job.state).toBe('done');
    expect(sheet.column('Email')).toEqual(['ana.souza@acme.com.br', 'carla.mendes@globex.com', '', '']);
    expect(sheet.column('Title')[0]).toBe('Head of Sales');
    const statuses = sheet.column('prospecta status').map((s) => s.replace(/ · job \w+$/, ''));
    expect(statuses[0]).toMatch(/^✓ hunter: email, title.* · \d+ credits?$/);
    expect(statuses[1]).toMatch(/^✓ .*email.* · \d+ credits?$/);
    expect(statuses[2]).toMatch(/^– nothing found · \d+ credits?$/);
    expect(statuses[3]).toMatch(/^– nothing to look up/);
    expect(job.totals.credits).toBeGreaterThan(0);
    expect(await consumed(apiKey)).toBe(job.totals.credits);

    const again = A.startRun(runtime(), 'enrich', 'Leads', 2, 3, options);
    expect(again.totals).toMatchObject({ skipped: 2, credits: 0 });
  });

  it('sends the maxAge setting: a row paid for is given again as "cached" for nothing, and 0 days pays again', async () => {
    const apiKey = await workspace(1000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Leads', [['Nome', 'Site'], ['Ana Souza', 'acme.com.br']]);
    gas.spreadsheet.selection = { row: 2, rows: 1 };
    const options = { fields: ['email', 'title'], overwrite: true } satisfies EnrichOptions;
    A.sidebarStart('enrich', options);
    const paid = await consumed(apiKey);
    expect(paid).toBeGreaterThan(0);
    expect(sheet.column('prospecta status')[0]).not.toMatch(/cached/);

    // Asked again (the server's default window): the stored answer, marked cached, 0 credits.
    const [second] = A.sidebarStart('enrich', options);
    expect(sheet.column('prospecta status')[0]).toMatch(/^✓ hunter: email, title · cached · 0 credits · job /);
    expect(second).toMatchObject({ credits: 0 });
    expect(sheet.column('Email')).toEqual(['ana.souza@acme.com.br']);
    expect(await consumed(apiKey)).toBe(paid);

    // The analyst's setting is sent as maxAge: 0 days always pays again.
    expect(A.sidebarSetMaxAge(0)).toMatchObject({ maxAgeDays: 0 });
    A.sidebarStart('enrich', options);
    expect(sheet.column('prospecta status')[0]).not.toMatch(/cached/);
    expect(await consumed(apiKey)).toBe(2 * paid);
    expect(() => A.sidebarSetMaxAge(366)).toThrow('Reuse enrichments paid for within 0 to 365 days (0 always pays again).');
    expect(A.sidebarSetMaxAge(null)).toMatchObject({ maxAgeDays: null });
  });

  it('a run of 5 rows tries the first five of the selection only', async () => {
    const apiKey = await workspace(1000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const sheet = gas.addSheet('Clientes', [['CNPJ'], ...cnpjs.slice(0, 12).map((c) => [c])]);
    gas.spreadsheet.selection = { row: 2, rows: 12 };
    const [trial] = A.sidebarStart('cnpj', {}, true);
    expect(trial).toMatchObject({ title: 'CNPJ fill: Clientes, rows 2–6', credits: 5 });
    expect(sheet.column('prospecta status').filter(Boolean)).toHaveLength(5);
    expect(await consumed(apiKey)).toBe(5);
  });

  it('a bad key or an empty balance stops the run with a plain message', async () => {
    A.saveSettings(A.userProperties(), { apiKey: `service_live_${'x'.repeat(40)}`, serverUrl: server.url });
    gas.addSheet('Leads', [['Nome', 'Site'], ['Ana Souza', 'acme.com.br']]);
    const job = A.startRun(runtime(), 'enrich', 'Leads', 2, 2, { fields: ['email'] });
    expect(job).toMatchObject({ state: 'stopped', error: expect.stringMatching(/API key was refused/) });

    const broke = await workspace(0);
    A.saveSettings(A.userProperties(), { apiKey: broke, serverUrl: server.url });
    const poor = A.startRun(runtime(), 'enrich', 'Leads', 2, 2, { fields: ['email'] });
    expect(poor).toMatchObject({ state: 'stopped', error: expect.stringMatching(/Not enough credits/) });
  });
});

describe('campaign from selected rows', () => {
  it('ids rows, syncs them, creates the campaign 25 rows at a time; the Prospects tab syncs edits back', async () => {
    const apiKey = await workspace(10);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const rows = [['Nome', 'Empresa', 'Cargo'], ...Array.from({ length: 30 }, (_, i) => [`Pessoa ${i} Souza`, `Empresa ${i}`, 'CEO'])];
    const leads = gas.addSheet('Leads', rows);
    const client = new A.ProspectaClient(A.urlFetch(), { apiKey, baseUrl: server.url });
    const { campaignId, created } = A.createCampaignFromRows(client, A.documentProperties(), A.sheetNamed('Leads')!, 2, 31, {
      name: 'Planilha',
      offering: 'Automação de agenda para clínicas.',
      language: 'pt-BR',
    });
    expect(created).toBe(30);
    const ids = leads.column(A.ROW_ID_COLUMN);
    expect(new Set(ids).size).toBe(30);
    expect(leads.hidden.has(leads.table()[0]!.indexOf(A.ROW_ID_COLUMN) + 1)).toBe(true);
    // Running it again on the same rows reuses their ids: the campaign skips them.
    const sheetId = A.documentProperties().get('prospecta.sheetId.Leads')!;
    expect(client.call('addProspects', { campaignId, sheetId, rowIds: ids.slice(0, 3) })).toMatchObject({ added: 0, skipped: 3 });

    const tab = A.sheetOrNew(A.PROSPECTS_TAB);
    expect(A.refreshProspects(client, campaignId, tab)).toBe(30);
    const sheet = gas.spreadsheet.sheets.find((s) => s.getName() === A.PROSPECTS_TAB)!;
    expect(sheet.column('Connection note')[0]).toMatch(/^Olá, Pessoa!/);
    // The reviewer edits two cells and mistypes a status.
    const headers = sheet.table()[0]!;
    sheet.put(2, headers.indexOf('Status') + 1, 'Replied');
    sheet.put(3, headers.indexOf('Email subject') + 1, 'Assunto revisado');
    const first = A.syncProspects(client, campaignId, tab);
    expect(first).toEqual({ updated: 2, problems: [] });
    const prospects = client.call('listProspects', { campaignId }).prospects;
    expect(prospects.filter((p) => p.status === 'replied')).toHaveLength(1);
    expect(prospects.some((p) => p.emailSubject === 'Assunto revisado')).toBe(true);
    const events = (await serverGet(apiKey, `/prospecting/prospects/${sheet.column('Prospect id')[0]!}/events`)).events.map((e: { type: string }) => e.type);
    expect(events).toContain('status_changed');

    sheet.put(4, headers.indexOf('Status') + 1, 'done');
    const second = A.syncProspects(client, campaignId, tab);
    expect(second.problems[0]).toMatch(/row 4: status must be one of/);
    expect(sheet.column('Status')[2]).toBe('done'); // kept for the user to fix
  });
});

describe('campaign creation that Apps Script stops half-way', () => {
  it('is finished by running it again on the same rows: one campaign, every row in it once', async () => {
    const apiKey = await workspace(10);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const rows = [['Nome', 'Empresa'], ...Array.from({ length: 80 }, (_, i) => [`Pessoa ${i} Lima`, `Empresa ${i}`])];
    const leads = gas.addSheet('Leads', rows);
    const client = new A.ProspectaClient(A.urlFetch(), { apiKey, baseUrl: server.url });
    // The execution dies while its second addProspects is under way: the server added the rows,
    // the add-on never heard back.
    const real = A.urlFetch();
    let adds = 0;
    const dying: HttpPort = {
      fetchAll: (rs) => real.fetchAll(rs),
      fetch(r) {
        const answer = real.fetch(r);
        if (r.method === 'post' && r.url.endsWith('/prospects') && ++adds === 2) throw new Error('Exceeded maximum execution time');
        return answer;
      },
    };
    const fields = { name: 'Parcial', offering: 'Automação de agenda para clínicas.', language: 'pt-BR' };
    expect(() => A.createCampaignFromRows(new A.ProspectaClient(dying, { apiKey, baseUrl: server.url }), A.documentProperties(), A.sheetNamed('Leads')!, 2, 81, fields)).toThrow(
      /Exceeded maximum execution time/,
    );
    const [started] = (await serverGet(apiKey, '/prospecting/campaigns')).campaigns;
    expect((await serverGet(apiKey, '/prospecting/campaigns')).campaigns).toHaveLength(1);
    expect(A.documentProperties().get(A.CAMPAIGN_KEY)).toBe(started!.campaignId);
    expect(client.call('listProspects', { campaignId: started!.campaignId }).prospects).toHaveLength(75);

    // Run again (even with other fields): the same campaign is finished, no second one is made.
    const again = A.createCampaignFromRows(client, A.documentProperties(), A.sheetNamed('Leads')!, 2, 81, { name: 'Outra', offering: 'Outra coisa.' });
    expect(again).toMatchObject({ campaignId: started!.campaignId, name: 'Parcial', resumed: true });
    expect((await serverGet(apiKey, '/prospecting/campaigns')).campaigns).toHaveLength(1);
    const prospects = client.call('listProspects', { campaignId: started!.campaignId }).prospects;
    expect(prospects.map((p) => p.rowId).sort()).toEqual([...leads.column(A.ROW_ID_COLUMN)].sort());
    expect(new Set(prospects.map((p) => p.rowId)).size).toBe(80);
    expect([...gas.documentProperties.data.keys()].filter((k) => k.startsWith(A.CAMPAIGN_RUN_KEY))).toEqual([]);

    // Once finished, running it again is a new campaign, as asked.
    const next = A.createCampaignFromRows(client, A.documentProperties(), A.sheetNamed('Leads')!, 2, 3, fields);
    expect(next).toMatchObject({ resumed: false, created: 2 });
    expect(next.campaignId).not.toBe(started!.campaignId);
  });

  it('a run on other rows in between does not lose the stopped one', async () => {
    const apiKey = await workspace(10);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    gas.addSheet('Leads', [['Nome', 'Empresa'], ...Array.from({ length: 30 }, (_, i) => [`Pessoa ${i} Lima`, `Empresa ${i}`])]);
    const client = new A.ProspectaClient(A.urlFetch(), { apiKey, baseUrl: server.url });
    const real = A.urlFetch();
    const dying: HttpPort = {
      fetchAll: (rs) => real.fetchAll(rs),
      fetch(r) {
        if (r.method === 'post' && r.url.endsWith('/prospects')) throw new Error('Exceeded maximum execution time');
        return real.fetch(r);
      },
    };
    const fields = { name: 'A', offering: 'Agenda.' };
    expect(() => A.createCampaignFromRows(new A.ProspectaClient(dying, { apiKey, baseUrl: server.url }), A.documentProperties(), A.sheetNamed('Leads')!, 2, 31, fields)).toThrow();
    const other = A.createCampaignFromRows(client, A.documentProperties(), A.sheetNamed('Leads')!, 2, 5, { name: 'B', offering: 'Agenda.' });
    expect(other.resumed).toBe(false);
    const finished = A.createCampaignFromRows(client, A.documentProperties(), A.sheetNamed('Leads')!, 2, 31, fields);
    expect(finished).toMatchObject({ name: 'A', resumed: true });
    expect(client.call('listProspects', { campaignId: finished.campaignId }).prospects).toHaveLength(30);
    expect((await serverGet(apiKey, '/prospecting/campaigns')).campaigns).toHaveLength(2);
  });
});

describe('menu and sidebar entry points', () => {
  it('a campaign from the header row alone is refused before anything is written or sent', async () => {
    const apiKey = await workspace(10);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const leads = gas.addSheet('Leads', [['Nome', 'Empresa'], ['Ana Souza', 'Acme']]);
    gas.spreadsheet.selection = { row: 1, rows: 1 };
    const calls = gas.http.calls;
    A.createCampaignFromSelection();
    expect(gas.alerts).toEqual(['Select the rows to make prospects of (below the header row).']);
    expect(() => A.sidebarCreateCampaign({ name: 'X', offering: 'Y' })).toThrow('Select the rows to make prospects of (below the header row).');
    expect(leads.table()[0]).toEqual(['Nome', 'Empresa']);
    expect(gas.http.calls).toBe(calls);
    expect(A.documentProperties().get('prospecta.sheetId.Leads')).toBeNull();
  });

  it('without settings, the menu says to open Settings', () => {
    gas.addSheet('Leads', [['Nome'], ['Ana']]);
    A.createCampaignFromSelection();
    expect(gas.alerts).toEqual(['Open Settings and enter your API key and server URL first.']);
  });

  it('the sidebar campaign and the menu take the same path and report the campaign they made', async () => {
    const apiKey = await workspace(10);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    gas.addSheet('Leads', [['Nome', 'Empresa'], ['Ana Souza', 'Acme'], ['Bia Lima', 'Globex']]);
    gas.spreadsheet.selection = { row: 2, rows: 2 };
    expect(A.sidebarCreateCampaign({ name: 'Q4', offering: 'Agenda.' })).toBe('Campaign "Q4" created with 2 prospects: review them in the Prospects tab.');
    const prospects = gas.spreadsheet.sheets.find((s) => s.getName() === A.PROSPECTS_TAB)!;
    expect(prospects.column('Row')).toHaveLength(2);
  });

  it('a refused search leaves no empty tab behind; a search that answers writes its tab', async () => {
    A.saveSettings(A.userProperties(), { apiKey: await workspace(0), serverUrl: server.url });
    gas.addSheet('Leads', [['Nome']]);
    expect(() => A.sidebarSearch('companies', { state: 'SP' }, 5)).toThrow(/Not enough credits/);
    expect(gas.spreadsheet.sheets.map((s) => s.getName())).toEqual(['Leads']);
    A.saveSettings(A.userProperties(), { apiKey: await workspace(100), serverUrl: server.url });
    expect(A.sidebarSearch('companies', { state: 'SP' }, 5)).toEqual({ message: '5 found, written to the tab "Companies: SP".', exportable: true });
    expect(gas.spreadsheet.sheets.map((s) => s.getName())).toEqual(['Leads', 'Companies: SP']);
  });
});

describe('search into a sheet', () => {
  it('pages until the rows asked for, each row once, each charged once; people too', async () => {
    const apiKey = await workspace(1000);
    const client = new A.ProspectaClient(A.urlFetch(), { apiKey, baseUrl: server.url });
    const filters = { state: 'SP', registrationStatuses: ['ATIVA' as const] };
    // The same search in one unpaged answer is the reference: 45 rows are three pages of 20, 20 and 5.
    const calls = gas.http.calls;
    expect(A.searchCompaniesIntoSheet(client, filters, 45, () => A.sheetOrNew('Empresas SP'), A.gasClock)).toEqual({ found: 45, more: true });
    expect(gas.http.calls - calls).toBe(3);
    const companies = gas.spreadsheet.sheets.find((s) => s.getName() === 'Empresas SP')!;
    expect(companies.table()[0]!.slice(0, 3)).toEqual(['CNPJ', 'Razão social', 'Nome fantasia']);
    expect(new Set(companies.column('CNPJ')).size).toBe(45);
    expect(companies.column('Cidade/UF').every((c) => c.endsWith('/SP'))).toBe(true);
    expect(companies.column('Situação cadastral').every((c) => c === 'ATIVA')).toBe(true);
    expect(await consumed(apiKey)).toBe(45);

    const found = A.searchPeopleIntoSheet(client, { sourceOrder: ['receita_federal'] }, 30, () => A.sheetOrNew('Sócios'), A.gasClock);
    expect(found).toEqual({ found: 30, more: true });
    const people = gas.spreadsheet.sheets.find((s) => s.getName() === 'Sócios')!;
    expect(people.column('Source')).toEqual(Array(30).fill('receita_federal'));
  });

  it('a page refused midway (credits spent) stops the search, and the pages paid for are written', async () => {
    const apiKey = await workspace(25);
    const client = new A.ProspectaClient(A.urlFetch(), { apiKey, baseUrl: server.url });
    const outcome = A.searchCompaniesIntoSheet(client, { state: 'SP' }, 60, () => A.sheetOrNew('Empresas SP'), A.gasClock);
    expect(outcome.found).toBeGreaterThanOrEqual(20);
    expect(outcome.found).toBeLessThan(60);
    expect(outcome.stoppedBy).toMatch(/Not enough credits/);
    const tab = gas.spreadsheet.sheets.find((s) => s.getName() === 'Empresas SP')!;
    expect(new Set(tab.column('CNPJ')).size).toBe(outcome.found);
    expect(await consumed(apiKey)).toBe(outcome.found);
  });

  it('stops at the last page when fewer rows match than asked for', async () => {
    const apiKey = await workspace(1000);
    const client = new A.ProspectaClient(A.urlFetch(), { apiKey, baseUrl: server.url });
    const all = client.call('searchCompanies', { state: 'SP', openingDateMin: '2015-01-01', limit: 20 });
    const { found, more } = A.searchCompaniesIntoSheet(client, { state: 'SP', openingDateMin: '2015-01-01' }, 1000, () => A.sheetOrNew('Recentes'), A.gasClock);
    expect(found).toBeGreaterThanOrEqual(all.results.length);
    // Nothing more to export: the sidebar offers no export.
    expect(more).toBe(false);
    const tab = gas.spreadsheet.sheets.find((s) => s.getName() === 'Recentes')!;
    expect(new Set(tab.column('CNPJ')).size).toBe(found);
  });
});

describe('Export all matching rows', { timeout: 120_000 }, () => {
  /** Follows the document's export as the sidebar does, until its file is written. */
  const exported = () =>
    eventually(
      () => {
        const run = A.sidebarExportStatus()!;
        expect(run.running).toBe(false);
        return run;
      },
      { timeoutMs: 60_000, intervalMs: 300, message: 'the export to end and be written' },
    );

  it('a search that matched more offers an export job; its file goes to a new tab, the same rows as paging the search, paid once', async () => {
    const apiKey = await workspace(5_000);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    gas.addSheet('Leads', [['Nome']]);
    expect(A.sidebarSearch('companies', { state: 'SP' }, 5).exportable).toBe(true);
    const started = A.sidebarExport({ state: 'SP' }, 1_000_000);
    expect(started.running).toBe(true);
    // A second export while one runs is refused before anything is sent.
    expect(() => A.sidebarExport({ state: 'RJ' }, 10)).toThrow(/still running/);
    const run = await exported();
    const jobs = await serverJobs(apiKey);
    expect(jobs.map((j) => j.status)).toEqual(['done']);
    const jobId = jobs[0]!.jobId;

    const client = new A.ProspectaClient(A.urlFetch(), { apiKey, baseUrl: server.url });
    const paged: string[] = [];
    for (let cursor: string | undefined; ; ) {
      const page = client.call('searchCompanies', { state: 'SP', limit: 20, ...(cursor ? { cursor } : {}) });
      paged.push(...page.results.map((c) => c.cnpj));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    const tab = gas.spreadsheet.sheets.find((s) => s.getName() === 'Export: SP')!;
    expect(tab.table()[0]!.slice(0, 3)).toEqual(['cnpj', 'root', 'name']);
    // Identifiers of digits are written as text (a leading '), or Sheets would make numbers of them.
    // (an alphanumeric CNPJ is text already).
    expect(tab.column('cnpj')).toEqual(paged.map((c) => (/^\d+$/.test(c) ? `'${c}` : c)));
    expect(tab.column('root')).toEqual(paged.map((c) => c.slice(0, 8)).map((r) => (/^0\d+$/.test(r) ? `'${r}` : r)));
    expect(tab.column('address.state').every((s) => s === 'SP')).toBe(true);
    expect(run).toEqual({ running: false, text: `${paged.length} rows exported for ${paged.length} credits; all written to the tab "Export: SP".`, link: `${server.url}/dashboard/api/jobs/${jobId}/export` });
    // The search's 5 rows, then each exported row once.
    expect(await consumed(apiKey)).toBe(5 + 2 * paged.length);
  });

  it("writes what the spreadsheet has room for, the rest by the file's link; an export the credits stop keeps what it paid for", async () => {
    const apiKey = await workspace(25);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    gas.addSheet('Leads', [['Nome']]);
    // Room in a new tab for the header and 10 rows of the export's columns, of the spreadsheet's 10 million cells.
    const width = CSV_COLUMNS.length;
    gas.addSheet('Big', [['x']]).size = { rows: 10_000_000 - 26_000 - 26_000 - 11 * width, columns: 1 };
    A.sidebarExport({ state: 'SP' }, 100);
    const run = await exported();
    const [job] = await serverJobs(apiKey);
    expect(job!.status).toBe('stopped');
    const link = `${server.url}/dashboard/api/jobs/${job!.jobId}/export`;
    expect(run).toEqual({ running: false, text: '25 rows exported for 25 credits (stopped: the credits ran out); the first 10 written to the tab "Export: SP" (the spreadsheet\'s 10 million cells), the whole file by the link.', link });
    const tab = gas.spreadsheet.sheets.find((s) => s.getName() === 'Export: SP')!;
    expect(tab.table()).toHaveLength(11);
    expect(tab.notes.get('1:1')).toBe(`Rows 2–11 of the export; the spreadsheet has no room for the other 15. The whole file: ${link}`);
    // The link serves the whole file to the dashboard's session, as a browser signed in to it.
    const file = await fetch(link, { headers: { cookie: await dashboardCookie(apiKey) } }).then((r) => r.text());
    expect(file.trim().split('\r\n')).toHaveLength(26);
    expect(await consumed(apiKey)).toBe(25);
  });
});
