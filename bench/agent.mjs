// npm run bench:agent — what the built-in agent adds to the time of the model and the tools it
// calls. A loopback OpenAI-compatible model (the tests' fake) answers every call in 300 ms; each
// chat is three model turns: a sentence and a get_credits call, then a lookup_cnpj_batch of one
// demo-registry CNPJ, then the answer. The built server runs as its own process on the demo
// store; 50 chats are streamed over HTTP (SSE) from a few clients at once. Per chat: time to the
// first `text` event, total time, and the overhead, i.e. the total less the model's time (measured
// by the fake, from a request's arrival to its answer written) and the tools' time (from each
// `tool_call` event to its `tool_result`, as the client receives them).
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { importTs, pct, startInstance } from './lib.mjs';

const CHATS = 50;
const WARMUP = 5;
const CLIENTS = Number(process.env.CLIENTS ?? 5);
const MODEL_MS = 300;
const TARGET = 0.1;
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-agent-'));

const { startFakeLlm, turnReply } = await importTs('test/helpers/fake-llm.ts', work);

// The turn follows from how many tool results the model has been given, so chats run at once
// without sharing a script; the CNPJ to look up rides in the user's message.
let cnpj = '';
const model = await startFakeLlm((body) => {
  const results = body.messages.filter((m) => m.role === 'tool').length;
  if (results === 0) return turnReply(body, { text: 'Let me check your balance first.', calls: [{ name: 'get_credits', arguments: {} }] });
  if (results === 1) return turnReply(body, { calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [cnpj] } }] });
  return turnReply(body, { text: 'Your balance is fine, and the company is active in the registry.' });
});
model.latencyMs = MODEL_MS;

/** One chat over SSE: each event with the time (ms since the request) it reached the client. */
async function chat(url, apiKey, message) {
  const started = performance.now();
  const res = await fetch(`${url}/v1/api/agent/chat`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ message }),
  });
  if (res.status !== 200) throw new Error(`chat: ${res.status} ${await res.text()}`);
  const events = [];
  const stream = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const m of stream) events.push({ event: m.event, data: JSON.parse(m.data), ms: performance.now() - started });
  return { events, totalMs: performance.now() - started };
}

let server;
try {
  server = await startInstance(
    path.join(work, 'data'),
    { LLM_BASE_URL: model.baseUrl, LLM_API_KEY: model.key, LLM_MODEL: 'fake-model', LLM_MAX_CONCURRENT: '100' },
    { demo: true },
  );
  const { url, apiKey, call } = server;
  cnpj = (await call('POST', '/companies/search', { state: 'SP', limit: 1 })).results[0].cnpj;

  for (let i = 0; i < WARMUP; i++) await chat(url, apiKey, `Warm-up ${i}: my balance, and is ${cnpj} active?`);
  model.reset();

  const samples = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < CHATS) {
        const id = next++;
        const message = `Chat ${id}: my balance, and is ${cnpj} active?`;
        const { events, totalMs } = await chat(url, apiKey, message);
        const names = events.map((e) => e.event);
        if (names.includes('error') || names.at(-1) !== 'done') throw new Error(`chat ${id} ended badly: ${JSON.stringify(events.at(-2))}`);
        const calls = new Map(events.filter((e) => e.event === 'tool_call').map((e) => [e.data.callId, e.ms]));
        const results = events.filter((e) => e.event === 'tool_result');
        if (results.length !== 2 || results.some((r) => r.data.isError)) throw new Error(`chat ${id}: tool calls failed: ${JSON.stringify(results.map((r) => r.data))}`);
        const toolMs = results.reduce((sum, r) => sum + (r.ms - calls.get(r.data.callId)), 0);
        samples.push({ id, totalMs, toolMs, firstTextMs: events.find((e) => e.event === 'text').ms });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;

  // The model's time per chat: its three requests, told apart by the chat's own first message.
  const modelMs = new Map();
  for (const req of model.requests) {
    const id = Number(/^Chat (\d+):/.exec(req.body.messages.find((m) => m.role === 'user').content)[1]);
    modelMs.set(id, (modelMs.get(id) ?? 0) + (req.doneAt - req.at));
  }
  for (const s of samples) {
    s.modelMs = modelMs.get(s.id);
    s.overheadMs = s.totalMs - s.modelMs - s.toolMs;
  }
  const sum = (key) => samples.reduce((n, s) => n + s[key], 0);
  const overall = sum('overheadMs') / (sum('modelMs') + sum('toolMs'));
  const ms = (key, q) => pct(samples.map((s) => s[key]), q).toFixed(1);
  const line = (label, key) => console.log(`  ${label.padEnd(22)}p50 ${ms(key, 0.5)} ms   p99 ${ms(key, 0.99)} ms`);

  console.log(`bench:agent on ${cpus().length} cores, Node ${process.version}: ${CHATS} streamed chats (after ${WARMUP} to warm up), ${CLIENTS} clients, 3 model turns and 2 tool calls each, model ${MODEL_MS} ms a turn`);
  line('first text event', 'firstTextMs');
  line('whole chat', 'totalMs');
  line('model (the fake)', 'modelMs');
  line('tools (call→result)', 'toolMs');
  line('agent overhead', 'overheadMs');
  console.log(`  overhead, all chats   ${(100 * overall).toFixed(1)} % of model + tool time (target <= ${100 * TARGET} %)`);
  console.log(`  model calls           ${model.requests.length} (${3 * CHATS} expected), throughput ${(CHATS / seconds).toFixed(1)} chats/s`);
  if (overall > TARGET) process.exitCode = 1;
} finally {
  await server?.stop();
  await model.close();
  await rm(work, { recursive: true, force: true });
}
