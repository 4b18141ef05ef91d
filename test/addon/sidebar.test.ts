/**
 * The sidebar in headless Chromium (Debian's chromium through playwright-core), with
 * google.script.run stubbed: it renders, validates its forms, shows progress and errors.
 * Screenshots of each state go to test-results/sidebar (not in git).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildAddon } from '../../addon/build.mjs';
import { agentLimits } from '../../addon/features/agent.ts';
import { exportLimits, MOST_CHANGES_A_RELEASE, prices, searchLimits } from '../../addon/features/rules.ts';
import { MAX_ROWS_PER_SEARCH } from '../../shared/schemas/search.ts';

/** Null without Chromium: the global setup has said so (or failed the run under CI=true), and these skip. */
const chromiumPath = inject('chromiumPath');
const SHOTS = new URL('../../test-results/sidebar/', import.meta.url).pathname;

let browser: Browser;
let html: string;

const baseState = {
  configured: true,
  balance: '480 credits',
  fields: ['email', 'emailStatus', 'title', 'linkedinUrl', 'phone'],
  providers: [
    { id: 'hunter', name: 'Hunter', cost: 1, outputs: ['email', 'emailStatus', 'title', 'linkedinUrl'] },
    { id: 'apollo', name: 'Apollo', cost: 2, outputs: ['title', 'phone'] },
    { id: 'pdl', name: 'People Data Labs', cost: 3, outputs: ['phone'] },
  ],
  labels: { email: 'Email', emailStatus: 'Email status', title: 'Title', linkedinUrl: 'LinkedIn', phone: 'Phone' },
  headers: ['Nome', 'Empresa', 'Site'],
  detected: { fullName: 'Nome', companyName: 'Empresa', companyDomain: 'Site' },
  selectedRows: 12,
  templates: [{ templateId: 't-1', name: 'Clínicas Recife' }],
  languageModel: { configured: true, variable: 'LLM_BASE_URL' } as { configured: boolean; variable: string } | null,
  prices: prices(),
  searchLimits: { ...searchLimits(), rows: MAX_ROWS_PER_SEARCH },
  exportLimits: exportLimits(),
  exportRun: null,
  mostChangesARelease: MOST_CHANGES_A_RELEASE,
  agentLimits: agentLimits(),
  jobs: [] as unknown[],
  safeMode: true,
  maxAgeDays: null as number | null,
  maxAgeLimit: 365,
  serverFixed: true,
};

/** Runs as the Jobs panel lists them: one working on the server, one done. */
const jobs = [
  { id: 'j2', title: 'Enrich: Leads, rows 2–801', text: 'Working: 312 of 800 looked up, 640 credits so far; 300 filled, 0 skipped, 12 failed, 600 credits written. Results are written as they finish.', running: true, cancelling: false, progress: 0.39, credits: 640 },
  { id: 'j1', title: 'CNPJ fill: Clientes, rows 2–61', text: 'Done: 58 filled, 0 skipped, 2 failed, 58 credits.', running: false, cancelling: false, progress: 1, credits: 58 },
];

/** The stub, as page script: records each call and answers from the scripted responses. */
const STUB = `
  window.calls = [];
  const scripted = JSON.parse(document.currentScript.dataset.responses);
  const runner = (ok, fail) => new Proxy({}, {
    get: (_t, name) => (...args) => {
      window.calls.push([name, args]);
      const answer = scripted[name];
      setTimeout(() => (answer && answer.error ? fail(new Error(answer.error)) : ok(answer)), 10);
    },
  });
  window.google = { script: { run: { withSuccessHandler: (ok) => ({ withFailureHandler: (fail) => runner(ok, fail) }) } } };
`;

/**
 * A page with the sidebar and a scripted google.script.run that records every call. `clock`: the
 * page's timers on Playwright's clock, which a test moves on (fastForward) to a poll's turn
 * rather than waiting for it.
 */
