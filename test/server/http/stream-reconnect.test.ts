/**
 * Streams a standard SSE client can consume without paying again (issue 21, item 1): every event
 * has an id, the stream sends a `retry:` hint, a reconnection naming a finished stream is 204 and
 * runs nothing, and one naming an unfinished stream resumes where its client left it.
 */
import { EventSource } from 'eventsource';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InputOf, StreamEventOf } from '../../../shared/operations/index.ts';
import type { HandlerContext } from '../../../server/invocation/handler.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { latch, type Latch } from '../../helpers/latch.ts';

let app: TestApp;
const software = { code: '6201501', description: 'Desenvolvimento de programas de computador sob encomenda' };
const STREAM_COMPANIES = '/v1/api/companies/search/stream';
const STREAM_PEOPLE = '/v1/api/sourcing/people/stream';

/** The people stream is a test handler: page 1, then page 2 once the test opens `gate`, then done. */
const people = { runs: 0, gate: latch() as Latch, closed: false };
async function* gatedPages(_input: InputOf<'streamPeople'>, ctx: HandlerContext): AsyncGenerator<StreamEventOf<'streamPeople'>> {
  people.runs++;
  try {
    const person = (name: string) => ({ name, emailStatus: 'unavailable' as const, source: 'lists' });
    await ctx.charge(1, 'page 1');
    yield { event: 'page', data: { source: 'lists', results: [person('Ana')] } };
    await people.gate.promise;
    await ctx.charge(1, 'page 2');
    yield { event: 'page', data: { source: 'apollo', results: [person('Bruno')] } };
    yield { event: 'done', data: { total: 2, sources: [], creditsCharged: ctx.creditsCharged } };
  } finally {
    people.closed = true;
  }
}

beforeAll(async () => {
  app = await startTestApp({}, { handlers: { streamPeople: gatedPages } });
  await app.services.store.collection<{ _id: string; description: string }>('cnaes').insertOne({ _id: software.code, description: software.description });
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const root of ['11222333', '44555666']) await companies.insertOne(companyDoc(makeCnpj(root), { mainActivity: software }));
});
afterAll(() => app.close());

interface Raw {
  status: number;
  headers: Headers;
  text: string;
  messages: EventSourceMessage[];
}

async function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await fetch(app.url + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, messages: parse(text) };
}

function parse(text: string): EventSourceMessage[] {
  const messages: EventSourceMessage[] = [];
  createParser({ onEvent: (message) => messages.push(message) }).feed(text);
  return messages;
}

async function ledgerOf(key: string): Promise<Array<{ amount: number; operation: string }>> {
  const credits = await app.request('GET', '/v1/api/credits', { key });
  return credits.body.movements.filter((m: { amount: number }) => m.amount < 0);
}

describe('stream event ids and the retry hint', () => {
  it('opens with a retry hint and gives every event an id: the stream id and its sequence', async () => {
    const { apiKey } = await app.workspace();
    const res = await post(STREAM_COMPANIES, apiKey, { cnaes: [software.code] });
    expect(res.status).toBe(200);
    expect(res.text.startsWith('retry: ')).toBe(true);
    expect(res.messages.map((m) => m.event)).toEqual(['page', 'done']);
    const ids = res.messages.map((m) => m.id);
    const streamId = ids[0]!.split(':')[0];
    expect(streamId).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids).toEqual([`${streamId}:1`, `${streamId}:2`]);
  });
});

