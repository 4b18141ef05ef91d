/**
 * `GET /metrics` through the real server: the token rules, and each documented series after the
 * operations that feed it (a plain request, a charged call, a provider call to the fake Hunter, a
 * model call to the fake model, a web search, an MCP and an agent tool call, a held event stream,
 * a store write, a registry import), with labels that never carry a workspace, a key or a path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEventOf } from '../../../shared/operations/index.ts';
import { loadConfig } from '../../../server/config.ts';
import { registry } from '../../../server/lib/metrics.ts';
import { importRelease } from '../../../server/receita/import/importer.ts';
import { generateRelease } from '../../../server/seed/release-generator.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { startFakeHunter, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';
import { articlePage, scripted, startFakeLlm, startFakeWeb, type FakeLlm, type FakeWeb } from '../../helpers/fake-llm.ts';
import { latch } from '../../helpers/latch.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

let hunter: FakeProvider;
let llm: FakeLlm;
let web: FakeWeb;
let app: TestApp;
/** Holds the stream handler's second event until the test opens it. */
const streamHeld = latch();

beforeAll(async () => {
  [hunter, llm, web] = await Promise.all([startFakeHunter(testWorld()), startFakeLlm(() => JSON.stringify({ value: 'ok' })), startFakeWeb()]);
  app = await startTestApp(
    {
      METRICS_TOKEN: TOKEN,
      HUNTER_API_KEY: hunter.key,
      HUNTER_URL: hunter.url,
      LLM_BASE_URL: llm.baseUrl,
      LLM_API_KEY: llm.key,
      LLM_MODEL: 'fake-model',
      SEARXNG_URL: web.url,
      WEB_FETCH_ALLOW_LOOPBACK: 'true',
      RATE_LIMIT_PER_MINUTE: '10000',
    },
    {
      handlers: {
        // A stream that stays open until the test says: its gauge is read while it is.
        streamCompanies: () =>
          (async function* (): AsyncGenerator<StreamEventOf<'streamCompanies'>> {
            yield { event: 'page', data: { source: 'receita_federal', results: [] } };
            await streamHeld.promise;
            yield { event: 'done', data: { total: 0, sources: [], activities: [], nameTerms: [], creditsCharged: 0 } };
          })(),
      },
    },
  );
  web.pages.set('/acme', { html: articlePage('Acme', ['Acme sells scheduling software to hospitals.'.repeat(4)]) });
});

afterAll(async () => {
  streamHeld.open();
  await app.close();
  await Promise.all([hunter.close(), llm.close(), web.close()]);
});

