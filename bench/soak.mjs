// npm run soak — the built server under a steady mix of every operation, killed with SIGKILL and
// restarted on the same DATA_DIR twice midway, then checked. Loopback only: the tests' fake
// providers (Hunter, Apollo, People Data Labs), a fake OpenAI-compatible model and a fake search
// engine, as bench:cascade, bench:ai and bench:agent start them; the demo registry and people.
//
// SOAK_SECONDS (default 300, at most 540 so that with set-up and checks the run stays under
// 10 minutes; a watchdog ends it at 10 minutes whatever happens) of load from SOAK_WORKSPACES
// (4) workspaces × SOAK_CLIENTS (2) clients each, about 40 requests/s in all, every client
// owning what it creates. The server is killed at 20 % and 35 % of the load, and once more after
// it, before the checks, so that every acknowledged write (not only those before the midway
// kills) is read back from a store that recovered from a kill. One workspace holds few credits
// and runs dry: its 402s are expected, and prove no charge overdraws.
//
// Checks: no 5xx; no connection error outside a restart gap (a kill, until the server answers
// again plus a grace of 3 s); no 4xx but the expected 402s; every acknowledged write present
// (templates with their last name and offering, deleted ones absent; sheets with every row,
// deleted ones absent; campaigns with every prospect added; prospect statuses; deleted
// prospects absent; conversations with every message); per workspace, the ledger read page by
// page has no gap in `seq`, each movement's balanceAfter follows from the one before, its sum
// equals the balance and its debits the consumption; the debits cover every acknowledged charge
// (in all and per operation), and exceed them by at most what the requests cut by a kill could
// have cost; resident memory flat after warm-up.
//
// Memory: VmRSS of the server process every 2 s. The final process (from the second restart to
// the end of the load, 65 % of the run) is judged: after a warm-up of 60 s, the average of its
// last minute may exceed that of its first minute by at most 20 %. Why these: V8 lets the old
// space grow to about twice what survives a full collection before it collects, so RSS climbs for
// the first 40–60 s of a process and then saws by tens of MB; and the embedded store keeps every
// document in memory, so RSS rightly grows with what the soak writes (ledger movements,
// prospects, conversations: DATA_DIR's growth is printed beside it; heap snapshots of a run
// showed the live heap growing by what was written, and nothing else). At 40 requests/s that is
// a few percent between the two windows; a leak of 20 KB a request (0.8 MB/s) passes 20 %. The
// slope (MiB/min, least squares after warm-up) is printed for a longer look.
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { cli, importTs, launchServer, pct, startInstance } from './lib.mjs';

const LOAD_SECONDS = Math.max(30, Math.min(540, Number(process.env.SOAK_SECONDS ?? 300)));
const WORKSPACES = Math.max(2, Number(process.env.SOAK_WORKSPACES ?? 4));
const CLIENTS = Math.max(1, Number(process.env.SOAK_CLIENTS ?? 2));
const KILLS_AT = [0.2, 0.35];
const WATCHDOG_MS = 600_000;
const SAMPLE_MS = 2000;
const GAP_GRACE_MS = 3000;
const MAX_RSS_GROWTH = 0.2;
const WARMUP_S = 60;
/** A client waits 0 to 2 × THINK_MS between requests: about 40 requests/s in all, on two shared cores. */
const THINK_MS = 100;
const LOW_CREDITS = 3000;
const REQUEST_TIMEOUT_MS = 60_000;

const startedAt = performance.now();
const now = () => (performance.now() - startedAt) / 1000;
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-soak-'));
const dataDir = path.join(work, 'data');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const rand = (n) => Math.floor(Math.random() * n);

// ————— the fakes, as bench:cascade, bench:ai and bench:agent start them —————
const { startFakeApollo, startFakeHunter, startFakePdl, syntheticWorld } = await importTs('test/helpers/fake-providers.ts', work);
const { startFakeLlm, startFakeWeb, turnReply, articlePage } = await importTs('test/helpers/fake-llm.ts', work);

const PROVIDERS = [
  { id: 'hunter', env: 'HUNTER', perSecond: 50, concurrent: 10, latencyMs: 40, start: startFakeHunter },
  { id: 'apollo', env: 'APOLLO', perSecond: 50, concurrent: 10, latencyMs: 30, start: startFakeApollo },
  { id: 'pdl', env: 'PDL', perSecond: 100, concurrent: 20, latencyMs: 20, start: startFakePdl },
];
const world = syntheticWorld(500);
const fakes = {};
for (const p of PROVIDERS) {
  fakes[p.id] = await p.start(world, { perSecond: p.perSecond, perMinute: p.perSecond * 60, maxConcurrent: p.concurrent, slackMs: 20 });
  fakes[p.id].latencyMs = p.latencyMs;
}

/** Every model call the server makes: the agent's turns, research, AI columns and outreach messages. */
let agentCnpj = '';
const model = await startFakeLlm((body) => {
  if (body.tools?.length) {
    const lastUser = body.messages.findLastIndex((m) => m.role === 'user');
    const results = body.messages.slice(lastUser).filter((m) => m.role === 'tool').length;
    if (results === 0) return turnReply(body, { text: 'Let me check your balance first.', calls: [{ name: 'get_credits', arguments: {} }] });
    if (results === 1) return turnReply(body, { calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [agentCnpj] } }] });
    return turnReply(body, { text: 'Your balance is fine, and the company is active in the registry.' });
  }
  const system = body.messages[0]?.content ?? '';
  if (system.includes('research assistant')) return JSON.stringify({ answer: 'A clinic software company based in Recife.', citations: [] });
  if (system.includes('outreach message')) {
    return JSON.stringify({ connectionNote: 'Hi! Glad to connect.', emailSubject: 'Scheduling for clinics', emailBody: 'Hello, we help clinics cut no-shows.' });
  }
  return JSON.stringify({ value: 'Software house' });
});
model.latencyMs = 50;
const web = await startFakeWeb();
web.pages.set('/about', { html: articlePage('About Clinica Boa', ['Clinica Boa runs four dental clinics in Recife.', 'It was founded in 2009 and employs 80 people.']) });
web.pages.set('/news', { html: articlePage('Clinica Boa opens a fifth site', ['The new site in Olinda opens in March.', 'It adds ten dentists to the team.']) });
web.results = [
  { path: '/news', title: 'Clinica Boa opens a fifth site', snippet: 'A new site in Olinda.' },
  { path: '/missing', title: 'Gone', snippet: 'A page that answers 404.' },
];

