/**
 * A loopback OpenAI-compatible model (`POST /v1/chat/completions`, Bearer key, OpenAI's error
 * bodies and rate-limit 429 with `Retry-After`), answering through a scripted `respond`. Its
 * default behaves like a naive model: it obeys "ignore previous instructions" when that text
 * reaches it outside the data tags, by repeating its system prompt, so a test can prove that
 * page and cell text only ever reaches it as data. Also a loopback search engine with pages.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFake, type FakeLimits, type FakeProvider, type Recorded, type Reply } from './fake-providers.ts';

export interface ChatBody {
  model: string;
  messages: Array<{
    role: string;
    content: string;
    tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  max_tokens?: number;
  response_format?: { type: string };
  tools?: Array<{ type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
  tool_choice?: string;
  stream?: boolean;
}

export type Responder = (body: ChatBody) => string | Reply;

export interface FakeLlm extends FakeProvider {
  /** The base URL to give as LLM_BASE_URL (ends in /v1). */
  baseUrl: string;
  respond: Responder;
}

const DATA = /<(data-[0-9a-f]+)[^>]*>([\s\S]*?)<\/\1>/g;

/** The user message's data blocks, parsed, by label. */
export function dataBlocks(body: ChatBody): Record<string, unknown> {
  const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const blocks: Record<string, unknown> = {};
  for (const match of user.matchAll(/<(data-[0-9a-f]+) label="([^"]+)">\n([\s\S]*?)\n<\/\1>/g)) blocks[match[2]!] = JSON.parse(match[3]!);
  return blocks;
}

/** What the model would read as instructions: everything outside the data tags. */
export function outsideData(body: ChatBody): string {
  return body.messages.map((m) => m.content.replace(DATA, '')).join('\n');
}

/** The instruction line of an AI-column request. */
export const instructionOf = (body: ChatBody) => /Instruction: (.*)/.exec(body.messages.find((m) => m.role === 'user')!.content)?.[1] ?? '';

/** A naive model: injected instructions outside the data tags make it leak its system prompt. */
export const naiveResponder =
  (answer: Responder): Responder =>
  (body) =>
    /ignore (all )?previous instructions/i.test(outsideData(body)) ? body.messages[0]!.content : answer(body);

/** One turn of a scripted model: text, tool calls (arguments as an object, or a raw string to send as is), or both. */
export interface Turn {
  text?: string;
  calls?: Array<{ name: string; arguments: unknown; id?: string }>;
}

let callCounter = 0;

/**
 * A turn as the chat completions API answers it: one completion, or, when the request asked for
 * `stream: true`, chunks as OpenAI sends them (the role first, text in small deltas, each tool
 * call opened with its index, id and name and its arguments in pieces, the finish reason, a
 * usage chunk, then `[DONE]`).
 */