describe('a standard EventSource client', () => {
  it('reconnects once after the stream ends, gets 204 and stops: one search, one charge', async () => {
    const { apiKey } = await app.workspace();
    const seen: Array<{ lastEventId: string | null; status: number; streamStatus: string | null }> = [];
    const received: Array<{ type: string; lastEventId: string }> = [];
    // eventsource v3 sends GET; its `fetch` option lets the same client POST the search.
    const es = new EventSource(app.url + STREAM_COMPANIES, {
      fetch: async (url, init) => {
        const headers: Record<string, string> = { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
        const res = await fetch(url, { ...init, method: 'POST', headers, body: JSON.stringify({ cnaes: [software.code] }) });
        seen.push({ lastEventId: headers['Last-Event-ID'] ?? null, status: res.status, streamStatus: res.headers.get('stream-status') });
        return res;
      },
    });
    for (const type of ['page', 'done']) es.addEventListener(type, (e) => received.push({ type, lastEventId: e.lastEventId }));
    try {
      // Without the 204 it would reconnect every retry interval, searching and charging each time.
      await eventually(() => expect(es.readyState).toBe(EventSource.CLOSED), { message: 'the client to stop reconnecting' });
    } finally {
      es.close();
    }
    expect(received.map((e) => e.type)).toEqual(['page', 'done']);
    expect(seen).toEqual([
      { lastEventId: null, status: 200, streamStatus: null },
      { lastEventId: received[1]!.lastEventId, status: 204, streamStatus: 'finished' },
    ]);
    expect(await ledgerOf(apiKey)).toEqual([expect.objectContaining({ amount: -2, operation: 'streamCompanies' })]);
  });
});

describe('a reconnection', () => {
  it('resumes an unfinished stream from the next event, without running it again', async () => {
    const { apiKey } = await app.workspace();
    Object.assign(people, { runs: 0, gate: latch(), closed: false });
    const controller = new AbortController();
    const res = await fetch(app.url + STREAM_PEOPLE, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: '{}',
      signal: controller.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (parse(text).length === 0) text += (await reader.read()).value ?? '';
    const first = parse(text)[0]!;
    controller.abort();
    // The client is gone: the handler waits, paused, for it to come back (and charges nothing more).
    people.gate.open();

    const again = await post(STREAM_PEOPLE, apiKey, {}, { 'Last-Event-ID': first.id! });
    expect(again.status).toBe(200);
    const streamId = first.id!.split(':')[0];
    expect(again.messages.map((m) => [m.event, m.id])).toEqual([
      ['page', `${streamId}:2`],
      ['done', `${streamId}:3`],
    ]);
    expect(JSON.parse(again.messages[0]!.data).results[0].name).toBe('Bruno');
    expect(people.runs).toBe(1);
    expect(people.closed).toBe(true);

    const last = await post(STREAM_PEOPLE, apiKey, {}, { 'Last-Event-ID': `${streamId}:3` });
    expect(last.status).toBe(204);
    expect(last.headers.get('stream-status')).toBe('finished');
    expect(people.runs).toBe(1);
    expect((await ledgerOf(apiKey)).map((m) => m.amount)).toEqual([-1, -1]);
  });

  it('is scoped to its workspace: another workspace naming the stream gets 204 unknown and runs nothing', async () => {
    const owner = await app.workspace();
    const other = await app.workspace();
    const first = await post(STREAM_COMPANIES, owner.apiKey, { cnaes: [software.code] });
    const id = first.messages[0]!.id!;
    const foreign = await post(STREAM_COMPANIES, other.apiKey, { cnaes: [software.code] }, { 'Last-Event-ID': id });
    expect(foreign.status).toBe(204);
    expect(foreign.headers.get('stream-status')).toBe('unknown');
    expect(await ledgerOf(other.apiKey)).toEqual([]);
    // Its owner, who missed the `done`, gets it.
    const mine = await post(STREAM_COMPANIES, owner.apiKey, {}, { 'Last-Event-ID': id });
    expect(mine.messages.map((m) => m.event)).toEqual(['done']);
    expect(await ledgerOf(owner.apiKey)).toHaveLength(1);
  });

  it('naming a stream not held here (another instance, forgotten, malformed) is 204 unknown, never a new search', async () => {
    const { apiKey } = await app.workspace();
    for (const id of ['0b7c1e38-58a4-4bd3-9d63-6f3b1b0f3b8e:4', 'not-an-id']) {
      const res = await post(STREAM_COMPANIES, apiKey, { cnaes: [software.code] }, { 'Last-Event-ID': id });
      expect(res.status).toBe(204);
      expect(res.headers.get('stream-status')).toBe('unknown');
    }
    expect(await ledgerOf(apiKey)).toEqual([]);
  });

  it('still needs the credential and the scope', async () => {
    const res = await post(STREAM_COMPANIES, 'service_live_wrong', {}, { 'Last-Event-ID': 'x' });
    expect(res.status).toBe(401);
  });

  it('is still a request the operation takes: an invalid body or Idempotency-Key is 400, as on a first call (issue 43)', async () => {
    const { apiKey } = await app.workspace();
    const body = await post(STREAM_COMPANIES, apiKey, { limit: 'many' }, { 'Last-Event-ID': 'x' });
    expect(body.status).toBe(400);
    expect(JSON.parse(body.text).message).toContain('limit');
    const key = await post(STREAM_COMPANIES, apiKey, {}, { 'Last-Event-ID': 'x', 'Idempotency-Key': 'with space' });
    expect(key.status).toBe(400);
    expect(JSON.parse(key.text).message).toContain('Idempotency-Key');
  });
});