// ————— figures —————
/** Per operation: requests, outcomes and latencies of the 2xx. */
const ops = new Map();
const opStats = (op) => ops.get(op) ?? ops.set(op, { requests: 0, ok: 0, c4xx: 0, c5xx: 0, conn: 0, ms: [] }).get(op);
/** Errors by kind: `500 internal_error`, `402 insufficient_credits`, `connection ECONNREFUSED`… */
const errorKinds = new Map();
const countKind = (kind) => errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
const fiveHundreds = [];
const unexpected4xx = [];
const connErrors = [];
const restarts = [];
const rss = [];
/** Exceptions in the soak's own clients (a bug here, or an answer of an unexpected shape). */
const clientFailures = [];

// ————— the server, killed and restarted —————
let server;
let serverChild;
let url;
let env;

async function killAndRestart(label) {
  const restart = { label, killAt: now(), readyAt: Infinity, startMs: NaN, firstOkAt: null };
  restarts.push(restart);
  const exited = once(serverChild, 'exit');
  serverChild.kill('SIGKILL');
  await exited;
  const { child, ms } = await launchServer(env, { tries: 1200, stderr: 'pipe' });
  serverChild = quiet(child);
  restart.readyAt = now();
  restart.startMs = ms;
  return restart;
}

/**
 * The server's stderr, less the dashboard sign-in link it prints at every start: what remains
 * (a warning, a crash) goes to ours.
 */
function quiet(child) {
  let after = Infinity;
  let n = 0;
  createInterface({ input: child.stderr }).on('line', (line) => {
    n++;
    if (/^Dashboard of the demo workspace/.test(line)) after = n;
    const link = n === after + 1 || (n === after + 2 && line === '');
    if (n !== after && !link) process.stderr.write(`server: ${line}\n`);
  });
  return child;
}

function connectionKind(err) {
  if (err?.name === 'TimeoutError') return 'timeout';
  let cause = err;
  while (cause?.cause) cause = cause.cause;
  return cause?.code ?? cause?.message ?? String(err);
}

/** A gap: from a kill until the server answered again, plus a grace for pooled sockets found dead. */
const inGap = (t) => restarts.some((r) => t >= r.killAt && t <= r.readyAt + GAP_GRACE_MS / 1000);
/** While the server is down, clients back off rather than spin on refusals. */
const down = () => restarts.some((r) => r.readyAt === Infinity);

/**
 * One request as a client of workspace `ws` sends it. Resolves with `{status, json}` or, for a
 * stream, `{status, events}` (the events received, even when the stream was cut), or
 * `{conn: kind}` when the connection failed.
 */
