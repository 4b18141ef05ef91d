// npm run bench:ai — AI-column throughput against a model's concurrency limit. A loopback
// OpenAI-compatible model (the tests' fake, which answers 429 past 10 calls at once) answers in
// 400 ms; the built server runs as its own process with LLM_MAX_CONCURRENT=10. 200 AI-column
// requests from 20 clients, 20 % of them repeating a row already answered (as when a sheet is
// run again): throughput, p50/p99, cache hit rate and latency, and the model's peak concurrency.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { importTs, pct, startInstance } from './lib.mjs';

const REQUESTS = 200;
const REPEATED = 0.2;
const CLIENTS = 20;
const MODEL_MS = 400;
const MODEL_LIMIT = 10;
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-ai-'));

const { startFakeLlm } = await importTs('test/helpers/fake-llm.ts', work);

const model = await startFakeLlm(() => JSON.stringify({ value: 'Software house' }), { maxConcurrent: MODEL_LIMIT });
model.latencyMs = MODEL_MS;
let server;
try {
  server = await startInstance(path.join(work, 'data'), {
    RATE_LIMIT_PER_MINUTE: '1000000',
    LLM_BASE_URL: model.baseUrl,
    LLM_API_KEY: model.key,
    LLM_MODEL: 'fake-model',
    LLM_MAX_CONCURRENT: String(MODEL_LIMIT),
  });
  const { url, apiKey } = server;

  // 160 rows, and 40 of them again, each repeat queued well after its original has been answered.
  const unique = Math.round(REQUESTS * (1 - REPEATED));
  const rows = Array.from({ length: unique }, (_, i) => ({ instruction: 'industry in two words', Company: `Company ${i}`, City: 'Recife' }));
  const queue = [...rows];
  for (let i = 0; i < REQUESTS - unique; i++) queue.splice(i * 2 + 90, 0, rows[i]);

  const samples = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < queue.length) {
        const body = queue[next++];
        const t = performance.now();
        const res = await fetch(`${url}/v1/api/ai-column`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        const answer = await res.json();
        samples.push({ ms: performance.now() - t, status: res.status, cached: answer.cached === true });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const hits = samples.filter((s) => s.cached);
  const failed = samples.filter((s) => s.status !== 200).length;

  console.log(`bench:ai on ${cpus().length} cores, Node ${process.version}: ${REQUESTS} AI-column requests, ${CLIENTS} clients, model ${MODEL_MS} ms with at most ${MODEL_LIMIT} at once`);
  console.log(`  throughput          ${(REQUESTS / seconds).toFixed(1)} requests/s (target >= 22; the model's limit allows ${(MODEL_LIMIT * 1000) / MODEL_MS} for distinct rows)`);
  console.log(`  latency, all        p50 ${pct(samples.map((s) => s.ms), 0.5).toFixed(1)} ms   p99 ${pct(samples.map((s) => s.ms), 0.99).toFixed(1)} ms`);
  console.log(`  cache hits          ${hits.length} of ${REQUESTS} (${((100 * hits.length) / REQUESTS).toFixed(0)} %), p50 ${pct(hits.map((s) => s.ms), 0.5).toFixed(2)} ms   p99 ${pct(hits.map((s) => s.ms), 0.99).toFixed(2)} ms (target p99 <= 5 ms)`);
  console.log(`  model calls         ${model.requests.length}, peak ${model.maxInFlight} at once (limit ${MODEL_LIMIT}), ${model.overLimit} refused for going over`);
  console.log(`  failed requests     ${failed}`);

  // The same cache hits on a server with nothing else to do, for comparison.
  const idle = [];
  for (const body of [...rows.slice(0, 100), ...rows.slice(0, 100)]) {
    const t = performance.now();
    const res = await fetch(`${url}/v1/api/ai-column`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    await res.json();
    idle.push(performance.now() - t);
  }
  const warm = idle.slice(100);
  console.log(`  cache hits, idle    p50 ${pct(warm, 0.5).toFixed(2)} ms   p99 ${pct(warm, 0.99).toFixed(2)} ms (100 sequential, after 100 more)`);
} finally {
  await server?.stop();
  await model.close();
  await rm(work, { recursive: true, force: true });
}