const scrape = async (): Promise<string> => {
  const res = await fetch(`${app.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
};

/** A sample's value by its name and exact labels (in the order prom-client writes them); undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',');
  const prefix = wanted ? `${name}{${wanted}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

/** Like `sample`, for a series whose labels include more than `labels` (a histogram bucket's `le`). */
const has = (text: string, name: string, labels: Record<string, string>) =>
  text.split('\n').some((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));

describe('the token rules', () => {
  it('without Authorization: 401 with a Bearer challenge, and no metrics', async () => {
    const res = await app.request('GET', '/metrics');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(res.body.error).toBe('unauthorized');
    expect(JSON.stringify(res.body)).not.toContain('prospecta_');
  });

  it('a wrong token, another scheme, or the token with a suffix: 401', async () => {
    for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, 'Bearer ', TOKEN]) {
      const res = await app.request('GET', '/metrics', { headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(401);
    }
  });

  it('an API key is no metrics token', async () => {
    const { apiKey } = await app.workspace();
    expect((await app.request('GET', '/metrics', { key: apiKey })).status).toBe(401);
  });

  it('the right token: 200, Prometheus text with the default process metrics', async () => {
    const res = await fetch(`${app.url}/metrics`, { headers: { Authorization: `bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const text = await res.text();
    expect(text).toContain('# TYPE prospecta_http_requests_total counter');
    expect(text).toContain('# TYPE prospecta_http_request_duration_seconds histogram');
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('only GET: another method is 405 with Allow', async () => {
    const res = await app.request('POST', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('METRICS_TOKEN unset: /metrics is 404, even with a token, saying how to turn it on', async () => {
    const bare = await startTestApp();
    try {
      const off = await bare.request('GET', '/metrics');
      expect(off.status).toBe(404);
      expect(off.body).toEqual({ error: 'not_found', message: expect.stringContaining('set METRICS_TOKEN') });
      expect((await bare.request('GET', '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    } finally {
      await bare.close();
    }
  });

  it('a METRICS_TOKEN too short to be a secret stops start-up', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be 16 to 512 visible ASCII characters/);
    expect(() => loadConfig({ METRICS_TOKEN: 'sixteen chars ok' })).toThrow(/without spaces/);
  });
});

describe('the series, after the operations that feed them', () => {
  it('HTTP requests by operation and status, timed by operation; unknown paths as unmatched', async () => {
    const { apiKey } = await app.workspace();
    const before = await scrape();
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(200);
    expect((await app.request('GET', '/api/credits', { key: apiKey })).status).toBe(200);
    expect((await app.request('GET', '/v1/api/credits')).status).toBe(401);
    expect((await app.request('GET', '/v1/api/no-such-thing')).status).toBe(404);
    expect((await app.request('GET', '/openapi.json')).status).toBe(200);
    // The API reference and the dashboard's pages are served outside the registry's routes (a page's status depends on the build).
    const docs = await fetch(`${app.url}/docs`);
    await docs.arrayBuffer();
    const login = await fetch(`${app.url}/dashboard/login`);
    await login.arrayBuffer();
    const after = await scrape();
    const delta = (labels: Record<string, string>) =>
      (sample(after, 'prospecta_http_requests_total', labels) ?? 0) - (sample(before, 'prospecta_http_requests_total', labels) ?? 0);
    expect(delta({ operation: 'getCredits', status: '200' })).toBe(2);
    expect(delta({ operation: 'getCredits', status: '401' })).toBe(1);
    expect(delta({ operation: 'unmatched', status: '404' })).toBe(1);
    expect(delta({ operation: 'openapi', status: '200' })).toBe(1);
    expect(delta({ operation: 'docs', status: String(docs.status) })).toBe(1);
    expect(delta({ operation: 'dashboard', status: String(login.status) })).toBe(1);
    // The scrape before this one counted itself.
    expect(delta({ operation: 'metrics', status: '200' })).toBe(1);
    const count = (text: string) => sample(text, 'prospecta_http_request_duration_seconds_count', { operation: 'getCredits' }) ?? 0;
    expect(count(after) - count(before)).toBe(3);
    expect(has(after, 'prospecta_http_request_duration_seconds_bucket', { operation: 'getCredits', le: '+Inf' })).toBe(true);
    expect(sample(after, 'prospecta_operation_calls_total', { operation: 'getCredits', binding: 'http', outcome: 'ok' })).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'prospecta_operation_calls_total', { operation: 'getCredits', binding: 'http', outcome: 'unauthorized' })).toBeGreaterThanOrEqual(1);
  });

  it('a charged provider call: credits by operation, Hunter\'s attempts, their time, its queue and breaker', async () => {
    const { apiKey } = await app.workspace();
    const before = await scrape();
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.creditsCharged).toBeGreaterThan(0);
    expect(hunter.requests.length).toBeGreaterThan(0);
    const after = await scrape();
    const credits = (text: string) => sample(text, 'prospecta_credits_charged_total', { operation: 'enrich' }) ?? 0;
    expect(credits(after) - credits(before)).toBe(res.body.creditsCharged);
    const ok = (text: string) => sample(text, 'prospecta_provider_calls_total', { provider: 'hunter', outcome: 'ok' }) ?? 0;
    expect(ok(after) - ok(before)).toBe(hunter.requests.length);
    expect(sample(after, 'prospecta_provider_call_duration_seconds_count', { provider: 'hunter' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'prospecta_provider_queue_depth', { provider: 'hunter' })).toBe(0);
    expect(sample(after, 'prospecta_provider_calls_in_flight', { provider: 'hunter' })).toBe(0);
    expect(sample(after, 'prospecta_provider_circuit_open', { provider: 'hunter' })).toBe(0);
  });

  it('a provider failing: its attempts by outcome, and the circuit open once it keeps failing', async () => {
    const { apiKey } = await app.workspace();
    const before = await scrape();
    hunter.reset();
    hunter.next({ status: 503 }, 12);
    for (let i = 0; i < 3; i++) {
      await app.request('POST', '/v1/api/enrich', { key: apiKey, body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true } });
    }
    const after = await scrape();
    const failed = (text: string) => sample(text, 'prospecta_provider_calls_total', { provider: 'hunter', outcome: 'failed' }) ?? 0;
    expect(failed(after) - failed(before)).toBe(hunter.requests.length);
    expect(sample(after, 'prospecta_provider_circuit_open', { provider: 'hunter' })).toBe(1);
    expect(sample(after, 'prospecta_provider_calls_total', { provider: 'hunter', outcome: 'skipped' })).toBeGreaterThanOrEqual(1);
    hunter.reset();
  });

  it('a model call and a web search: tokens by kind, the model\'s and the engine\'s attempts', async () => {
    const { apiKey } = await app.workspace();
    const before = await scrape();
    const res = await app.request('POST', '/v1/api/ai-column', { key: apiKey, body: { instruction: 'Say ok', Company: `Acme ${Math.random()}` } });
    expect(res.status).toBe(200);
    web.results = [{ path: '/acme', title: 'Acme', snippet: 'Acme sells to hospitals' }];
    llm.respond = () => JSON.stringify({ answer: 'They sell to hospitals.', citations: [1] });
    const found = await app.request('POST', '/v1/api/research', { key: apiKey, body: { prompt: 'Who buys?', company: 'Acme', webSearch: true } });
    expect(found.status).toBe(200);
    const after = await scrape();
    const tokens = (text: string, kind: string) => sample(text, 'prospecta_llm_tokens_total', { kind }) ?? 0;
    // The fake model reports 120 prompt and 12 completion tokens per answer.
    expect(tokens(after, 'prompt') - tokens(before, 'prompt')).toBe(240);
    expect(tokens(after, 'completion') - tokens(before, 'completion')).toBe(24);
    const calls = (text: string, provider: string) => sample(text, 'prospecta_provider_calls_total', { provider, outcome: 'ok' }) ?? 0;
    expect(calls(after, 'llm') - calls(before, 'llm')).toBe(2);
    expect(calls(after, 'searxng') - calls(before, 'searxng')).toBe(1);
    expect(sample(after, 'prospecta_provider_call_duration_seconds_count', { provider: 'llm' })).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'prospecta_credits_charged_total', { operation: 'aiColumn' })).toBeGreaterThanOrEqual(1);
  });

  it('MCP and agent tool calls count under their operation ids, with their binding', async () => {
    const { apiKey } = await app.workspace();
    const before = await scrape();
    const mcp = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_credits', arguments: {} } }),
    });
    expect(mcp.status).toBe(200);
    expect(((await mcp.json()) as { result?: { isError?: boolean } }).result?.isError).toBeFalsy();
    llm.respond = scripted([{ calls: [{ name: 'get_credits', arguments: {} }] }, { text: 'You have credits.' }]);
    const chat = await app.request('POST', '/v1/api/agent/chat', { key: apiKey, body: { message: 'How many credits?' }, headers: { Accept: 'application/json' } });
    expect(chat.status).toBe(200);
    const after = await scrape();
    const calls = (text: string, binding: string) => sample(text, 'prospecta_operation_calls_total', { operation: 'getCredits', binding, outcome: 'ok' }) ?? 0;
    expect(calls(after, 'mcp') - calls(before, 'mcp')).toBe(1);
    expect(calls(after, 'agent') - calls(before, 'agent')).toBe(1);
    const http = (text: string, operation: string) => sample(text, 'prospecta_http_requests_total', { operation, status: '200' }) ?? 0;
    expect(http(after, 'mcp') - http(before, 'mcp')).toBe(1);
    expect(http(after, 'agentChat') - http(before, 'agentChat')).toBe(1);
  });

  it('a call whose caller leaves counts as aborted, not as an error of ours', async () => {
    const { apiKey } = await app.workspace();
    const before = await scrape();
    const held = latch();
    llm.reset();
    llm.respond = () => JSON.stringify({ value: 'ok' });
    llm.next({ until: held.promise });
    const controller = new AbortController();
    const leaving = fetch(`${app.url}/v1/api/ai-column`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ instruction: 'Say ok', Company: `Gone ${Math.random()}` }),
      signal: controller.signal,
    }).catch(() => null);
    await eventually(() => expect(llm.requests).toHaveLength(1), { message: 'the model to be asked' });
    controller.abort();
    await leaving;
    const aborted = (text: string) => sample(text, 'prospecta_operation_calls_total', { operation: 'aiColumn', binding: 'http', outcome: 'aborted' }) ?? 0;
    await eventually(async () => expect(aborted(await scrape()) - aborted(before)).toBe(1), { message: 'the call to be counted aborted' });
    held.open();
    expect(sample(await scrape(), 'prospecta_operation_calls_total', { operation: 'aiColumn', binding: 'http', outcome: 'internal_error' })).toBeUndefined();
  });

  it('an event stream is counted while it is open', async () => {
    const { apiKey } = await app.workspace();
    const open = (text: string) => sample(text, 'prospecta_sse_streams_open', { operation: 'streamCompanies' }) ?? 0;
    const streaming = app.request('POST', '/v1/api/companies/search/stream', { key: apiKey, body: { state: 'SP' } });
    await eventually(async () => expect(open(await scrape())).toBe(1), { message: 'the stream to be counted open' });
    streamHeld.open();
    expect((await streaming).status).toBe(200);
    await eventually(async () => expect(open(await scrape())).toBe(0), { message: 'the stream to be counted closed' });
  });

  it('the embedded store: each write transaction timed, the database\'s size', async () => {
    const before = await scrape();
    await app.workspace();
    const after = await scrape();
    const commits = (text: string) => sample(text, 'prospecta_store_write_seconds_count') ?? 0;
    expect(commits(after)).toBeGreaterThan(commits(before));
    expect(sample(after, 'prospecta_store_database_bytes')).toBeGreaterThan(0);
  });

  it('a registry import: running while it runs, then its progress, rows and establishments', async () => {
    const dir = await tempDir('metrics-release');
    await generateRelease({ dir, establishments: 300 });
    const before = await scrape();
    // Read from the progress callback (its value copied at once, before the import goes on): the gauge while the import runs.
    let during: Promise<number | undefined> | undefined;
    const summary = await importRelease(app.services.store, {
      dir,
      release: '2026-10',
      onProgress: () => void (during ??= registry.getSingleMetric('prospecta_import_running')!.get().then((m) => m.values[0]?.value)),
    });
    expect(await during).toBe(1);
    const after = await scrape();
    const established = (text: string) => sample(text, 'prospecta_import_establishments_total') ?? 0;
    expect(established(after) - established(before)).toBe(summary.establishments);
    expect(summary.establishments).toBeGreaterThan(0);
    expect(sample(after, 'prospecta_import_rows_total')).toBeGreaterThan(0);
    expect(sample(after, 'prospecta_import_progress_ratio')).toBe(1);
    expect(sample(after, 'prospecta_import_running')).toBe(0);
  });

  it('no label carries a workspace id, a key, a path or a CNPJ', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    await app.request('GET', `/v1/api/prospecting/prospects/${workspaceId}`, { key: apiKey });
    await app.request('GET', `/v1/api/keys/${apiKey}`, { key: apiKey });
    const text = await scrape();
    expect(text).not.toContain(workspaceId);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(hunter.key);
    expect(text).not.toContain('/api/');
    for (const line of text.split('\n').filter((l) => l.startsWith('prospecta_'))) {
      for (const [, value] of line.matchAll(/="([^"]*)"/g)) expect(value, line).toMatch(/^[A-Za-z_+.0-9e-]+$/);
    }
  });
});
