/**
 * The dashboard in headless Chromium (Debian's chromium through playwright-core) against the real
 * app on loopback, signed in by one-time links: every page renders with no serious or critical
 * axe-core violation and nothing refused by the CSP; keys are created, copied, used, and revoked;
 * the ledger pages and exports; a prospect is edited; the agent streams a fake model's tool calls;
 * watches are resumed and deleted; an export job's file is downloaded from the Jobs page;
 * without a model, the Agent page says so before anything is typed;
 * 360 px wide and the keyboard alone are enough; sign-out ends the session. Screenshots of each
 * page go to test-results/dashboard (not in git).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import Papa from 'papaparse';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { freePort, startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually, EVENTUALLY_TIMEOUT_MS } from '../../helpers/eventually.ts';
import { scripted, startFakeLlm, type FakeLlm } from '../../helpers/fake-llm.ts';

// Functions given to page.evaluate run in the browser, where these exist (Node's types lack them).
declare const document: { activeElement: { id: string; tagName: string; textContent: string | null } | null; documentElement: { scrollWidth: number; clientWidth: number } };
declare const navigator: { clipboard: { readText(): Promise<string> } };
declare function getComputedStyle(element: unknown): { outlineStyle: string };

/** Null without Chromium: the global setup has said so (or failed the run under CI=true), and these skip. */
const chromiumPath = inject('chromiumPath');
const SHOTS = new URL('../../../test-results/dashboard/', import.meta.url).pathname;
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let app: TestApp;
let llm: FakeLlm;
let browser: Browser;
let base: string;
let axeSource: string;
/** The workspace most tests sign in to: a trial with ledger history and a campaign. */
let owner: { workspaceId: string; apiKey: string };
let campaignId: string;
const acme = makeCnpj('11222333');

const PAGES = [
  { name: 'overview', path: '/dashboard', heading: 'Overview', nav: 'Overview' },
  { name: 'keys', path: '/dashboard/keys', heading: 'API keys', nav: 'API keys' },
  { name: 'credits', path: '/dashboard/credits', heading: 'Credits', nav: 'Credits' },
  { name: 'campaigns', path: '/dashboard/campaigns', heading: 'Campaigns', nav: 'Campaigns' },
  { name: 'campaign', path: '', heading: 'Clínicas Recife', nav: 'Campaigns' },
  { name: 'agent', path: '/dashboard/agent', heading: 'Agent', nav: 'Agent' },
  { name: 'watches', path: '/dashboard/watches', heading: 'Watches', nav: 'Watches' },
  { name: 'jobs', path: '/dashboard/jobs', heading: 'Jobs', nav: 'Jobs' },
] as const;
const pathOf = (page: (typeof PAGES)[number]) => page.path || `/dashboard/campaigns/${campaignId}`;

/** Operations the seeded ledger cycles through, so the filter has something to choose. */
const OPERATIONS = ['searchPeople', 'lookupCnpjBatch', 'enrich'] as const;
const DEBITS = 60;

interface Signed {
  page: Page;
  context: BrowserContext;
  /** Messages the browser printed as errors: CSP refusals, failed scripts, uncaught exceptions. */
  problems: string[];
}

