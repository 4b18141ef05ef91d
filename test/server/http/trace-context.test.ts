/**
 * W3C trace context through the real server: a valid `traceparent` is continued (its trace id in
 * every log line of the request, beside the request id, and in the answer's `traceparent`), a
 * missing or malformed one starts a new trace (never echoed, never logged), and the calls a
 * request makes to a provider, the model, the web search and BrasilAPI carry a child of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childTraceparent, parseTraceparent, startTrace, traceFrom, traceparentOf } from '../../../server/lib/trace-context.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startFakeBrasilApi, type FakeBrasilApi } from '../../helpers/fake-brasilapi.ts';
import { articlePage, scripted, startFakeLlm, startFakeWeb, type FakeLlm, type FakeWeb } from '../../helpers/fake-llm.ts';
import { startFakeHunter, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';
import { captureLog, type CapturedLog } from '../../helpers/log-capture.ts';
import { makeCnpj } from '../../helpers/companies.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const TRACEPARENT_FORMAT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

describe('parseTraceparent', () => {
  it('reads a valid header, sampled or not', () => {
    expect(parseTraceparent(TRACEPARENT)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, sampled: true });
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-00`)?.sampled).toBe(false);
    // Unknown flag bits are not ours to keep; the sampled bit is.
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-03`)?.sampled).toBe(true);
  });

  it('a future version may append fields after the flags; version 00 may not', () => {
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01-what-the-future-holds`)).toMatchObject({ traceId: TRACE_ID });
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01`)).toMatchObject({ traceId: TRACE_ID });
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-01-extra`)).toBeNull();
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01x`)).toBeNull();
  });

  it('refuses what the specification calls invalid', () => {
    for (const header of [
      undefined,
      '',
      'garbage',
      `ff-${TRACE_ID}-${PARENT_ID}-01`, // version ff is forbidden
      `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`, // uppercase
      `00-${'0'.repeat(32)}-${PARENT_ID}-01`, // all-zero trace id
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`, // all-zero parent id
      `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`, // short trace id
      `00-${TRACE_ID}-${PARENT_ID}-1`, // short flags
      ` ${TRACEPARENT}`,
      `${TRACEPARENT}, ${TRACEPARENT}`, // two headers joined
      `0g-${TRACE_ID}-${PARENT_ID}-01`,
      `cc-${TRACE_ID}-${PARENT_ID}-01-${'x'.repeat(600)}`, // absurdly long
    ]) {
      expect(parseTraceparent(header), String(header)).toBeNull();
    }
  });

  it('a continued trace keeps its id and flag with a span of its own; children get new spans', () => {
    const trace = traceFrom(`00-${TRACE_ID}-${PARENT_ID}-00`);
    expect(trace).toMatchObject({ traceId: TRACE_ID, flags: '00' });
    expect(trace.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(trace.spanId).not.toBe(PARENT_ID);
    expect(traceparentOf(trace)).toBe(`00-${TRACE_ID}-${trace.spanId}-00`);
    const [a, b] = [childTraceparent(trace), childTraceparent(trace)];
    expect(a).toMatch(TRACEPARENT_FORMAT);
    expect(a.slice(3, 35)).toBe(TRACE_ID);
    expect(a).not.toBe(b);
  });

  it('a started trace is new each time, valid, sampled', () => {
    const [one, two] = [startTrace(), startTrace()];
    expect(one.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(one.traceId).not.toBe(two.traceId);
    expect(parseTraceparent(traceparentOf(one))).toEqual({ traceId: one.traceId, parentId: one.spanId, sampled: true });
    expect(traceFrom('nonsense').traceId).not.toBe(traceFrom('nonsense').traceId);
  });
});

describe('through the server', () => {
  let hunter: FakeProvider;
  let llm: FakeLlm;
  let web: FakeWeb;
  let brasilapi: FakeBrasilApi;
  let app: TestApp;
  let logs: CapturedLog;
  let apiKey: string;

  beforeAll(async () => {
    [hunter, llm, web, brasilapi] = await Promise.all([
      startFakeHunter(testWorld()),
      startFakeLlm(() => JSON.stringify({ value: 'ok' })),
      startFakeWeb(),
      startFakeBrasilApi(),
    ]);
    logs = captureLog('info');
    app = await startTestApp(
      {
        HUNTER_API_KEY: hunter.key,
        HUNTER_URL: hunter.url,
        LLM_BASE_URL: llm.baseUrl,
        LLM_API_KEY: llm.key,
        LLM_MODEL: 'fake-model',
        SEARXNG_URL: web.url,
        WEB_FETCH_ALLOW_LOOPBACK: 'true',
        BRASILAPI_ENABLED: 'true',
        BRASILAPI_URL: brasilapi.url,
      },
      { log: logs.log },
    );
    ({ apiKey } = await app.workspace());
    web.pages.set('/acme', { html: articlePage('Acme', ['Acme sells scheduling software to hospitals.'.repeat(4)]) });
  });

  afterAll(async () => {
    await app.close();
    await Promise.all([hunter.close(), llm.close(), web.close(), brasilapi.close()]);
  });

  /** The log lines of one request, by its id. */
  const linesOf = (requestId: string) => logs.lines().filter((line) => line.requestId === requestId);

  it('a valid traceparent is continued: the answer names a span of it, every log line of the request carries its trace id', async () => {
    const res = await app.request('GET', '/v1/api/credits', { key: apiKey, headers: { traceparent: TRACEPARENT } });
    expect(res.status).toBe(200);
    const [, traceId, spanId] = TRACEPARENT_FORMAT.exec(res.headers.get('traceparent') ?? '') ?? [];
    expect(traceId).toBe(TRACE_ID);
    expect(spanId).not.toBe(PARENT_ID);
    const lines = linesOf(res.headers.get('x-request-id')!);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.traceId).toBe(TRACE_ID);
  });

  it('also on the other lines a request logs, not only the access line', async () => {
    // Every provider failing is a 503, which the error handler logs before the access line.
    hunter.reset();
    hunter.next({ status: 503 }, 3);
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true },
      headers: { traceparent: TRACEPARENT },
    });
    expect(res.status).toBe(503);
    const lines = linesOf(res.headers.get('x-request-id')!);
    expect(lines.map((l) => l.msg)).toEqual(['request failed', 'request']);
    for (const line of lines) expect(line).toMatchObject({ traceId: TRACE_ID, requestId: res.headers.get('x-request-id') });
    hunter.reset();
  });

  it('without a traceparent a trace is started: the answer\'s header and the log lines agree', async () => {
    const res = await app.request('GET', '/v1/api/credits', { key: apiKey });
    const [, traceId] = TRACEPARENT_FORMAT.exec(res.headers.get('traceparent') ?? '') ?? [];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(TRACE_ID);
    for (const line of linesOf(res.headers.get('x-request-id')!)) expect(line.traceId).toBe(traceId);
  });

  it('a malformed traceparent is ignored: a new trace, and the header is neither echoed nor logged', async () => {
    const malformed = '00-<script>alert(1)</script>-ffffffffffffffff-01';
    const uppercase = `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`;
    for (const header of [malformed, uppercase]) {
      const res = await app.request('GET', '/v1/api/credits', { key: apiKey, headers: { traceparent: header } });
      expect(res.status).toBe(200);
      const answered = res.headers.get('traceparent') ?? '';
      expect(answered).toMatch(TRACEPARENT_FORMAT);
      expect(answered).not.toContain(TRACE_ID);
      for (const line of linesOf(res.headers.get('x-request-id')!)) expect(line.traceId).toBe(answered.slice(3, 35));
    }
    expect(logs.text()).not.toContain('<script>');
    expect(logs.text().toLowerCase()).not.toContain(TRACE_ID.toUpperCase().toLowerCase() + '-' + PARENT_ID + '-01');
  });

  it('a provider call carries a child traceparent: the same trace, a new span for each request', async () => {
    hunter.reset();
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true },
      headers: { traceparent: TRACEPARENT },
    });
    expect(res.status).toBe(200);
    expect(hunter.requests.length).toBeGreaterThan(0);
    const ours = res.headers.get('traceparent')!.slice(36, 52);
    for (const request of hunter.requests) {
      const [, traceId, spanId] = TRACEPARENT_FORMAT.exec(String(request.headers.traceparent)) ?? [];
      expect(traceId).toBe(TRACE_ID);
      expect([PARENT_ID, ours]).not.toContain(spanId);
    }
    // tracestate is the caller's vendor data: never passed on.
    expect(hunter.requests[0]!.headers.tracestate).toBeUndefined();
  });

  it('each retry is a request of its own, with a span of its own', async () => {
    hunter.reset();
    hunter.next({ status: 503 }, 1);
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      // forceRefresh: the test before paid for this answer, which the enrichment memory would give again.
      body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true, forceRefresh: true },
      headers: { traceparent: TRACEPARENT },
    });
    expect(res.status).toBe(200);
    expect(hunter.requests).toHaveLength(2);
    const [first, second] = hunter.requests.map((r) => String(r.headers.traceparent));
    expect(first!.slice(0, 36)).toBe(second!.slice(0, 36));
    expect(first).not.toBe(second);
  });

  it('a model call and a web search carry it too', async () => {
    llm.reset();
    web.searchHeaders.length = 0;
    web.results = [{ path: '/acme', title: 'Acme', snippet: 'Acme sells to hospitals' }];
    llm.respond = () => JSON.stringify({ answer: 'Hospitals.', citations: [1] });
    const res = await app.request('POST', '/v1/api/research', { key: apiKey, body: { prompt: 'Who buys?', company: 'Acme', webSearch: true }, headers: { traceparent: TRACEPARENT } });
    expect(res.status).toBe(200);
    expect(llm.requests).toHaveLength(1);
    expect(TRACEPARENT_FORMAT.exec(String(llm.requests[0]!.headers.traceparent))?.[1]).toBe(TRACE_ID);
    expect(web.searchHeaders).toHaveLength(1);
    expect(TRACEPARENT_FORMAT.exec(String(web.searchHeaders[0]!.traceparent))?.[1]).toBe(TRACE_ID);
  });

  it('the agent\'s model calls and its tool calls stay in the request\'s trace', async () => {
    llm.reset();
    llm.respond = scripted([{ calls: [{ name: 'enrich', arguments: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true, forceRefresh: true } }] }, { text: 'Done.' }]);
    hunter.reset();
    const res = await app.request('POST', '/v1/api/agent/chat', { key: apiKey, body: { message: 'Find Ana' }, headers: { traceparent: TRACEPARENT, Accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(llm.requests).toHaveLength(2);
    for (const request of [...llm.requests, ...hunter.requests]) expect(String(request.headers.traceparent).slice(3, 35)).toBe(TRACE_ID);
    expect(hunter.requests.length).toBeGreaterThan(0);
  });

  it('a BrasilAPI lookup carries it', async () => {
    brasilapi.requests.length = 0;
    const cnpj = makeCnpj('44555666');
    const res = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body: { cnpjs: [cnpj] }, headers: { traceparent: TRACEPARENT } });
    expect(res.status).toBe(200);
    expect(brasilapi.requests.length).toBeGreaterThan(0);
    expect(String(brasilapi.requests[0]!.headers.traceparent).slice(3, 35)).toBe(TRACE_ID);
  });

  it('an MCP tool call is in the trace of its POST', async () => {
    const res = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', traceparent: TRACEPARENT },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_credits', arguments: {} } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('traceparent')?.slice(3, 35)).toBe(TRACE_ID);
    for (const line of linesOf(res.headers.get('x-request-id')!)) expect(line.traceId).toBe(TRACE_ID);
  });
});