async function open(responses: Record<string, unknown>, { clock = false } = {}): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 300, height: 700 } });
  if (clock) await page.clock.install();
  const data = JSON.stringify(responses).replace(/&/g, '&amp;').replace(/'/g, '&#39;');
  await page.setContent(html.replace('<head>', `<head><script data-responses='${data}'>${STUB}</script>`));
  await page.waitForFunction(() => (globalThis as unknown as { calls: unknown[] }).calls.length > 0);
  return page;
}

const calls = (page: Page) => page.evaluate(() => (globalThis as unknown as { calls: Array<[string, unknown[]]> }).calls);

/** Every input field the Enrich tab offers, none chosen: what the sidebar sends beside the detected ones. */
const NO_COLUMNS = { email: '', linkedinUrl: '', fullName: '', firstName: '', lastName: '', companyName: '', companyDomain: '', phone: '' };

describe.skipIf(!chromiumPath)('sidebar', () => {
  beforeAll(async () => {
    await buildAddon({ serverUrl: 'https://prospecta.test' });
    html = await readFile(new URL('../../addon/dist/Sidebar.html', import.meta.url), 'utf8');
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--no-sandbox'] });
  });
  afterAll(() => browser?.close());

  it('renders the fields on offer and an estimate for the selection', async () => {
    const page = await open({ sidebarState: baseState });
    await page.waitForSelector('#fields input');
    expect(await page.locator('#fields label').allTextContents()).toEqual(['Email', 'Email status', 'Title', 'LinkedIn', 'Phone']);
    // Hunter and Apollo can fill the fields ticked by default (email, title, LinkedIn): 3 credits a row at most.
    expect(await page.locator('#enrich-estimate').textContent()).toMatch(/^12 selected row\(s\): at most 36 credits \(3 credits a row if every provider that can fill these fields is called\); a row enriched within the server's reuse window costs nothing\.$/);
    await page.check('#fields input[value=phone]');
    expect(await page.locator('#enrich-estimate').textContent()).toMatch(/^12 selected row\(s\): at most 72 credits \(6 credits/);
    expect(await page.locator('#balance').textContent()).toBe('480 credits');
    await page.screenshot({ path: `${SHOTS}enrich.png` });
  });

  it('states prices from the registry, not numbers of its own', async () => {
    const p = { companyRow: 3, personRow: 4, cnpj: 2, aiColumn: 5, research: 4, researchWithWeb: 9 };
    const page = await open({ sidebarState: { ...baseState, prices: p } });
    await page.waitForSelector('#fields input');
    expect(await page.locator('#cnpj-estimate').textContent()).toBe('12 selected row(s): at most 24 credits.');
    expect(await page.locator('#cnpj p.muted').first().textContent()).toMatch(/, 2 credits per company found\.$/);
    expect(await page.locator('label:has(#webSearch)').textContent()).toMatch(/Search the web \(9 credits a row instead of 4\)/);
    // Every paid tab estimates the selection, the AI column tab included.
    expect(await page.locator('#ai-estimate').textContent()).toBe('12 selected row(s): at most 60 credits (5 credits a value).');
    expect(await page.locator('#research-price').textContent()).toBe('4 credits a row: at most 48 credits for 12 selected row(s).');
    // The real registry's research prices, as the add-on sends them.
    const real = await open({ sidebarState: baseState });
    await real.waitForSelector('#fields input');
    expect(await real.locator('label:has(#webSearch)').textContent()).toContain(`(${baseState.prices.researchWithWeb} credits a row instead of ${baseState.prices.research})`);
  });

  it('refuses a credit cap that is not a whole number of 0 or more, without calling the add-on', async () => {
    const page = await open({ sidebarState: baseState, sidebarStart: baseState });
    await page.waitForSelector('#fields input');
    for (const bad of ['1.5', '-2']) {
      await page.fill('#maxCredits', bad);
      await page.click('#run-enrich');
      expect(await page.locator('#error').textContent()).toMatch(/credit cap must be a whole number of credits, 0 or more/);
      expect(await page.locator('#maxCredits.invalid').count()).toBe(1);
    }
    expect((await calls(page)).map(([name]) => name)).toEqual(['sidebarState']);
    await page.fill('#maxCredits', '0');
    await page.click('#run-enrich');
    await page.waitForFunction(() => (globalThis as unknown as { calls: Array<[string]> }).calls.some(([name]) => name === 'sidebarStart'));
    const [, args] = (await calls(page)).find(([name]) => name === 'sidebarStart')!;
    expect(args).toEqual(['enrich', { fields: ['email', 'title', 'linkedinUrl'], columns: { ...NO_COLUMNS, ...baseState.detected }, maxCredits: 0, overwrite: false }, false]);
    expect(await page.locator('#maxCredits.invalid').count()).toBe(0);
  });

  it('searches up to 1,000 rows in pages, companies active by default, with the filters analysts use and an estimate first', async () => {
    const page = await open({ sidebarState: baseState, sidebarSearch: { message: '25 found.', exportable: false } });
    await page.click('nav button[data-tab=search]');
    expect(await page.locator('#search-limit').inputValue()).toBe('100');
    expect(await page.locator('#search-limit').getAttribute('max')).toBe('1000');
    expect(await page.locator('#search-estimate').textContent()).toBe(`At most ${100 * baseState.prices.companyRow} credits (1 credit a row found), in pages of 20.`);
    expect(await page.isChecked('#search-active')).toBe(true);
    await page.fill('#search-limit', '5000');
    expect(await page.locator('#search-limit').inputValue()).toBe('1000');
    await page.fill('#search-limit', '300');
    expect(await page.locator('#search-estimate').textContent()).toBe('At most 300 credits (1 credit a row found), in pages of 20.');
    await page.fill('#search-industry', 'padaria');
    await page.fill('#search-state', 'sp');
    await page.fill('#search-city', 'Campinas');
    await page.selectOption('#search-size', '01');
    await page.fill('#search-since', '2020-01-01');
    await page.check('#search-simples');
    await page.check('#search-phone');
    await page.check('#search-email');
    await page.screenshot({ path: `${SHOTS}search-filters.png`, fullPage: true });
    await page.click('#run-search');
    await page.selectOption('#search-kind', 'people');
    expect(await page.isVisible('#search-state')).toBe(false);
    expect(await page.locator('#search-estimate').textContent()).toBe('At most 300 credits (1 credit a row found), in pages of 25.');
    await page.fill('#search-title', 'CEO');
    await page.click('#run-search');
    await page.waitForFunction(() => (globalThis as unknown as { calls: Array<[string]> }).calls.filter(([name]) => name === 'sidebarSearch').length === 2);
    const searches = (await calls(page)).filter(([name]) => name === 'sidebarSearch').map(([, args]) => args);
    expect(searches).toEqual([
      [
        'companies',
        { industry: 'padaria', state: 'SP', city: 'Campinas', fiscalSizes: ['01'], openingDateMin: '2020-01-01', registrationStatuses: ['ATIVA'], simpleOption: true, hasPhone: true, hasEmail: true },
        300,
      ],
      ['people', { jobTitle: 'CEO', industry: 'padaria' }, 300],
    ]);
  });

  it('offers to export every matching row after a search that matched more, with its estimate, then follows it to its link', async () => {
    const link = 'https://prospecta.test/dashboard/api/jobs/j1/export';
    const page = await open({
      sidebarState: baseState,
      sidebarSearch: { message: '100 found, written to the tab "Companies: SP".', exportable: true },
      sidebarExport: { running: true, text: 'Export queued on the server…' },
      sidebarExportStatus: { running: false, text: '2,400 rows exported for 2400 credits; all written to the tab "Export: SP".', link },
    });
    await page.clock.install();
    await page.click('nav button[data-tab=search]');
    expect(await page.isVisible('#export-panel')).toBe(false);
    await page.fill('#search-state', 'SP');
    await page.click('#run-search');
    await page.locator('#export-form').waitFor({ state: 'visible' });
    expect(await page.locator('#export-rows').inputValue()).toBe(String(exportLimits().default));
    expect(await page.locator('#export-estimate').textContent()).toMatch(new RegExp(`^At most ${exportLimits().default * baseState.prices.exportRow} credits \\(1 credit a row written\\)`));
    await page.fill('#export-rows', '0');
    await page.click('#run-export');
    expect(await page.locator('#error').textContent()).toBe('Rows at most: a whole number from 1 to 1,000,000.');
    expect((await calls(page)).map(([name]) => name)).not.toContain('sidebarExport');
    await page.fill('#export-rows', '5000');
    expect(await page.locator('#export-estimate').textContent()).toMatch(/^At most 5000 credits/);
    await page.click('#run-export');
    await page.locator('#export-status', { hasText: 'Export queued' }).waitFor();
    expect(await page.isVisible('#export-form')).toBe(false);
    await page.clock.runFor(5000);
    await page.locator('#export-link').waitFor({ state: 'visible' });
    expect(await page.locator('#export-link').getAttribute('href')).toBe(link);
    expect(await page.locator('#export-status').textContent()).toMatch(/all written to the tab "Export: SP"/);
    await page.screenshot({ path: `${SHOTS}search-export.png`, fullPage: true });
    const exports = (await calls(page)).filter(([name]) => name === 'sidebarExport').map(([, args]) => args);
    expect(exports).toEqual([[{ state: 'SP', registrationStatuses: ['ATIVA'] }, 5000]]);
  });

  it('Changes: reads the CNPJ column, estimates from the registry, refuses a release that is not a month, and tries 5 rows', async () => {
    const withCnpj = { ...baseState, headers: [...baseState.headers, 'CNPJ'], detected: { ...baseState.detected, cnpj: 'CNPJ' } };
    const page = await open({ sidebarState: withCnpj, sidebarChanges: 'Done: 3 changed, 2 unchanged, 0 not checked, 0 without a CNPJ; 4 credits.' });
    await page.click('nav button[data-tab=changes]');
    await page.locator('#changes-columns select').waitFor();
    expect(await page.locator('#changes-columns select').inputValue()).toBe('CNPJ');
    const most = 12 * baseState.prices.change * MOST_CHANGES_A_RELEASE;
    expect(await page.locator('#changes-estimate').textContent()).toBe(
      `12 selected row(s): ${baseState.prices.change} credit per change found, nothing for a row that did not change; at most ${most} credits a release compared (${MOST_CHANGES_A_RELEASE} kinds of change a row).`,
    );
    await page.fill('#changes-since', '2026-13');
    await page.click('#run-changes');
    expect(await page.locator('#error').textContent()).toMatch(/^The release is a month, YYYY-MM/);
    expect(await page.locator('#changes-since.invalid').count()).toBe(1);
    await page.fill('#changes-since', '2026-10');
    await page.click('#try-changes');
    await page.locator('#progress-text', { hasText: 'Done: 3 changed' }).waitFor();
    await page.screenshot({ path: `${SHOTS}changes.png`, fullPage: true });
    const sent = (await calls(page)).filter(([name]) => name === 'sidebarChanges').map(([, args]) => args);
    expect(sent).toEqual([[{ columns: { cnpj: 'CNPJ' }, since: '2026-10' }, true]]);
  });

  it('refuses a state that is not two letters, without calling the add-on', async () => {
    const page = await open({ sidebarState: baseState });
    await page.click('nav button[data-tab=search]');
    await page.fill('#search-state', 'São Paulo');
    await page.click('#run-search');
    expect(await page.locator('#error').textContent()).toBe('The state is its two letters, e.g. SP.');
    expect(await page.locator('#search-state.invalid').count()).toBe(1);
    expect((await calls(page)).map(([name]) => name)).toEqual(['sidebarState']);
  });

  it('says on the AI column, Research and Agent tabs that the server has no model, before anything is typed', async () => {
    const page = await open({ sidebarState: { ...baseState, languageModel: { configured: false, variable: 'LLM_BASE_URL' } } });
    for (const [tab, run] of [['ai', 'run-ai'], ['research', 'run-research'], ['agent', 'run-agent']] as const) {
      await page.click(`nav button[data-tab="${tab}"]`);
      const notice = page.locator(`#${tab}-no-model`);
      await notice.waitFor({ state: 'visible' });
      expect(await notice.textContent()).toMatch(/No language model is configured.*LLM_BASE_URL/);
      expect(await page.locator(`#${run}`).isDisabled()).toBe(true);
    }
    // With a model, nothing is said and the tabs run.
    const ready = await open({ sidebarState: baseState });
    await ready.click('nav button[data-tab="agent"]');
    expect(await ready.locator('#agent-no-model').isHidden()).toBe(true);
    expect(await ready.locator('#run-agent').isDisabled()).toBe(false);
  });

  it('opens on Settings when not configured, and refuses empty fields without calling the add-on', async () => {
    const page = await open({ sidebarState: { ...baseState, configured: false } });
    await page.waitForSelector('#settings.active');
    await page.click('#save-settings');
    expect(await page.locator('#error').textContent()).toMatch(/marked in red/);
    expect(await page.locator('#apiKey.invalid').count()).toBe(1);
    expect((await calls(page)).map(([name]) => name)).toEqual(['sidebarState']);
    await page.screenshot({ path: `${SHOTS}settings-invalid.png` });
  });

  it('validates the AI column form, then starts the run and shows it in the Jobs panel: progress bar, credits, Cancel', async () => {
    const cancelled = [{ ...jobs[0], cancelling: true, text: 'Cancelling: 312 of 800 looked up, 640 credits so far; 300 filled, 0 skipped, 12 failed, 600 credits written. Results are written as they finish.' }, jobs[1]];
    const page = await open({ sidebarState: baseState, sidebarStart: jobs, sidebarJobs: jobs, sidebarCancelRun: cancelled }, { clock: true });
    await page.click('nav button[data-tab=ai]');
    await page.click('#run-ai');
    expect(await page.locator('#instruction.invalid').count()).toBe(1);
    await page.fill('#instruction', 'industry in two words');
    await page.fill('#ai-output', 'Industry');
    await page.click('#run-ai');
    await page.waitForSelector('#jobs.active .job');
    const [, args] = (await calls(page)).find(([name]) => name === 'sidebarStart')!;
    expect(args).toEqual(['aiColumn', { instruction: 'industry in two words', output: 'Industry', context: ['Nome', 'Empresa', 'Site'] }, false]);
    expect(await page.locator('.job .title').allTextContents()).toEqual(['Enrich: Leads, rows 2–801', 'CNPJ fill: Clientes, rows 2–61']);
    expect(await page.locator('.job .credits').allTextContents()).toEqual(['39% · 640 credits', '100% · 58 credits']);
    expect(await page.locator('.job .bar span').first().getAttribute('style')).toBe('width: 39%;');
    expect(await page.locator('.job .cancel').count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}jobs.png` });
    // The panel polls while a run works (every 5 s): each poll writes what the server finished.
    await page.clock.fastForward(5_000);
    await page.waitForFunction(() => (globalThis as unknown as { calls: Array<[string]> }).calls.some(([name]) => name === 'sidebarJobs'), undefined, { timeout: 30_000 });
    await page.click('.job .cancel');
    await page.waitForFunction(() => (globalThis as unknown as { calls: Array<[string]> }).calls.some(([name]) => name === 'sidebarCancelRun'));
    expect((await calls(page)).find(([name]) => name === 'sidebarCancelRun')![1]).toEqual(['j2']);
    await expect.poll(() => page.locator('.job .text').first().textContent()).toMatch(/^Cancelling/);
    expect(await page.locator('.job .cancel').count()).toBe(0);
  });

  it('shows the columns detected for each input, editable, and sends what the analyst chose; Try on 5 rows runs five', async () => {
    const page = await open({ sidebarState: baseState, sidebarStart: jobs });
    await page.waitForSelector('#enrich-columns select');
    const shown = await page.$$eval('#enrich-columns label', (labels) => labels.map((l) => [l.firstChild!.textContent, (l.querySelector('select') as unknown as { value: string }).value]));
    expect(shown).toEqual([
      ['Email', ''],
      ['LinkedIn', ''],
      ['Name', 'Nome'],
      ['First name', ''],
      ['Last name', ''],
      ['Company', 'Empresa'],
      ['Domain', 'Site'],
      ['Phone', ''],
    ]);
    await page.selectOption('#enrich-columns select[data-field=companyName]', '');
    await page.selectOption('#enrich-columns select[data-field=companyDomain]', 'Empresa');
    // Providers are chosen from the catalog by name, with what a call costs.
    expect(await page.locator('#providers label').allTextContents()).toEqual(['Hunter (1 credit a call)', 'Apollo (2 credits a call)', 'People Data Labs (3 credits a call)']);
    await page.check('#providers input[value=apollo]');
    await page.check('#providers input[value=hunter]');
    await page.screenshot({ path: `${SHOTS}enrich-columns.png`, fullPage: true });
    await page.click('#try-enrich');
    await page.waitForSelector('#jobs.active .job');
    const [, args] = (await calls(page)).find(([name]) => name === 'sidebarStart')!;
    expect(args).toEqual([
      'enrich',
      { fields: ['email', 'title', 'linkedinUrl'], columns: { ...NO_COLUMNS, fullName: 'Nome', companyDomain: 'Empresa' }, providerOrder: ['hunter', 'apollo'], overwrite: false },
      true,
    ]);

    const cnpj = await open({ sidebarState: { ...baseState, headers: ['CNPJ', 'CNPJ do cliente'], detected: { cnpj: 'CNPJ' } }, sidebarStart: jobs });
    await cnpj.click('nav button[data-tab=cnpj]');
    expect(await cnpj.locator('#cnpj-columns select').inputValue()).toBe('CNPJ');
    await cnpj.selectOption('#cnpj-columns select', 'CNPJ do cliente');
    await cnpj.click('#run-cnpj');
    await cnpj.waitForSelector('#jobs.active .job');
    expect((await calls(cnpj)).find(([name]) => name === 'sidebarStart')![1]).toEqual(['cnpj', { columns: { cnpj: 'CNPJ do cliente' } }, false]);
  });

  it('Settings: how long a paid enrichment is reused, a whole number of days or empty for the server\'s default', async () => {
    const page = await open({ sidebarState: baseState, sidebarSetMaxAge: { ...baseState, maxAgeDays: 7 } });
    await page.click('nav button[data-tab=settings]');
    expect(await page.locator('#maxAgeDays').inputValue()).toBe('');
    await page.fill('#maxAgeDays', '1.5');
    await page.click('#save-max-age');
    expect(await page.locator('#error').textContent()).toBe("The reuse window must be a whole number of days, 0 or more (or empty for the server's default).");
    await page.fill('#maxAgeDays', '7');
    await page.click('#save-max-age');
    await page.waitForFunction(() => (globalThis as unknown as { calls: Array<[string]> }).calls.some(([name]) => name === 'sidebarSetMaxAge'));
    expect((await calls(page)).find(([name]) => name === 'sidebarSetMaxAge')![1]).toEqual([7]);
    await page.click('nav button[data-tab=enrich]');
    await expect.poll(() => page.locator('#enrich-estimate').textContent()).toMatch(/a row enriched within 7 day\(s\) costs nothing\.$/);
  });

  it('searches into a new tab once it has a filter (being active is a default, not one)', async () => {
    const page = await open({ sidebarState: baseState, sidebarSearch: { message: '12 found, written to the tab "Companies: padaria".', exportable: false } });
    await page.click('nav button[data-tab=search]');
    await page.click('#run-search');
    expect(await page.locator('#error').textContent()).toBe('Give at least one filter.');
    await page.fill('#search-industry', 'padaria');
    await page.click('#run-search');
    await page.waitForSelector('#progress:not([hidden])');
    expect(await page.locator('#progress-text').textContent()).toMatch(/12 found/);
    const [, args] = (await calls(page)).find(([name]) => name === 'sidebarSearch')!;
    expect(args).toEqual(['companies', { industry: 'padaria', registrationStatuses: ['ATIVA'] }, 100]);
  });

  it('creates a campaign from a template without an offering, and asks for one without a template', async () => {
    const page = await open({ sidebarState: baseState, sidebarCreateCampaign: 'Campaign "Q4" created with 12 prospects: review them in the Prospects tab.' });
    await page.click('nav button[data-tab=campaign]');
    await page.fill('#campaign-name', 'Q4');
    await page.click('#run-campaign');
    expect(await page.locator('#offering.invalid').count()).toBe(1);
    await page.selectOption('#template', 't-1');
    await page.click('#run-campaign');
    await page.waitForSelector('#progress:not([hidden])');
    const [, args] = (await calls(page)).find(([name]) => name === 'sidebarCreateCampaign')!;
    expect(args).toEqual([{ name: 'Q4', templateId: 't-1' }]);
    await page.screenshot({ path: `${SHOTS}campaign.png` });
  });

  it('shows a failure in plain words', async () => {
    const page = await open({ sidebarState: baseState, sidebarStart: { error: 'Not enough credits: the balance is 0 credits' } });
    await page.click('#run-enrich');
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.locator('#error').textContent()).toBe('Not enough credits: the balance is 0 credits');
    await page.screenshot({ path: `${SHOTS}error.png` });
  });

  it('chats with the agent: each tool call with its cost, the reply, and the conversation kept for the follow-up', async () => {
    const turn = {
      conversationId: 'c-1',
      reply: 'Two of them are active.\nThe third is closed.',
      toolCalls: [
        { tool: 'get_credits', creditsCharged: 0, isError: false },
        { tool: 'lookup_cnpj_batch', creditsCharged: 3, isError: false },
        { tool: 'enrich_company', creditsCharged: 0, isError: true },
      ],
      creditsCharged: 3,
      failedStep: null,
      note: 'To fit what the agent takes, only the first 200 of 250 rows were sent.',
    };
    const page = await open({ sidebarState: { ...baseState, selectedRows: 250 }, sidebarAgentChat: turn });
    await page.click('nav button[data-tab=agent]');
    expect(await page.locator('#agent-message').getAttribute('maxlength')).toBe(String(agentLimits().message));
    expect(await page.locator('label:has(#agent-selection)').textContent()).toMatch(/: 200 of 250 selected row\(s\)$/);
    await page.click('#run-agent');
    expect(await page.locator('#agent-message.invalid').count()).toBe(1);
    await page.fill('#agent-message', 'Which are active?');
    await page.check('#agent-selection');
    await page.click('#run-agent');
    await page.waitForSelector('#agent-log .reply');
    expect(await page.locator('#agent-log li').allTextContents()).toEqual(['get_credits: free', 'lookup_cnpj_batch: 3 credits', 'enrich_company: failed, free']);
    expect(await page.locator('#agent-log li.failed').count()).toBe(1);
    expect(await page.locator('#agent-log .reply').textContent()).toBe(turn.reply);
    expect(await page.locator('#agent-log').textContent()).toContain('only the first 200 of 250 rows');
    expect(await page.locator('#agent-log').textContent()).toContain('This message: 3 credits.');
    expect(await page.locator('#agent-message').inputValue()).toBe('');
    await page.screenshot({ path: `${SHOTS}agent.png` });

    await page.uncheck('#agent-selection');
    await page.fill('#agent-message', 'And the closed one?');
    await page.click('#run-agent');
    await page.waitForFunction(() => (globalThis as unknown as { calls: Array<[string]> }).calls.filter(([name]) => name === 'sidebarAgentChat').length === 2);
    await page.locator('#agent-log .reply').nth(1).waitFor();
    const chats = (await calls(page)).filter(([name]) => name === 'sidebarAgentChat').map(([, args]) => args);
    expect(chats).toEqual([
      ['Which are active?', null, true],
      ['And the closed one?', 'c-1', false],
    ]);

    // A new conversation forgets the id and clears the log.
    await page.click('#agent-new');
    expect(await page.locator('#agent-log .reply').count()).toBe(0);
    await page.fill('#agent-message', 'Start over');
    await page.click('#run-agent');
    await page.waitForSelector('#agent-log .reply');
    const last = (await calls(page)).filter(([name]) => name === 'sidebarAgentChat').at(-1)!;
    expect(last[1]).toEqual(['Start over', null, false]);
  });

  it("shows the agent's failure in plain words, and a step that failed midway under its reply", async () => {
    const page = await open({ sidebarState: baseState, sidebarAgentChat: { error: 'No active plan: the free messages of the day are spent' } });
    await page.click('nav button[data-tab=agent]');
    await page.fill('#agent-message', 'Hi');
    await page.click('#run-agent');
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.locator('#error').textContent()).toBe('No active plan: the free messages of the day are spent');
    expect(await page.locator('#agent-log .reply').count()).toBe(0);

    const midway = await open({
      sidebarState: baseState,
      sidebarAgentChat: { conversationId: 'c-2', reply: 'Let me look.', toolCalls: [], creditsCharged: 0, failedStep: 'The model is unavailable.', note: null },
    });
    await midway.click('nav button[data-tab=agent]');
    await midway.fill('#agent-message', 'Hi');
    await midway.click('#run-agent');
    await midway.waitForSelector('#agent-log .reply');
    expect(await midway.locator('#agent-log .error').textContent()).toBe('The model is unavailable.');
  });

  it('Formulas tab: safe mode on by default, switched with one click; Refresh selected is the action that spends', async () => {
    const page = await open({
      sidebarState: baseState,
      sidebarSetSafeMode: { ...baseState, safeMode: false },
      sidebarRefreshSelected: '3 formula(s) refreshed; 2 bought, the rest already paid for.',
    });
    await page.click('nav button[data-tab="formulas"]');
    expect(await page.isChecked('#safe-mode')).toBe(true);
    expect(await page.textContent('#safe-mode-note')).toMatch(/Refresh selected, the only thing that spends/);
    await page.screenshot({ path: `${SHOTS}formulas.png` });
    await page.click('#safe-mode');
    await page.waitForFunction(() => (globalThis as unknown as { calls: Array<[string]> }).calls.some(([name]) => name === 'sidebarSetSafeMode'));
    await expect.poll(() => page.textContent('#safe-mode-note')).toMatch(/^Formulas buy/);
    expect(await page.isChecked('#safe-mode')).toBe(false);
    await page.click('#refresh-formulas');
    await expect.poll(() => page.textContent('#refresh-result')).toBe('3 formula(s) refreshed; 2 bought, the rest already paid for.');
    await expect.poll(async () => (await calls(page)).length).toBe(4);
    expect(await calls(page)).toEqual([
      ['sidebarState', []],
      ['sidebarSetSafeMode', [false]],
      ['sidebarRefreshSelected', []],
      ['sidebarState', []],
    ]);
  });

  it('every tab, as the README shows it', async () => {
    const page = await open({ sidebarState: { ...baseState, jobs }, sidebarJobs: jobs });
    for (const tab of await page.$$eval('nav button', (buttons) => buttons.map((b) => b.getAttribute('data-tab')!))) {
      await page.click(`nav button[data-tab="${tab}"]`);
      await page.screenshot({ path: `${SHOTS}tab-${tab}.png`, fullPage: true });
    }
  });

  it('Settings asks only for the key when the build fixed the server, and for both when it did not', async () => {
    const fixed = await open({ sidebarState: { ...baseState, configured: false }, sidebarSaveSettings: 'Connected: 480 credits, active plan.' });
    expect(await fixed.isVisible('#serverUrl')).toBe(false);
    await fixed.fill('#apiKey', `service_live_${'a'.repeat(40)}`);
    await fixed.click('#save-settings');
    await expect.poll(async () => (await calls(fixed)).map(([name]) => name)).toContain('sidebarSaveSettings');
    const open2 = await open({ sidebarState: { ...baseState, configured: false, serverFixed: false } });
    expect(await open2.isVisible('#serverUrl')).toBe(true);
    await open2.fill('#apiKey', `service_live_${'a'.repeat(40)}`);
    await open2.click('#save-settings');
    expect((await calls(open2)).map(([name]) => name)).toEqual(['sidebarState']);
  });
});