async function send(ws, op, method, route, body, { stream = false } = {}) {
  const stats = opStats(op);
  stats.requests++;
  const sentAt = now();
  const t = performance.now();
  let res;
  const events = [];
  try {
    res = await fetch(`${url}/v1/api${route}`, {
      method,
      headers: { Authorization: `Bearer ${ws.apiKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...(stream ? { Accept: 'text/event-stream' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (stream && res.status === 200) {
      const parsed = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      for await (const m of parsed) events.push({ event: m.event, data: JSON.parse(m.data) });
    }
    const text = stream && res.status === 200 ? '' : await res.text();
    const ms = performance.now() - t;
    const at = now();
    if (res.status >= 500) {
      stats.c5xx++;
      countKind(`${res.status} ${safeCode(text)}`);
      fiveHundreds.push({ op, method, route, status: res.status, body: text.slice(0, 300), at });
      return { status: res.status, events };
    }
    if (res.status >= 400) {
      stats.c4xx++;
      const code = safeCode(text);
      countKind(`${res.status} ${code}`);
      if (!(res.status === 402 && code === 'insufficient_credits' && ws.low)) unexpected4xx.push({ op, method, route, status: res.status, body: text.slice(0, 300), at });
      return { status: res.status, code, events };
    }
    stats.ok++;
    stats.ms.push(ms);
    for (const r of restarts) if (r.firstOkAt === null && sentAt >= r.killAt) r.firstOkAt = at;
    for (const e of events) if (e.event === 'error') countKind(`stream error event ${e.data.error}`);
    return { status: res.status, json: text ? JSON.parse(text) : undefined, events };
  } catch (err) {
    const kind = connectionKind(err);
    const at = now();
    stats.conn++;
    countKind(`connection ${kind}`);
    connErrors.push({ op, kind, at, sentAt, expected: inGap(at) });
    return { conn: kind, events };
  }
}

function safeCode(text) {
  try {
    return JSON.parse(text).error ?? 'no error code';
  } catch {
    return 'not JSON';
  }
}

// ————— what each workspace was acknowledged —————
function newWorkspaceRecord(name, workspaceId, apiKey, low) {
  return {
    name,
    workspaceId,
    apiKey,
    low,
    /** Credits of every 2xx charge, by operation. */
    charged: new Map(),
    /** The most the requests cut by a kill (or refused mid-way) could have been charged. */
    unacknowledgedBound: 0,
    templates: new Map(),
    sheets: new Map(),
    campaigns: new Map(),
    prospects: new Map(),
    deletedProspects: new Set(),
    conversations: new Map(),
  };
}
const addCharge = (ws, op, credits) => credits > 0 && ws.charged.set(op, (ws.charged.get(op) ?? 0) + credits);

/** An acknowledged value, and the values of later writes that were cut (either may have landed). */
const settled = (value) => ({ value, maybe: [] });
const acknowledge = (slot, value) => ((slot.value = value), (slot.maybe = []));
const uncertain = (slot, value) => slot.maybe.push(value);
const accepts = (slot, value) => slot.value === value || slot.maybe.includes(value);

// ————— the operations —————
let cnpjs = [];
let enrichBound = 0;
const industries = ['software', 'dentist', 'bakery', 'academia', 'clinic', 'restaurant'];
const states = ['SP', 'RJ', 'MG', 'PE', 'RS', 'BA'];
const statuses = ['ready', 'sending', 'awaiting_reply', 'replied', 'paused', 'failed'];
const aiRows = Array.from({ length: 40 }, (_, i) => ({ Company: `Company ${i}`, City: pick(['Recife', 'Olinda', 'Salvador']) }));

function enrichBody(i) {
  const p = world[i % world.length];
  return pick([
    { fullName: `${p.firstName} ${p.lastName}`, companyDomain: p.domain, goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true },
    { email: p.email ?? `${p.firstName}@${p.domain}`, goalFields: ['seniority'], providerOrder: ['apollo'], onlyListed: true },
    { linkedinUrl: p.linkedinUrl, goalFields: ['personalEmail'], providerOrder: ['pdl'], onlyListed: true },
    { fullName: `${p.firstName} ${p.lastName}`, companyDomain: p.domain, maxCredits: 5 },
  ]);
}

const rowsFor = (from, n) =>
  Array.from({ length: n }, (_, i) => ({
    rowId: `row-${from + i}`,
    values: { Name: `Person ${from + i} Silva`, Company: `Company ${(from + i) % 40}`, Title: i % 2 ? 'CEO' : 'Head of Sales', City: 'Recife' },
  }));
const brief = { offering: 'A scheduling platform for clinics that cuts no-shows by 30%.', senderName: 'Marina', tone: 'friendly', language: 'en' };

/** What a client does, by weight. Each returns nothing; `send` counts and the closures record. */
function operationsFor(ws, client) {
  const mine = { templates: [], sheets: [], campaigns: [], prospects: [], serial: 0 };
  const unique = () => `${client}-${++mine.serial}`;
  const charged = (op, credits) => addCharge(ws, op, credits);
  /** A paid request cut by a kill may still have been charged, up to `bound`. */
  const cut = (r, bound) => {
    if (r.conn) ws.unacknowledgedBound += bound;
  };
  const list = [
    [6, 'searchCompanies', async () => {
      const limit = 1 + rand(10);
      const r = await send(ws, 'searchCompanies', 'POST', '/companies/search', { state: pick(states), ...(rand(2) ? { industry: pick(industries) } : {}), limit });
      if (r.json) charged('searchCompanies', r.json.results.length);
      cut(r, limit);
    }],
    [4, 'streamCompanies', async () => {
      const limit = 1 + rand(10);
      const r = await send(ws, 'streamCompanies', 'POST', '/companies/search/stream', { state: pick(states), limit }, { stream: true });
      const got = r.events.filter((e) => e.event === 'page').reduce((n, e) => n + e.data.results.length, 0);
      if (r.events) charged('streamCompanies', got);
      if (r.conn) ws.unacknowledgedBound += 2 * limit - got;
    }],
    [5, 'lookupCnpjBatch', async () => {
      const batch = Array.from({ length: 1 + rand(8) }, () => pick(cnpjs));
      if (rand(3) === 0) batch.push('11222333000100'); // wrong check digits: `invalid`, never charged
      const r = await send(ws, 'lookupCnpjBatch', 'POST', '/companies/cnpj/batch', { cnpjs: batch });
      if (r.json) charged('lookupCnpjBatch', r.json.results.length);
      cut(r, batch.length);
    }],
    [4, 'searchPeople', async () => {
      const limit = 1 + rand(10);
      const r = await send(ws, 'searchPeople', 'POST', '/sourcing/people', { sourceOrder: ['demo', 'receita_federal'], ...(rand(2) ? { seniorities: ['c_suite', 'director'] } : {}), limit });
      if (r.json) charged('searchPeople', r.json.results.length);
      cut(r, limit);
    }],
    [2, 'streamPeople', async () => {
      const limit = 1 + rand(10);
      const r = await send(ws, 'streamPeople', 'POST', '/sourcing/people/stream', { sourceOrder: ['demo', 'receita_federal'], limit }, { stream: true });
      const got = r.events.filter((e) => e.event === 'page').reduce((n, e) => n + e.data.results.length, 0);
      charged('streamPeople', got);
      if (r.conn) ws.unacknowledgedBound += limit - got;
    }],
    [3, 'hydratePeople', async () => {
      const leads = Array.from({ length: 1 + rand(3) }, () => {
        const p = pick(world);
        return { name: `${p.firstName} ${p.lastName}`, company: p.company, domain: p.domain };
      });
      const r = await send(ws, 'hydratePeople', 'POST', '/sourcing/people/hydrate', { leads });
      if (r.json) charged('hydratePeople', r.json.creditsCharged);
      cut(r, leads.length);
    }],
    [4, 'enrich', async () => {
      const r = await send(ws, 'enrich', 'POST', '/enrich', enrichBody(rand(world.length)));
      if (r.json) charged('enrich', r.json.creditsCharged);
      cut(r, enrichBound);
    }],
    [4, 'aiColumn', async () => {
      const r = await send(ws, 'aiColumn', 'POST', '/ai-column', { instruction: 'industry in two words', ...pick(aiRows) });
      if (r.json) charged('aiColumn', r.json.creditsCharged);
      cut(r, 1);
    }],
    [2, 'research', async () => {
      const webSearch = rand(3) === 0;
      const r = await send(ws, 'research', 'POST', '/research', {
        prompt: 'What does this company do?',
        company: 'Clinica Boa',
        ...(webSearch ? { webSearch: true, website: `${web.url}/about` } : {}),
      });
      if (r.json) charged('research', r.json.creditsCharged);
      cut(r, 5);
    }],
    [2, 'agentChat', async () => {
      const previous = rand(4) === 0 ? pick([...ws.conversations.keys()]) : undefined;
      const message = `Client ${client} asks: my balance, and is ${agentCnpj} active?`;
      const r = await send(ws, 'agentChat', 'POST', '/agent/chat', { message, ...(previous ? { conversationId: previous } : {}) }, { stream: true });
      const got = r.events.filter((e) => e.event === 'tool_result').reduce((n, e) => n + e.data.creditsCharged, 0);
      charged('lookupCnpjBatch', got); // a tool's charge is named by its operation
      if (r.conn) ws.unacknowledgedBound += 1 - Math.min(1, got);
      const done = r.events.find((e) => e.event === 'done');
      if (done) {
        const conversation = ws.conversations.get(done.data.conversationId) ?? { messages: [] };
        conversation.messages.push(message);
        ws.conversations.set(done.data.conversationId, conversation);
      }
    }],
    [1, 'listConversations', async () => void (await send(ws, 'listConversations', 'GET', '/agent/conversations'))],
    [1, 'getConversation', async () => {
      const id = pick([...ws.conversations.keys()]);
      if (id) await send(ws, 'getConversation', 'GET', `/agent/conversations/${id}`);
    }],
    [4, 'getCredits', async () => void (await send(ws, 'getCredits', 'GET', '/credits'))],
    [3, 'listLedger', async () => void (await send(ws, 'listLedger', 'GET', `/credits/ledger?limit=${pick([20, 50, 200])}${rand(3) ? '' : '&operation=searchCompanies'}`))],
    [1, 'getUsage', async () => void (await send(ws, 'getUsage', 'GET', '/credits/usage?days=7'))],
    [1, 'listProviders', async () => void (await send(ws, 'listProviders', 'GET', '/providers'))],
    [3, 'createTemplate', async () => {
      const name = `Template ${unique()}`;
      const offering = `Offering ${unique()}`;
      const r = await send(ws, 'createTemplate', 'POST', '/prospecting/templates', { name, offering, ...brief, offering, campaignName: `From ${name}` });
      if (r.json) {
        const t = { templateId: r.json.templateId, name: settled(name), offering: settled(offering), deleted: settled(false) };
        ws.templates.set(t.templateId, t);
        mine.templates.push(t);
      }
    }],
    [3, 'updateTemplate', async () => {
      const t = pick(mine.templates.filter((x) => !x.deleted.value));
      if (!t) return;
      const offering = `Offering ${unique()}`;
      const name = rand(2) ? `Renamed ${unique()}` : undefined;
      const r = await send(ws, 'updateTemplate', 'PATCH', `/prospecting/templates/${t.templateId}`, { offering, ...(name ? { name } : {}) });
      if (r.json) {
        acknowledge(t.offering, offering);
        if (name) acknowledge(t.name, name);
      } else if (r.conn) {
        uncertain(t.offering, offering);
        if (name) uncertain(t.name, name);
      }
    }],
    [1, 'deleteTemplate', async () => {
      const live = mine.templates.filter((x) => !x.deleted.value);
      if (live.length < 3) return;
      const t = pick(live);
      const r = await send(ws, 'deleteTemplate', 'DELETE', `/prospecting/templates/${t.templateId}`);
      if (r.json) acknowledge(t.deleted, true);
      else if (r.conn) uncertain(t.deleted, true);
    }],
    [2, 'listTemplates', async () => void (await send(ws, 'listTemplates', 'GET', '/prospecting/templates'))],
    [2, 'createSheet', async () => {
      const rows = rowsFor(0, 10);
      const r = await send(ws, 'createSheet', 'POST', '/sheets', { name: `Sheet ${unique()}`, rows });
      if (r.json) {
        const s = { sheetId: r.json.sheetId, rowIds: new Set(rows.map((x) => x.rowId)), next: 10, deleted: settled(false) };
        ws.sheets.set(s.sheetId, s);
        mine.sheets.push(s);
      }
    }],
    [2, 'upsertSheetRows', async () => {
      const s = pick(mine.sheets);
      if (!s || s.next >= 200) return;
      const rows = rowsFor(s.next, 5);
      s.next += 5;
      const r = await send(ws, 'upsertSheetRows', 'PUT', `/sheets/${s.sheetId}/rows`, { rows });
      if (r.json) for (const row of rows) s.rowIds.add(row.rowId);
    }],
    [1, 'deleteSheet', async () => {
      // Only a sheet no campaign of this client uses: its campaigns keep adding rows from theirs.
      const s = pick(mine.sheets.filter((x) => ![...mine.campaigns].some((c) => c.sheet === x)));
      if (!s || mine.sheets.length < 3) return;
      mine.sheets.splice(mine.sheets.indexOf(s), 1);
      const r = await send(ws, 'deleteSheet', 'DELETE', `/sheets/${s.sheetId}`);
      if (r.json) acknowledge(s.deleted, true);
      else if (r.conn) uncertain(s.deleted, true);
    }],
    [1, 'getSheet', async () => {
      const s = pick(mine.sheets);
      if (s) await send(ws, 'getSheet', 'GET', `/sheets/${s.sheetId}`);
    }],
    [3, 'createCampaign', async () => {
      const s = pick(mine.sheets);
      if (!s) return;
      const rowIds = [...s.rowIds].slice(0, 1 + rand(5));
      const template = rand(2) ? pick(mine.templates.filter((x) => !x.deleted.value && x.deleted.maybe.length === 0)) : undefined;
      const body = template ? { templateId: template.templateId, sheetId: s.sheetId, rowIds } : { name: `Campaign ${unique()}`, ...brief, sheetId: s.sheetId, rowIds };
      const r = await send(ws, 'createCampaign', 'POST', '/prospecting/campaigns', body);
      if (r.json) {
        const c = { campaignId: r.json.campaignId, sheetId: s.sheetId, rowIds: new Set(rowIds), sheet: s };
        ws.campaigns.set(c.campaignId, c);
        mine.campaigns.push(c);
      }
    }],
    [2, 'addProspects', async () => {
      const c = pick(mine.campaigns);
      if (!c) return;
      const rowIds = [...c.sheet.rowIds].filter((id) => !c.rowIds.has(id)).slice(0, 1 + rand(4));
      if (!rowIds.length) return;
      const r = await send(ws, 'addProspects', 'POST', `/prospecting/campaigns/${c.campaignId}/prospects`, { sheetId: c.sheetId, rowIds });
      if (r.json) for (const id of rowIds) c.rowIds.add(id);
    }],
    [1, 'updateCampaign', async () => {
      const c = pick(mine.campaigns);
      if (c) await send(ws, 'updateCampaign', 'PATCH', `/prospecting/campaigns/${c.campaignId}`, { tone: pick(['formal', 'friendly', 'direct']) });
    }],
    [1, 'updateCadence', async () => {
      const c = pick(mine.campaigns);
      if (!c) return;
      await send(ws, 'updateCadence', 'PATCH', `/prospecting/campaigns/${c.campaignId}/cadence`, {
        steps: [
          { day: 0, channel: 'linkedin', body: '{{connectionNote}}' },
          { day: 2 + rand(5), channel: 'email', subject: '{{emailSubject}}', body: '{{emailBody}}' },
        ],
      });
    }],
    [2, 'listCampaigns', async () => void (await send(ws, 'listCampaigns', 'GET', '/prospecting/campaigns'))],
    [1, 'getCampaign', async () => {
      const c = pick(mine.campaigns);
      if (c) await send(ws, 'getCampaign', 'GET', `/prospecting/campaigns/${c.campaignId}`);
    }],
    [3, 'listProspects', async () => {
      const c = pick(mine.campaigns);
      if (!c) return;
      const r = await send(ws, 'listProspects', 'GET', `/prospecting/prospects?campaignId=${c.campaignId}`);
      for (const p of r.json?.prospects ?? []) {
        if (ws.prospects.has(p.prospectId) || ws.deletedProspects.has(p.prospectId)) continue;
        const tracked = { prospectId: p.prospectId, campaign: c, rowId: p.rowId, status: settled(p.status), deleted: settled(false) };
        ws.prospects.set(p.prospectId, tracked);
        mine.prospects.push(tracked);
      }
    }],
    [4, 'updateProspect', async () => {
      const p = pick(mine.prospects.filter((x) => !x.deleted.value));
      if (!p) return;
      const status = pick(statuses);
      const r = await send(ws, 'updateProspect', 'PATCH', `/prospecting/prospects/${p.prospectId}`, { status });
      if (r.json) acknowledge(p.status, status);
      else if (r.conn) uncertain(p.status, status);
    }],
    [1, 'deleteProspect', async () => {
      const p = pick(mine.prospects.filter((x) => !x.deleted.value));
      if (!p || rand(3)) return;
      const r = await send(ws, 'deleteProspect', 'DELETE', `/prospecting/prospects/${p.prospectId}`);
      if (r.json) acknowledge(p.deleted, true);
      else if (r.conn) uncertain(p.deleted, true);
    }],
    [1, 'getProspect', async () => {
      const p = pick(mine.prospects.filter((x) => !x.deleted.value && x.deleted.maybe.length === 0));
      if (p) await send(ws, 'getProspect', 'GET', `/prospecting/prospects/${p.prospectId}`);
    }],
    [1, 'listProspectEvents', async () => {
      const p = pick(mine.prospects.filter((x) => !x.deleted.value && x.deleted.maybe.length === 0));
      if (p) await send(ws, 'listProspectEvents', 'GET', `/prospecting/prospects/${p.prospectId}/events`);
    }],
  ];
  const total = list.reduce((n, [w]) => n + w, 0);
  return () => {
    let at = Math.random() * total;
    for (const [w, , run] of list) if ((at -= w) < 0) return run();
    return list[0][2]();
  };
}

// ————— memory —————
async function sampleMemory(segment) {
  const status = await readFile(`/proc/${serverChild.pid}/status`, 'utf8').catch(() => '');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  if (kib > 0) rss.push({ t: now(), segment, mib: kib / 1024, dataMib: await dirMiB(dataDir) });
}

async function dirMiB(dir) {
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile()) bytes += (await stat(path.join(entry.parentPath ?? entry.path, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return bytes / 1048576;
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
function slopePerMinute(points) {
  const mt = mean(points.map((p) => p.t));
  const mm = mean(points.map((p) => p.mib));
  const num = points.reduce((n, p) => n + (p.t - mt) * (p.mib - mm), 0);
  const den = points.reduce((n, p) => n + (p.t - mt) ** 2, 0);
  return den ? (num / den) * 60 : 0;
}

// ————— the checks —————
async function readBack(ws, route) {
  const res = await fetch(`${url}/v1/api${route}`, { headers: { Authorization: `Bearer ${ws.apiKey}` } });
  const text = await res.text();
  return { status: res.status, json: res.ok ? JSON.parse(text) : undefined, text };
}

async function checkWrites(ws, problems) {
  let checked = 0;
  const fail = (what) => problems.push(`${ws.name}: ${what}`);
  const templates = new Map((await readBack(ws, '/prospecting/templates')).json.templates.map((t) => [t.templateId, t]));
  for (const t of ws.templates.values()) {
    checked++;
    const stored = templates.get(t.templateId);
    if (!stored) {
      if (!accepts(t.deleted, true)) fail(`template ${t.templateId} acknowledged but missing`);
      continue;
    }
    if (!accepts(t.deleted, false)) fail(`template ${t.templateId} deleted (acknowledged) but present`);
    else if (!accepts(t.name, stored.name) || !accepts(t.offering, stored.offering)) {
      fail(`template ${t.templateId} holds ${JSON.stringify([stored.name, stored.offering])}, acknowledged ${JSON.stringify([t.name.value, t.offering.value])}`);
    }
  }
  for (const s of ws.sheets.values()) {
    checked++;
    const r = await readBack(ws, `/sheets/${s.sheetId}`);
    if (r.status === 404 && accepts(s.deleted, true)) continue;
    if (r.status === 200 && !accepts(s.deleted, false)) fail(`sheet ${s.sheetId} deleted (acknowledged) but present`);
    else if (r.status !== 200) fail(`sheet ${s.sheetId}: ${r.status}`);
    else {
      const stored = new Set(r.json.rows.map((row) => row.rowId));
      const missing = [...s.rowIds].filter((id) => !stored.has(id));
      if (missing.length) fail(`sheet ${s.sheetId} lacks acknowledged rows ${missing.join(', ')}`);
    }
  }
  const campaigns = new Set((await readBack(ws, '/prospecting/campaigns')).json.campaigns.map((c) => c.campaignId));
  const prospects = new Map((await readBack(ws, '/prospecting/prospects')).json.prospects.map((p) => [p.prospectId, p]));
  for (const c of ws.campaigns.values()) {
    checked++;
    if (!campaigns.has(c.campaignId)) {
      fail(`campaign ${c.campaignId} acknowledged but missing`);
      continue;
    }
    const rows = new Set([...prospects.values()].filter((p) => p.campaignId === c.campaignId).map((p) => p.rowId));
    const deletedRows = new Set([...ws.prospects.values()].filter((p) => p.campaign === c && !accepts(p.deleted, false)).map((p) => p.rowId));
    const maybeDeleted = new Set([...ws.prospects.values()].filter((p) => p.campaign === c && p.deleted.maybe.length).map((p) => p.rowId));
    const missing = [...c.rowIds].filter((id) => !rows.has(id) && !deletedRows.has(id) && !maybeDeleted.has(id));
    if (missing.length) fail(`campaign ${c.campaignId} lacks the prospects of acknowledged rows ${missing.join(', ')}`);
  }
  for (const p of ws.prospects.values()) {
    checked++;
    const stored = prospects.get(p.prospectId);
    if (!stored) {
      if (!accepts(p.deleted, true)) fail(`prospect ${p.prospectId} acknowledged but missing`);
    } else if (!accepts(p.deleted, false)) fail(`prospect ${p.prospectId} deleted (acknowledged) but present`);
    else if (!accepts(p.status, stored.status)) fail(`prospect ${p.prospectId} is ${stored.status}, acknowledged ${p.status.value}`);
  }
  for (const [conversationId, c] of ws.conversations) {
    checked++;
    const r = await readBack(ws, `/agent/conversations/${conversationId}`);
    const said = new Set((r.json?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content));
    const missing = c.messages.filter((m) => !said.has(m));
    if (r.status !== 200 || missing.length) fail(`conversation ${conversationId}: ${r.status}, ${missing.length} acknowledged messages missing`);
  }
  return checked;
}

async function checkLedger(ws, problems) {
  const fail = (what) => problems.push(`${ws.name}: ${what}`);
  const movements = [];
  let pages = 0;
  for (let before; ; pages++) {
    const r = await readBack(ws, `/credits/ledger?limit=200${before ? `&before=${before}` : ''}`);
    movements.push(...r.json.movements);
    if (r.json.nextBefore === null) break;
    before = r.json.nextBefore;
  }
  const { balance, consumed } = (await readBack(ws, '/credits')).json;
  const ascending = [...movements].sort((a, b) => a.seq - b.seq);
  const sum = ascending.reduce((n, m) => n + m.amount, 0);
  if (sum !== balance) fail(`ledger sums to ${sum}, balance is ${balance}`);
  if (balance < 0) fail(`balance ${balance} below zero`);
  ascending.forEach((m, i) => {
    if (m.seq !== i + 1) fail(`ledger seq ${m.seq} at position ${i + 1}`);
    const previous = i === 0 ? 0 : ascending[i - 1].balanceAfter;
    if (m.balanceAfter !== previous + m.amount) fail(`movement seq ${m.seq}: balanceAfter ${m.balanceAfter}, expected ${previous + m.amount}`);
  });
  const debits = ascending.filter((m) => m.amount < 0 && m.operation !== 'trial_expired');
  const debited = -debits.reduce((n, m) => n + m.amount, 0);
  if (debited !== consumed) fail(`debits total ${debited}, consumption says ${consumed}`);
  const refunded = ascending.filter((m) => m.operation.startsWith('refund:')).reduce((n, m) => n + m.amount, 0);
  const net = debited - refunded;
  const acknowledged = [...ws.charged.values()].reduce((a, b) => a + b, 0);
  if (net < acknowledged) fail(`net debits ${net} are fewer than the acknowledged charges ${acknowledged}`);
  if (net - acknowledged > ws.unacknowledgedBound) {
    fail(`net debits ${net} exceed the acknowledged charges ${acknowledged} by ${net - acknowledged}, more than the ${ws.unacknowledgedBound} the cut requests could cost`);
  }
  // Per operation too: the debits named by each operation cover its acknowledged charges.
  for (const [op, credits] of ws.charged) {
    const mine = ascending.filter((m) => m.operation === op || m.operation === `refund:${op}`).reduce((n, m) => n - m.amount, 0);
    if (mine < credits) fail(`${op}: net debits ${mine} below its acknowledged charges ${credits}`);
  }
  return { movements: movements.length, pages: pages + 1, balance, debited, refunded, acknowledged, unacknowledgedBound: ws.unacknowledgedBound };
}

// ————— the run —————
const watchdog = setTimeout(() => {
  console.error(`soak: still running after ${WATCHDOG_MS / 60000} minutes, giving up`);
  serverChild?.kill('SIGKILL');
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

let exitCode = 0;
try {
  const llmEnv = { LLM_BASE_URL: model.baseUrl, LLM_API_KEY: model.key, LLM_MODEL: 'fake-model', LLM_MAX_CONCURRENT: '50' };
  const providerEnv = {};
  for (const p of PROVIDERS) {
    Object.assign(providerEnv, {
      [`${p.env}_API_KEY`]: fakes[p.id].key,
      [`${p.env}_URL`]: fakes[p.id].url,
      [`${p.env}_RATE_PER_SECOND`]: String(p.perSecond),
      [`${p.env}_RATE_PER_MINUTE`]: String(p.perSecond * 60),
      [`${p.env}_MAX_CONCURRENT`]: String(p.concurrent),
    });
  }
  server = await startInstance(dataDir, { ...llmEnv, ...providerEnv, SEARXNG_URL: web.url, WEB_FETCH_ALLOW_LOOPBACK: 'true' }, { demo: true, stderr: 'pipe' });
  ({ url, env } = server);
  serverChild = quiet(server.child);

  const workspaces = [newWorkspaceRecord('ws-1', server.workspaceId, server.apiKey, false)];
  for (let i = 2; i <= WORKSPACES; i++) {
    const low = i === WORKSPACES;
    const created = await cli(['workspace', 'create', '--name', `soak ${i}`, '--plan', 'active'], env);
    await cli(['credits', 'grant', '--workspace', created.workspaceId, '--amount', String(low ? LOW_CREDITS : 10_000_000)], env);
    workspaces.push(newWorkspaceRecord(low ? `ws-${i} (low)` : `ws-${i}`, created.workspaceId, created.apiKey, low));
  }
  const setup = workspaces[0];
  const found = await send(setup, 'searchCompanies', 'POST', '/companies/search', { state: 'SP', limit: 20 });
  if (!found.json) throw new Error(`the set-up search failed: ${JSON.stringify({ found, unexpected4xx, fiveHundreds })}`);
  cnpjs = found.json.results.map((c) => c.cnpj);
  addCharge(setup, 'searchCompanies', cnpjs.length);
  agentCnpj = cnpjs[0];
  const providers = await send(setup, 'listProviders', 'GET', '/providers');
  enrichBound = providers.json.providers.reduce((n, p) => n + (p.cost ?? 0), 0);

  console.log(
    `soak on ${cpus().length} cores, Node ${process.version}: ${LOAD_SECONDS} s of load, ${WORKSPACES} workspaces × ${CLIENTS} clients, ` +
      `SIGKILL + restart at ${KILLS_AT.map((k) => `${Math.round(k * LOAD_SECONDS)} s`).join(' and ')}, and before the checks`,
  );

  // Load.
  const loadStart = now();
  const loadEnd = loadStart + LOAD_SECONDS;
  let segment = 0;
  const sampler = setInterval(() => void sampleMemory(segment), SAMPLE_MS);
  await sampleMemory(segment);
  const clients = workspaces.flatMap((ws) =>
    Array.from({ length: CLIENTS }, async (_, c) => {
      const next = operationsFor(ws, `${ws.name}.${c}`);
      while (now() < loadEnd) {
        if (down()) await sleep(50);
        await next().catch((err) => clientFailures.push(err));
        await sleep(rand(THINK_MS * 2));
      }
    }),
  );
  const killer = (async () => {
    for (const at of KILLS_AT) {
      await sleep((loadStart + at * LOAD_SECONDS - now()) * 1000);
      await killAndRestart(`at ${Math.round(at * 100)} %`);
      segment++;
    }
  })();
  const resetter = setInterval(() => {
    for (const f of [...Object.values(fakes), model]) f.reset();
  }, 10_000);
  await Promise.all([...clients, killer]);
  clearInterval(sampler);
  clearInterval(resetter);
  const loadSeconds = now() - loadStart;

  // One more kill, with nothing in flight: every acknowledged write is read back after a recovery.
  const final = await killAndRestart('after the load');
  final.firstOkAt = final.readyAt;
  const writeProblems = [];
  const ledgerProblems = [];
  let writesChecked = 0;
  const ledgers = [];
  for (const ws of workspaces) {
    writesChecked += await checkWrites(ws, writeProblems);
    ledgers.push({ ws, ...(await checkLedger(ws, ledgerProblems)) });
  }
  await new Promise((r) => (serverChild.once('exit', r), serverChild.kill('SIGTERM')));

  // ————— print —————
  const all = [...ops.values()];
  const total = (key) => all.reduce((n, s) => n + (typeof s[key] === 'number' ? s[key] : 0), 0);
  console.log(`\nRequests by operation (${total('requests')} in ${loadSeconds.toFixed(0)} s, ${(total('requests') / loadSeconds).toFixed(1)}/s; latency of the 2xx)`);
  console.log('  operation              requests      2xx     4xx   5xx   conn.err     p50 ms     p99 ms');
  for (const [op, s] of [...ops].sort((a, b) => b[1].requests - a[1].requests)) {
    const p50 = s.ms.length ? pct(s.ms, 0.5).toFixed(1) : '-';
    const p99 = s.ms.length ? pct(s.ms, 0.99).toFixed(1) : '-';
    console.log(
      `  ${op.padEnd(20)} ${String(s.requests).padStart(9)} ${String(s.ok).padStart(8)} ${String(s.c4xx).padStart(7)} ${String(s.c5xx).padStart(5)} ${String(s.conn).padStart(10)} ${p50.padStart(10)} ${p99.padStart(10)}`,
    );
  }
  const allMs = all.flatMap((s) => s.ms);
  console.log(`  ${'all'.padEnd(20)} ${String(total('requests')).padStart(9)} ${String(total('ok')).padStart(8)} ${String(total('c4xx')).padStart(7)} ${String(total('c5xx')).padStart(5)} ${String(total('conn')).padStart(10)} ${pct(allMs, 0.5).toFixed(1).padStart(10)} ${pct(allMs, 0.99).toFixed(1).padStart(10)}`);

  console.log('\nErrors by kind');
  if (!errorKinds.size) console.log('  none');
  for (const [kind, n] of [...errorKinds].sort((a, b) => b[1] - a[1])) console.log(`  ${kind.padEnd(48)} ${String(n).padStart(6)}`);

  console.log('\nRestarts (SIGKILL, then a new server on the same DATA_DIR)');
  console.log('  when              killed at   server start   kill → first 200   conn. errors in the gap');
  for (const r of restarts) {
    const errs = connErrors.filter((e) => e.at >= r.killAt && e.at <= r.readyAt + GAP_GRACE_MS / 1000).length;
    const firstOk = r.firstOkAt === null ? '-' : `${((r.firstOkAt - r.killAt) * 1000).toFixed(0)} ms`;
    console.log(`  ${r.label.padEnd(16)} ${`${(r.killAt - loadStart).toFixed(1)} s`.padStart(10)} ${`${r.startMs.toFixed(0)} ms`.padStart(14)} ${firstOk.padStart(18)} ${String(errs).padStart(25)}`);
  }

  // Memory: every segment, then the judgement on the final process.
  console.log(`\nResident memory of the server (VmRSS every ${SAMPLE_MS / 1000} s; DATA_DIR size beside it)`);
  console.log('  process                       samples    min MiB    avg MiB    max MiB   DATA_DIR MiB');
  for (let s = 0; s <= segment; s++) {
    const mine = rss.filter((x) => x.segment === s);
    if (!mine.length) continue;
    const mibs = mine.map((x) => x.mib);
    console.log(
      `  ${(s === 0 ? 'first' : s === segment ? 'final' : `after restart ${s}`).padEnd(28)} ${String(mine.length).padStart(8)} ${Math.min(...mibs).toFixed(1).padStart(10)} ${mean(mibs).toFixed(1).padStart(10)} ${Math.max(...mibs).toFixed(1).padStart(10)}   ${mine[0].dataMib.toFixed(1)} → ${mine.at(-1).dataMib.toFixed(1)}`,
    );
  }
  const last = rss.filter((x) => x.segment === segment);
  const span = last.at(-1).t - last[0].t;
  // A short run (SOAK_SECONDS well under 300) gets a shorter warm-up and windows: its figure is indicative only.
  const warmup = Math.min(WARMUP_S, span / 3);
  const steady = last.filter((x) => x.t - last[0].t >= warmup);
  const windowS = Math.max((2 * SAMPLE_MS) / 1000, Math.min(60, (span - warmup) / 3));
  const firstWindow = steady.filter((x) => x.t < steady[0].t + windowS);
  const lastWindow = steady.filter((x) => x.t > steady.at(-1).t - windowS);
  const firstAvg = mean(firstWindow.map((x) => x.mib));
  const lastAvg = mean(lastWindow.map((x) => x.mib));
  const growth = lastAvg / firstAvg - 1;
  console.log(
    `  final process, after ${warmup.toFixed(0)} s of warm-up: first ${windowS.toFixed(0)} s avg ${firstAvg.toFixed(1)} MiB, last ${windowS.toFixed(0)} s avg ${lastAvg.toFixed(1)} MiB ` +
      `(${growth >= 0 ? '+' : ''}${(100 * growth).toFixed(1)} %, limit +${100 * MAX_RSS_GROWTH} %), slope ${slopePerMinute(steady).toFixed(2)} MiB/min over ${steady.length} samples; ` +
      `DATA_DIR ${firstWindow[0].dataMib.toFixed(1)} → ${lastWindow.at(-1).dataMib.toFixed(1)} MiB`,
  );

  console.log('\nLedgers (read back page by page after the last restart)');
  console.log('  workspace       movements  pages    balance   debited  refunded  acknowledged  cut-request bound');
  for (const l of ledgers) {
    console.log(
      `  ${l.ws.name.padEnd(14)} ${String(l.movements).padStart(10)} ${String(l.pages).padStart(6)} ${String(l.balance).padStart(10)} ${String(l.debited).padStart(9)} ${String(l.refunded).padStart(9)} ${String(l.acknowledged).padStart(13)} ${String(l.unacknowledgedBound).padStart(18)}`,
    );
  }

  const outsideGaps = connErrors.filter((e) => !e.expected);
  const checks = [
    ['no 5xx', fiveHundreds.length === 0, `${fiveHundreds.length} answered 5xx`],
    ['connection errors only in restart gaps', outsideGaps.length === 0, `${outsideGaps.length} outside: ${outsideGaps.slice(0, 3).map((e) => `${e.op} ${e.kind} at ${e.at.toFixed(1)} s`).join('; ')}`],
    ['no 4xx but the low workspace\'s 402s', unexpected4xx.length === 0, `${unexpected4xx.length}: ${unexpected4xx.slice(0, 3).map((e) => `${e.method} ${e.route} ${e.status} ${e.body}`).join('; ')}`],
    ['every answer had the shape the client expects', clientFailures.length === 0, `${clientFailures.length}, the first: ${clientFailures[0]?.stack}`],
    ['every server came back', restarts.every((r) => r.readyAt > r.killAt), ''],
    [`every acknowledged write present (${writesChecked} checked)`, writeProblems.length === 0, ''],
    ['ledgers: no seq gap, balanceAfter chained, sum = balance, debits = consumption, charges covered', ledgerProblems.length === 0, ''],
    [`resident memory flat after warm-up (≤ +${100 * MAX_RSS_GROWTH} %)`, growth <= MAX_RSS_GROWTH, `+${(100 * growth).toFixed(1)} %`],
  ];
  console.log('\nChecks');
  for (const [name, ok, why] of checks) console.log(`  ${ok ? 'PASS' : 'FAIL'}  ${name}${ok || !why ? '' : `: ${why}`}`);
  const problems = [...writeProblems, ...ledgerProblems];
  for (const p of problems.slice(0, 20)) console.log(`        ${p}`);
  if (problems.length > 20) console.log(`        … and ${problems.length - 20} more`);
  for (const f of fiveHundreds.slice(0, 5)) console.log(`        5xx: ${f.method} ${f.route} → ${f.status} ${f.body}`);
  if (checks.some(([, ok]) => !ok)) exitCode = 1;
} catch (err) {
  console.error(err);
  exitCode = 2;
  serverChild?.kill('SIGKILL');
} finally {
  await Promise.all([...Object.values(fakes), model, web].map((f) => f.close()));
  await rm(work, { recursive: true, force: true });
}
process.exit(exitCode);