export function turnReply(body: ChatBody, turn: Turn): Reply {
  const calls = (turn.calls ?? []).map((c) => ({
    id: c.id ?? `call_${++callCounter}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
  const finish = calls.length ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 };
  const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
  const created = Math.floor(Date.now() / 1000);
  if (!body.stream) {
    return {
      status: 200,
      body: {
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: turn.text ?? null, ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason: finish }],
        usage,
      },
    };
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: body.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const events: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of (turn.text ?? '').match(/[\s\S]{1,8}/g) ?? []) events.push(chunk({ content: piece }));
  calls.forEach((call, index) => {
    events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    const args = call.function.arguments;
    const half = Math.ceil(args.length / 2);
    for (const part of [args.slice(0, half), args.slice(half)]) if (part) events.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  });
  events.push(chunk({}, finish));
  events.push({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage });
  return { status: 200, body: undefined, events };
}

/** A model that plays `turns` in order, one per request (the last one again once they run out). */
export function scripted(turns: Turn[]): Responder {
  let next = 0;
  return (body) => turnReply(body, turns[Math.min(next++, turns.length - 1)]!);
}

export function completion(content: string, model = 'fake-model'): Reply {
  return {
    status: 200,
    body: {
      id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 120, completion_tokens: 12, total_tokens: 132 },
    },
  };
}

const openAiError = (status: number, type: string, message: string, code: string | null = null): Reply => ({
  status,
  body: { error: { message, type, param: null, code } },
});

export async function startFakeLlm(respond: Responder, limits: FakeLimits = {}): Promise<FakeLlm> {
  const holder: { respond: Responder } = { respond };
  const fake = await startFake({
    key: 'sk-test-llm',
    limits,
    authorized: (req, known) => known(req.headers.authorization?.replace(/^Bearer /, '')),
    unauthorized: openAiError(401, 'invalid_request_error', 'Incorrect API key provided.', 'invalid_api_key'),
    tooMany: (retryAfter) => ({
      ...openAiError(429, 'requests', 'Rate limit reached for requests', 'rate_limit_exceeded'),
      headers: { 'Retry-After': retryAfter },
    }),
    serverError: (status) => openAiError(status, 'server_error', 'The server had an error while processing your request.'),
    route(req: Recorded): Reply {
      if (req.method !== 'POST' || req.path !== '/v1/chat/completions') return openAiError(404, 'invalid_request_error', 'Unknown route');
      const body = req.body as ChatBody;
      const answer = holder.respond(body);
      return typeof answer === 'string' ? completion(answer, body.model) : answer;
    },
  });
  const llm = fake as FakeLlm;
  llm.baseUrl = `${fake.url}/v1`;
  Object.defineProperty(llm, 'respond', { get: () => holder.respond, set: (value: Responder) => void (holder.respond = value) });
  return llm;
}

export interface FakeWeb {
  url: string;
  /** Pages by path, served as HTML (or with the given type). */
  pages: Map<string, { html: string; type?: string; status?: number; location?: string }>;
  /** Search results for any query: paths on this server, or full URLs. */
  results: Array<{ path: string; title: string; snippet: string }>;
  searches: string[];
  /** The headers of each search request, in order (what a search engine would see: a `traceparent`). */
  searchHeaders: IncomingHttpHeaders[];
  pageRequests: string[];
  close(): Promise<void>;
}

/** A SearXNG-compatible JSON search (`/search?format=json`) whose results point at its own pages. */
export async function startFakeWeb(): Promise<FakeWeb> {
  const pages: FakeWeb['pages'] = new Map();
  const searches: string[] = [];
  const searchHeaders: IncomingHttpHeaders[] = [];
  const pageRequests: string[] = [];
  const web = { results: [] as FakeWeb['results'] };
  const server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === '/search') {
      searches.push(url.searchParams.get('q') ?? '');
      searchHeaders.push(req.headers);
      if (url.searchParams.get('format') !== 'json') {
        res.writeHead(403).end('format not allowed');
        return;
      }
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          query: url.searchParams.get('q'),
          number_of_results: web.results.length,
          results: web.results.map((r) => ({ url: /^https?:/.test(r.path) ? r.path : base + r.path, title: r.title, content: r.snippet, engine: 'fake' })),
        }),
      );
      return;
    }
    pageRequests.push(url.pathname);
    const page = pages.get(url.pathname);
    if (!page) {
      res.writeHead(404, { 'Content-Type': 'text/html' }).end('<h1>Not found</h1>');
      return;
    }
    res.writeHead(page.status ?? 200, { 'Content-Type': page.type ?? 'text/html; charset=utf-8', ...(page.location ? { Location: page.location } : {}) });
    res.end(page.html);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pages,
    get results() {
      return web.results;
    },
    set results(value) {
      web.results = value;
    },
    searches,
    searchHeaders,
    pageRequests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  } as FakeWeb;
}

/** An article page, long enough for Readability to keep it. */
export function articlePage(title: string, paragraphs: string[]): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><nav>Home · About · Contact</nav><article><h1>${title}</h1>${paragraphs
    .map((p) => `<p>${p}</p>`)
    .join('')}</article><footer>© 2026</footer></body></html>`;
}
