/**
 * The server-sent-events binding, with a test handler standing in for the stream operations
 * until their issues land: events arrive in order, and a client that leaves stops the work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InputOf, StreamEventOf } from '../../../shared/operations/index.ts';
import type { HandlerContext } from '../../../server/invocation/handler.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { readEvents } from '../../helpers/sse.ts';

let app: TestApp;
let key: string;
const seen = { finished: false, aborted: false, pagesSent: 0 };

async function* pages(_input: InputOf<'streamPeople'>, _ctx: HandlerContext): AsyncGenerator<StreamEventOf<'streamPeople'>> {
  try {
    for (let i = 0; i < 3; i++) {
      yield { event: 'page', data: { source: `s${i}`, results: [{ name: `p${i}`, emailStatus: 'unavailable', source: `s${i}` }] } };
      seen.pagesSent++;
    }
    yield { event: 'done', data: { total: 3, sources: [], creditsCharged: 0 } };
  } finally {
    seen.finished = true;
  }
}

async function* endless(_input: InputOf<'streamCompanies'>, ctx: HandlerContext): AsyncGenerator<StreamEventOf<'streamCompanies'>> {
  ctx.signal.addEventListener('abort', () => (seen.aborted = true));
  try {
    for (;;) {
      yield { event: 'page', data: { source: 'slow', results: [] } };
      seen.pagesSent++;
      // A source that never ends; it yields to the event loop (no timer) so the hang-up is heard.
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    seen.finished = true;
  }
}

beforeAll(async () => {
  // A client that leaves is waited for only briefly here, so its handler's stop is seen soon.
  app = await startTestApp({}, { handlers: { streamPeople: pages, streamCompanies: endless }, streams: { graceMs: 50 } });
  key = (await app.workspace('active')).apiKey;
});
afterAll(() => app.close());

describe('server-sent events', () => {
  it('sends each event as event/data lines, in order, then ends', async () => {
    Object.assign(seen, { finished: false, pagesSent: 0 });
    const res = await fetch(`${app.url}/v1/api/sourcing/people/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ jobTitle: 'CTO', limit: 3 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('ratelimit')).toBeTruthy();
    const events = await readEvents(res);
    expect(events.map((e) => e.event)).toEqual(['page', 'page', 'page', 'done']);
    expect(events[0]!.data).toEqual({ source: 's0', results: [{ name: 'p0', emailStatus: 'unavailable', source: 's0' }] });
    expect(seen.finished).toBe(true);
  });

  it('validates the body before streaming', async () => {
    const res = await app.request('POST', '/v1/api/sourcing/people/stream', { key, body: { limit: 26 } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('limit');
  });

  it('a client that disconnects stops the handler and aborts its signal', async () => {
    Object.assign(seen, { finished: false, aborted: false, pagesSent: 0 });
    const controller = new AbortController();
    const res = await fetch(`${app.url}/v1/api/companies/search/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: '{}',
      signal: controller.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/^id: (.+)$/m.test(text)) text += (await reader.read()).value ?? '';
    const firstId = /^id: (.+)$/m.exec(text)![1]!;
    controller.abort();
    // `finished` is set in the handler's `finally`: it has been closed (once the short hold of this
    // app's streams passed without the client coming back), and a closed generator yields no
    // further page, so no quiet period is needed to see that the work stopped.
    await eventually(() => expect(seen.finished).toBe(true), { message: 'the handler to be closed' });
    expect(seen.aborted).toBe(true);

    // Coming back too late gets what was held (no `done`: the stream was stopped), never a new run.
    const pagesSent = seen.pagesSent;
    const late = await fetch(`${app.url}/v1/api/companies/search/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Last-Event-ID': firstId },
      body: '{}',
    });
    await late.text();
    expect([200, 204]).toContain(late.status);
    if (late.status === 204) expect(late.headers.get('stream-status')).toBe('stopped');
    expect(seen.pagesSent).toBe(pagesSent);
  });
});