/** A new browser context signed in to `workspaceId` by a one-time link, on the Overview (of `server`, this file's app by default). */
async function signIn(workspaceId = owner.workspaceId, viewport = { width: 1200, height: 900 }, server = { app, base }): Promise<Signed> {
  const { url } = await server.app.services.signInLinks.issue(workspaceId);
  const context = await browser.newContext({ viewport, baseURL: server.base });
  context.setDefaultTimeout(EVENTUALLY_TIMEOUT_MS);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // A 4xx the page asked for on purpose (a 409 revoke, a 402) is logged by Chromium too: not a problem.
    if (m.type() === 'error' && !/status of (401|402|409)/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  // Opening the link signs nothing in: its page's "Sign in" posts it back, without script.
  await page.goto(`${server.base}${new URL(url).pathname}${new URL(url).search}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  return { page, context, problems };
}

async function open(page: Page, path: string, heading: string): Promise<void> {
  await page.goto(base + path);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  // Data has arrived: no "Loading…" line is left.
  await eventually(async () => expect(await page.locator('.loading').count()).toBe(0), { message: `${path} to load its data` });
}

/** axe-core's serious and critical violations on the page as it is now, one line each. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated over CDP, which the page's CSP does not govern.
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run());
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const horizontalOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

const v1 = (key: string, path: string) => fetch(`${base}/v1/api${path}`, { headers: { Authorization: `Bearer ${key}` } });

describe.skipIf(!chromiumPath)('the dashboard in a browser', () => {
  beforeAll(async () => {
    axeSource = await readFile(AXE, 'utf8');
    await mkdir(SHOTS, { recursive: true });
    // Campaign messages fall back to the built-in writer when the model's answer is not theirs.
    llm = await startFakeLlm(() => 'unused');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await startTestApp(
      { PUBLIC_URL: base, LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: llm.key, LLM_MODEL: 'fake-model', LLM_TIMEOUT_MS: '5000', RATE_LIMIT_PER_MINUTE: '100000' },
      { port },
    );
    await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(acme));
    owner = await app.workspace('trial');
    for (let i = 0; i < DEBITS; i++) {
      const operation = OPERATIONS[i % OPERATIONS.length]!;
      await app.services.credits.debit(owner.workspaceId, 1 + (i % 3), operation, i % 7 === 0 ? `Row ${i}, "quoted", with commas` : `${operation} #${i}`);
    }
    const rows = ['Ana Souza', 'Bruno Lima', 'Carla Dias'].map((name, i) => ({ rowId: `r${i + 1}`, values: { Nome: name, Empresa: 'Clínica Sorriso', Cargo: 'Diretora' } }));
    const sheet = await app.request('POST', '/v1/api/sheets', { key: owner.apiKey, body: { name: 'Leads', rows } });
    const campaign = await app.request('POST', '/v1/api/prospecting/campaigns', {
      key: owner.apiKey,
      body: { name: 'Clínicas Recife', offering: 'Online booking for clinics', sheetId: sheet.body.sheetId, rowIds: rows.map((r) => r.rowId) },
    });
    expect(campaign.status).toBe(201);
    campaignId = campaign.body.campaignId;
    browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await llm?.close();
  });

  it('renders every page, with its navigation link current, no serious accessibility violation and nothing refused by the CSP', async () => {
    const { page, problems } = await signIn();
    const credits = (await app.request('GET', '/v1/api/credits', { key: owner.apiKey })).body;
    for (const p of PAGES) {
      await open(page, pathOf(p), p.heading);
      const nav = page.getByRole('navigation', { name: 'Dashboard' });
      expect(await nav.getByRole('link', { name: p.nav, exact: true }).getAttribute('aria-current')).toBe('page');
      for (const other of PAGES.filter((o) => o.nav !== p.nav)) {
        expect(await nav.getByRole('link', { name: other.nav, exact: true }).getAttribute('aria-current')).toBeNull();
      }
      expect(await page.getByRole('link', { name: 'API reference' }).getAttribute('href')).toBe('/docs');
      expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
      expect(await axeViolations(page), `axe on ${p.name}`).toEqual([]);
      await page.screenshot({ path: `${SHOTS}${p.name}.png`, fullPage: true });
    }
    await open(page, '/dashboard', 'Overview');
    expect(await page.getByLabel('Credit balance').textContent()).toBe(credits.balance.toLocaleString('en-US'));
    expect(await page.getByLabel('Plan').textContent()).toBe('Trial');
    expect(Number(await page.getByLabel('Trial days left').textContent())).toBe(7);
    // The chart is drawn (uPlot's canvas) and its figures are in a table as well.
    await page.locator('.chart-canvas canvas').first().waitFor();
    expect(await page.locator('.chart table tbody tr').count()).toBe(30);
    expect(problems).toEqual([]);
  });

  it('creates a key, copies it once, uses it on the API, and revokes it, refused at once', async () => {
    const { page, context, problems } = await signIn();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await open(page, '/dashboard/keys', 'API keys');
    await page.getByLabel('Key name').fill('CRM sync');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.getByLabel('New API key');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^service_live_/);
    expect(await axeViolations(page), 'axe with the new secret shown').toEqual([]);
    await page.screenshot({ path: `${SHOTS}keys-created.png`, fullPage: true });

    await page.getByRole('button', { name: 'Copy' }).click();
    await eventually(async () => expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret), { message: 'the secret in the clipboard' });
    expect((await v1(secret, '/credits')).status).toBe(200);

    // The list shows the key by name and first characters; after a reload, never the secret.
    const row = page.getByRole('row', { name: /CRM sync/ });
    expect(await row.textContent()).toContain(secret.slice(0, 16));
    expect(await row.textContent()).toContain('Active');
    await open(page, '/dashboard/keys', 'API keys');
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('row', { name: /CRM sync/ }).getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('CRM sync');
    expect(await axeViolations(page), 'axe with the dialog open').toEqual([]);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await eventually(async () => expect(await page.getByRole('row', { name: /CRM sync/ }).textContent()).toMatch(/Revoked/), { message: 'the row to say revoked' });
    expect(await page.getByRole('row', { name: /CRM sync/ }).getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    expect((await v1(secret, '/credits')).status).toBe(401);
    expect(problems).toEqual([]);
  });

  it('tells the second of two tabs revoking one key that it was already revoked, not that it failed', async () => {
    const { keyId } = await app.services.keys.create(owner.workspaceId, undefined, 'Two tabs');
    const first = await signIn();
    const second = await signIn();
    for (const tab of [first, second]) await open(tab.page, '/dashboard/keys', 'API keys');
    for (const tab of [first, second]) {
      await tab.page.getByRole('row', { name: /Two tabs/ }).getByRole('button', { name: 'Revoke' }).click();
      await tab.page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
      await eventually(async () => expect(await tab.page.getByRole('row', { name: /Two tabs/ }).textContent()).toMatch(/Revoked/), { message: 'the row to say revoked' });
    }
    expect(await second.page.locator('.notice', { hasText: 'was already revoked' }).count()).toBe(1);
    expect(await second.page.getByRole('alert').count()).toBe(0);
    expect((await app.services.keys.list(owner.workspaceId)).find((k) => k.keyId === keyId)?.revokedAt).not.toBeNull();
  });

  it('creates a key with the keyboard alone, focus visible at each step', async () => {
    const { page } = await signIn();
    await open(page, '/dashboard/keys', 'API keys');
    const focused = () =>
      page.evaluate(() => ({
        id: document.activeElement?.id ?? '',
        tag: document.activeElement?.tagName ?? '',
        text: document.activeElement?.textContent ?? '',
        outline: getComputedStyle(document.activeElement!).outlineStyle,
      }));
    // The skip link comes first and takes focus to the page's content.
    await page.keyboard.press('Tab');
    expect((await focused()).text).toBe('Skip to content');
    expect((await focused()).outline).not.toBe('none');
    await page.keyboard.press('Enter');
    for (let i = 0; (await focused()).id !== 'key-name'; i++) {
      if (i > 10) throw new Error(`Tab never reached the key name field (at ${JSON.stringify(await focused())})`);
      await page.keyboard.press('Tab');
    }
    expect((await focused()).outline).not.toBe('none');
    await page.keyboard.type('Keyboard key');
    await page.keyboard.press('Enter');
    // The new secret takes focus; Tab reaches Copy.
    await eventually(async () => expect((await focused()).id).toBe('new-key'), { message: 'the new secret to take focus' });
    await page.keyboard.press('Tab');
    expect((await focused()).text).toBe('Copy');
    expect((await focused()).outline).not.toBe('none');
    // The list is drawn again from the server after a creation: wait for it to settle with the one new row.
    await eventually(async () => expect(await page.getByRole('row', { name: /Keyboard key/ }).count()).toBe(1), { message: 'the new key in the list' });

    // A navigation link followed with Enter draws the page in place and puts focus on its heading.
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Credits' }).focus();
    // A mark on the window survives only if the page is not loaded again.
    await page.evaluate(() => ((globalThis as unknown as { stayed: boolean }).stayed = true));
    await page.keyboard.press('Enter');
    // The link itself reads "Credits" too: wait for the heading.
    await eventually(async () => expect(await focused()).toMatchObject({ tag: 'H1', text: 'Credits' }), { message: "focus on the Credits page's heading" });
    expect(new URL(page.url()).pathname).toBe('/dashboard/credits');
    expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).toBe(true);
  });

  it('pages the ledger newest first, filters it by operation, and exports every page of the filter as CSV', async () => {
    const { page } = await signIn();
    await open(page, '/dashboard/credits', 'Credits');
    const ledger = page.getByRole('region', { name: /^Ledger, page/ });
    const firstPage = await ledger.locator('tbody tr').allTextContents();
    expect(firstPage.length).toBe(25);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByText('newest first; page 2.').waitFor();
    const secondPage = await ledger.locator('tbody tr').allTextContents();
    expect(secondPage.length).toBe(25);
    expect(secondPage.some((row) => firstPage.includes(row))).toBe(false);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByText('newest first; page 1.').waitFor();
    expect(await ledger.locator('tbody tr').allTextContents()).toEqual(firstPage);

    // Operations by the names a person reads (the registry's summaries), never their ids, and
    // the filter a list of them: every operation that debits credits, then grants and expiries.
    expect(new Set(await ledger.locator('tbody tr td:nth-child(2)').allTextContents())).toEqual(
      new Set(['Search people', 'Look up companies by CNPJ', 'Enrich a record']),
    );
    const filter = page.getByRole('combobox', { name: 'Operation' });
    const choices = await filter.locator('option').allTextContents();
    expect(choices[0]).toBe('All operations');
    expect(choices).toEqual(expect.arrayContaining(['Enrich a record', 'Export companies', 'Look up companies by CNPJ', 'Search companies', 'Credits granted', 'Free trial credits']));
    expect(choices.some((choice) => /^[a-z]+[A-Z]/.test(choice))).toBe(false);
    await filter.selectOption({ label: 'Enrich a record' });
    await page.getByText(/Movements of “Enrich a record”/).waitFor();
    const operations = await page.getByRole('region', { name: /^Ledger, page/ }).locator('tbody tr td:nth-child(2)').allTextContents();
    expect(new Set(operations)).toEqual(new Set(['Enrich a record']));

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const file = await (await download).path();
    const text = await readFile(file, 'utf8');
    // A byte-order mark first, so that Excel reads the file as UTF-8.
    expect(text.startsWith('\uFEFFat,operation,detail,amount,balanceAfter,movementId\r\n')).toBe(true);
    const csv = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
    expect(csv.errors).toEqual([]);
    const expected = (await app.request('GET', `/v1/api/credits/ledger?operation=enrich&limit=200`, { key: owner.apiKey })).body.movements;
    expect(csv.data.length).toBe(DEBITS / OPERATIONS.length);
    expect(csv.data.map((r) => r.movementId)).toEqual(expected.map((m: { movementId: string }) => m.movementId));
    expect(csv.data.map((r) => Number(r.amount))).toEqual(expected.map((m: { amount: number }) => m.amount));
    // A detail holding quotes and commas survives the round trip.
    const quoted = expected.find((m: { detail: string }) => m.detail.includes('"'));
    expect(csv.data.find((r) => r.movementId === quoted.movementId)?.detail).toBe(quoted.detail);
  });

  it('names a job by its operation as a person reads it, never by its id', async () => {
    const { workspaceId, apiKey } = await app.workspace('trial');
    const started = await app.request('POST', '/v1/api/jobs', { key: apiKey, body: { operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [acme] } }] } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const { page } = await signIn(workspaceId);
    await open(page, '/dashboard/jobs', 'Jobs');
    const jobs = page.getByRole('region', { name: 'Jobs' });
    await jobs.getByRole('rowheader', { name: 'Look up companies by CNPJ' }).waitFor();
    expect(await jobs.getByText('lookupCnpjBatch').count()).toBe(0);
  });

  it("edits a prospect's status and message in place, saved through the API, and says why a save failed", async () => {
    const { page } = await signIn();
    await open(page, `/dashboard/campaigns/${campaignId}`, 'Clínicas Recife');
    const card = page.getByRole('form', { name: /Ana Souza/ });
    await card.getByLabel('Status').selectOption('replied');
    await card.getByLabel('Email subject').fill('Booking for Clínica Sorriso');
    await card.getByRole('button', { name: 'Save' }).click();
    await card.getByText(/^Saved /).waitFor();
    const prospects = (await app.request('GET', `/v1/api/prospecting/prospects?campaignId=${campaignId}`, { key: owner.apiKey })).body.prospects;
    const ana = prospects.find((p: { context: Record<string, string> }) => p.context.Nome === 'Ana Souza');
    expect(ana).toMatchObject({ status: 'replied', emailSubject: 'Booking for Clínica Sorriso' });
    expect(await page.getByRole('list', { name: 'Prospects by status' }).textContent()).toContain('1 Replied');

    // Without a plan the same save is refused (402 plan_required): the card says so.
    await app.services.workspaces.setPlan(owner.workspaceId, 'none');
    try {
      await card.getByLabel('Email subject').fill('Another subject');
      await card.getByRole('button', { name: 'Save' }).click();
      const alert = card.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/^Not saved: .*plan/i);
    } finally {
      await app.services.workspaces.setPlan(owner.workspaceId, 'trial');
    }
  });

  it("streams the agent's reply with each tool call and its cost, lists the conversation, and continues it", async () => {
    const { page, problems } = await signIn();
    llm.respond = scripted([
      { text: 'Let me look that company up.', calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }] },
      { text: 'ACME is active in the registry.' },
      { text: 'You asked about ACME before.' },
    ]);
    await open(page, '/dashboard/agent', 'Agent');
    await page.getByLabel('Message', { exact: true }).fill(`Is ${acme} active?`);
    await page.keyboard.press('Enter');
    const tool = page.locator('.tool', { hasText: 'lookup_cnpj_batch' });
    await eventually(async () => expect(await tool.textContent()).toMatch(/cnpjs: \[".*"\].*1 credit$/), { message: 'the tool call with its cost' });
    await page.getByText('ACME is active in the registry.').waitFor();
    await page.getByText('1 tool call, 1 credit in all.').waitFor();
    expect(await page.getByText('No language model is configured').count(), 'no notice with a model').toBe(0);
    await eventually(async () => expect(await page.locator('.conversations li').count()).toBe(1), { message: 'the conversation listed' });
    expect(await axeViolations(page), 'axe after a chat').toEqual([]);
    await page.screenshot({ path: `${SHOTS}agent-chat.png`, fullPage: true });

    await page.getByLabel('Message', { exact: true }).fill('What did I ask?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('You asked about ACME before.').waitFor();
    // Continued, not a new conversation: the model saw the first question again.
    const last = llm.requests[llm.requests.length - 1]!.body as { messages: Array<{ role: string; content: string }> };
    expect(last.messages.some((m) => m.role === 'user' && m.content.includes(`Is ${acme} active?`))).toBe(true);
    expect(await page.locator('.conversations li').count()).toBe(1);

    // Reopened from the list, its messages are read back.
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.locator('.conversations li button').first().click();
    await page.getByText('You asked about ACME before.').waitFor();
    expect(problems).toEqual([]);
  });

  it('lists the watches with what they follow and their last delivery; resumes a paused one, deletes one once confirmed', async () => {
    // A public address, never called: no release is imported while this runs.
    const webhook = { url: 'https://93.184.215.14/prospecta', secret: 'a-secret-of-24-characters' };
    const create = (body: Record<string, unknown>) => app.request('POST', '/v1/api/watches', { key: owner.apiKey, body: { ...body, webhook } });
    const customers = await create({ name: 'Customers', cnpjs: [acme] });
    const openings = await create({ name: 'Restaurants opened in SP', filters: { state: 'SP', cnaes: ['5611201'] }, kinds: ['opened'] });
    expect([customers.status, openings.status]).toEqual([201, 201]);
    // What a delivery the balance could not pay leaves behind (the dispatcher's own tests make it happen).
    await app.services.store
      .collection<{ _id: string }>('watches')
      .updateOne({ _id: customers.body.watchId }, { $set: { status: 'paused', pausedReason: 'insufficient_credits', lastDelivery: { release: '2026-10', changes: 120, at: new Date('2026-10-20T10:00:00Z') } } });
    const { page, problems } = await signIn();
    await open(page, '/dashboard/watches', 'Watches');
    const paused = page.getByRole('row', { name: /Customers/ });
    expect(await paused.textContent()).toMatch(/1 CNPJAll.*Paused: not enough credits.*Release 2026-10: 120 changes/);
    const active = page.getByRole('row', { name: /Restaurants opened in SP/ });
    expect(await active.textContent()).toMatch(/state: SP; cnaes: 5611201opened.*Active.*None yet/);
    expect(await active.getByRole('button', { name: 'Resume' }).count()).toBe(0);
    expect(await axeViolations(page), 'axe on the watches').toEqual([]);
    await page.screenshot({ path: `${SHOTS}watches-list.png`, fullPage: true });

    await paused.getByRole('button', { name: 'Resume' }).click();
    await eventually(async () => expect(await page.getByRole('row', { name: /Customers/ }).textContent()).toMatch(/Active/), { message: 'the watch to say active' });
    expect((await app.request('GET', `/v1/api/watches/${customers.body.watchId}`, { key: owner.apiKey })).body.status).toBe('active');

    await active.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('Restaurants opened in SP');
    expect(await axeViolations(page), 'axe with the dialog open').toEqual([]);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.locator('.notice').getByText('Watch “Restaurants opened in SP” deleted.').waitFor();
    expect(await page.getByRole('row', { name: /Restaurants opened in SP/ }).count()).toBe(0);
    expect((await app.request('GET', `/v1/api/watches/${openings.body.watchId}`, { key: owner.apiKey })).status).toBe(404);
    expect(problems).toEqual([]);
  });

  it('says on the Agent page, before anything is typed, that no model is configured, naming LLM_BASE_URL', async () => {
    const port = await freePort();
    const at = `http://127.0.0.1:${port}`;
    const bare = await startTestApp({ PUBLIC_URL: at, RATE_LIMIT_PER_MINUTE: '100000' }, { port });
    try {
      const { workspaceId } = await bare.workspace('trial');
      const { page, context, problems } = await signIn(workspaceId, undefined, { app: bare, base: at });
      await page.goto(`${at}/dashboard/agent`);
      await page.getByRole('heading', { level: 1, name: 'Agent' }).waitFor();
      const notice = page.getByRole('status').filter({ hasText: 'No language model is configured' });
      await notice.waitFor();
      expect(await notice.textContent()).toContain('LLM_BASE_URL');
      expect(await page.getByLabel('Message', { exact: true }).isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
      expect(await axeViolations(page), 'axe with the notice').toEqual([]);
      await page.screenshot({ path: `${SHOTS}agent-no-model.png`, fullPage: true });
      expect(problems).toEqual([]);
      await context.close();
    } finally {
      await bare.close();
    }
  });

  it("offers an export job's own file on the Jobs page, downloaded with the session", async () => {
    const started = await app.request('POST', '/v1/api/companies/export', { key: owner.apiKey, body: { format: 'csv' } });
    expect(started.status).toBe(202);
    await eventually(async () => expect((await app.request('GET', `/v1/api/jobs/${started.body.jobId}`, { key: owner.apiKey })).body.status).toBe('done'), { message: 'the export to end' });
    const { page, problems } = await signIn();
    await open(page, '/dashboard/jobs', 'Jobs');
    const link = page.getByRole('row', { name: /Export companies/ }).getByRole('link', { name: 'Download the file' });
    expect(await link.getAttribute('href')).toBe(`/dashboard/api/jobs/${started.body.jobId}/export`);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const rows = (await readFile(await download.path(), 'utf8')).trim().split('\r\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain(acme);
    await page.screenshot({ path: `${SHOTS}jobs-export.png`, fullPage: true });
    expect(problems).toEqual([]);
  });

  it('tells a workspace without a plan what needs one, on every page', async () => {
    const { workspaceId } = await app.workspace('none');
    const { page } = await signIn(workspaceId);
    expect(await page.getByLabel('Plan').textContent()).toBe('No plan');
    await page.getByText('No active plan.').waitFor();
    await open(page, '/dashboard/campaigns', 'Campaigns');
    expect(await page.locator('.notice.plan').textContent()).toMatch(/needs a plan/i);
    for (const p of [PAGES[1], PAGES[2], PAGES[5]]) await open(page, p.path, p.heading);
    await page.screenshot({ path: `${SHOTS}no-plan-campaigns.png`, fullPage: true });
  });

  it('fits 360 px: no page scrolls sideways', async () => {
    const { page } = await signIn(owner.workspaceId, { width: 360, height: 780 });
    for (const p of PAGES) {
      await open(page, pathOf(p), p.heading);
      expect(await horizontalOverflow(page), `${p.name} at 360 px`).toBe(0);
      await page.screenshot({ path: `${SHOTS}${p.name}-360.png`, fullPage: true });
    }
  });

  // A plain HTML form: with Referrer-Policy: no-referrer its POST says `Origin: null`, which the
  // server must judge by Sec-Fetch-Site (same-origin) rather than refuse.
  it('signs out: the session ends and pages send the browser to the sign-in page', async () => {
    const { page, context } = await signIn();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname !== '/dashboard');
    // A plain form POST from the page: the server must take it as the dashboard's own.
    expect(new URL(page.url()).pathname, await page.locator('body').innerText()).toBe('/dashboard/login');
    await page.goto(`${base}/dashboard/keys`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    const res = await context.request.get(`${base}/dashboard/session`);
    expect(res.status()).toBe(401);
  });

  it('serves the API reference at /docs from the package under the CSP; "Try it out" sends a pasted key, stored nowhere', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (err) => problems.push(err.message));
    const res = await page.goto(`${base}/docs`);
    expect(res!.headers()['content-security-policy']).toMatch(/script-src 'self';.*style-src 'self';/);
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('script:not([src])').count()).toBe(0);
    const scripts = await page.locator('script[src]').evaluateAll((els) => els.map((el) => (el as unknown as { src: string }).src));
    expect(scripts.every((src) => src.startsWith(`${base}/`))).toBe(true);
    // The operations as listed (Swagger UI's colours darkened, no deep links inside its buttons);
    // its Authorize dialog and "Try it out" forms still have markup axe faults, Swagger UI's own.
    await page.locator('.servers select[aria-label="Server"]').waitFor();
    expect(await axeViolations(page), 'axe on /docs').toEqual([]);

    await page.getByRole('button', { name: /Authorize/ }).first().click();
    const bearer = page.locator('.modal-ux form', { hasText: 'bearerAuth' });
    await bearer.locator('input').fill(owner.apiKey);
    await bearer.locator('button.authorize').click();
    await page.locator('.modal-ux button.btn-done').first().click();
    const credits = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: /^\/api\/credits$/ }) }).first();
    await credits.locator('.opblock-summary').click();
    await credits.getByRole('button', { name: 'Try it out' }).click();
    await credits.getByRole('button', { name: 'Execute' }).click();
    await credits.locator('.live-responses-table tbody .response-col_status').first().waitFor();
    expect(await credits.locator('.live-responses-table tbody .response-col_status').first().textContent()).toBe('200');
    expect(await page.evaluate(() => JSON.stringify({ ...(globalThis as unknown as { localStorage: Record<string, string> }).localStorage }))).not.toContain(owner.apiKey);
    await page.screenshot({ path: `${SHOTS}docs.png` });
    expect(problems).toEqual([]);
    await context.close();
  });
});
