// npm run bench:cascade — provider throttling and cascade latency, end to end. Three loopback
// providers (the test fakes, which refuse with 429 anything past their limits) answer with fixed
// latencies: Hunter 20 req/s × 5 at 200 ms, Apollo 50 req/s × 10 at 100 ms, People Data Labs
// 100 req/s × 20 at 50 ms (each can reach its rate within its concurrency). The built server runs
// as its own process on a fresh embedded store.
//
//  1. Throughput: 1,000 enrich requests at once, each needing one provider, shared in proportion
//     to the providers' rates. Per provider: the achieved call rate as a % of its declared rate,
//     and the 429s it had to send.
//     Enrich p50/p99 against the latency of the providers the answer actually needed.
//  2. The same 1,000 requests again (issue 32, the enrichment memory): what the second run was
//     charged (target 0) and how many provider calls it made (target 0), and its p50/p99 latency
//     against a credits read's at the same concurrency (target: within 2 ms).
//  3. Latency, below the limits: one client per provider, one request at a time, plus a cascade
//     needing Hunter and Apollo together (with `maxAge: 0`, so the cascade runs each time).
//  4. Throughput again with two server instances sharing one Redis (REDIS_URL, or a redis-server
//     started here on a free port): the combined rate per provider stays within its limit.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, importTs, pct, startInstance } from './lib.mjs';

const REQUESTS = Number(process.env.REQUESTS ?? 1000);
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-cascade-'));

// The fakes are the tests' own (TypeScript): bundled once for plain Node.
const { startFakeApollo, startFakeHunter, startFakePdl, syntheticWorld } = await importTs('test/helpers/fake-providers.ts', work);

const PROVIDERS = [
  { id: 'hunter', env: 'HUNTER', perSecond: 20, concurrent: 5, latencyMs: 200, start: startFakeHunter },
  { id: 'apollo', env: 'APOLLO', perSecond: 50, concurrent: 10, latencyMs: 100, start: startFakeApollo },
  { id: 'pdl', env: 'PDL', perSecond: 100, concurrent: 20, latencyMs: 50, start: startFakePdl },
];
const SLACK_MS = 20;

/** People every fake knows, so every call finds data. */
const world = syntheticWorld(2000);

/** The enrich body that needs exactly this provider. */
function body(provider, i) {
  const p = world[i % world.length];
  if (provider === 'hunter') return { fullName: `${p.firstName} ${p.lastName}`, companyDomain: p.domain, goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true };
  if (provider === 'apollo') return { email: p.email, goalFields: ['seniority'], providerOrder: ['apollo'], onlyListed: true };
  if (provider === 'pdl') return { linkedinUrl: p.linkedinUrl, goalFields: ['personalEmail'], providerOrder: ['pdl'], onlyListed: true };
  // Hunter (email, title) and Apollo (seniority) together: neither waits for the other.
  return { fullName: `${p.firstName} ${p.lastName}`, companyDomain: p.domain, goalFields: ['email', 'seniority'], providerOrder: ['hunter', 'apollo'], onlyListed: true };
}

/** A server instance on its own store, with a workspace rich enough for the whole run. */
function startWithFakes(name, fakes, extraEnv = {}) {
  const env = { ...extraEnv };
  for (const p of PROVIDERS) {
    const fake = fakes[p.id];
    Object.assign(env, {
      [`${p.env}_API_KEY`]: fake.key,
      [`${p.env}_URL`]: fake.url,
      [`${p.env}_RATE_PER_SECOND`]: String(p.perSecond),
      [`${p.env}_RATE_PER_MINUTE`]: String(p.perSecond * 60),
      [`${p.env}_MAX_CONCURRENT`]: String(p.concurrent),
    });
  }
  return startInstance(path.join(work, name), env);
}

async function enrich(instance, payload) {
  const started = performance.now();
  const res = await fetch(`${instance.url}/v1/api/enrich`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${instance.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(payload),
  });
  const answer = await res.json();
  return { status: res.status, ms: performance.now() - started, answer };
}

/**
 * Calls per second the fake saw: n calls over the span from the first to the last, plus the one
 * interval the last call owns at the declared pace (so perfect pacing reads exactly 100 %).
 */
function achieved(fake, perSecond) {
  const at = fake.requests.map((r) => r.at);
  if (at.length < 2) return 0;
  return (at.length * 1000) / (at[at.length - 1] - at[0] + 1000 / perSecond);
}

/** The throughput run's requests: shared in proportion to the providers' rates. */
function throughputJobs() {
  const total = PROVIDERS.reduce((sum, p) => sum + p.perSecond, 0);
  return PROVIDERS.flatMap((p) => Array.from({ length: Math.round((REQUESTS * p.perSecond) / total) }, (_, i) => body(p.id, i)));
}

/** `count` calls of `once`, `clients` at a time; each call's latency in ms. */
async function timed(count, clients, once) {
  const samples = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) {
        const i = next++;
        const started = performance.now();
        await once(i);
        samples.push(performance.now() - started);
      }
    }),
  );
  return samples;
}

/** The throughput run again, answered from the enrichment memory: its credits, provider calls and latency. */
async function rerun(instance, fakes) {
  for (const fake of Object.values(fakes)) fake.reset();
  const jobs = throughputJobs();
  const CLIENTS = 8;
  const before = (await (await fetch(`${instance.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${instance.apiKey}` } })).json()).balance;
  let charged = 0;
  let cached = 0;
  const enrichMs = await timed(jobs.length, CLIENTS, async (i) => {
    const r = await enrich(instance, jobs[i]);
    charged += r.answer.creditsCharged ?? 0;
    if (r.answer.cached) cached++;
  });
  const calls = Object.values(fakes).reduce((sum, fake) => sum + fake.requests.length, 0);
  const creditsMs = await timed(jobs.length, CLIENTS, async () => {
    const res = await fetch(`${instance.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${instance.apiKey}` } });
    await res.json();
  });
  const after = (await (await fetch(`${instance.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${instance.apiKey}` } })).json()).balance;
  const row = (label, ms) => `  ${label.padEnd(22)} ${`${pct(ms, 0.5).toFixed(2)} ms`.padStart(10)}   ${`${pct(ms, 0.99).toFixed(2)} ms`.padStart(10)}`;
  console.log(`
The same ${jobs.length} requests again (${CLIENTS} clients at a time), answered from the enrichment memory:`);
  console.log(`  answered from memory: ${cached} of ${jobs.length}; credits charged: ${charged} (balance moved by ${before - after}, target 0); provider calls: ${calls} (target 0)`);
  console.log('                               p50          p99');
  console.log(row('enrich, second run', enrichMs));
  console.log(row('credits read', creditsMs));
  console.log(
    `  difference             ${`${(pct(enrichMs, 0.5) - pct(creditsMs, 0.5)).toFixed(2)} ms`.padStart(10)}   ${`${(pct(enrichMs, 0.99) - pct(creditsMs, 0.99)).toFixed(2)} ms`.padStart(10)}   (target: within 2 ms)`,
  );
}

async function throughput(label, instances, fakes) {
  for (const fake of Object.values(fakes)) fake.reset();
  const jobs = throughputJobs();
  const started = performance.now();
  const results = await Promise.all(jobs.map((payload, i) => enrich(instances[i % instances.length], payload)));
  const seconds = (performance.now() - started) / 1000;
  const failed = results.filter((r) => r.status !== 200 || r.answer.creditsCharged === 0).length;
  console.log(`\n${label}: ${jobs.length} enrich requests in ${seconds.toFixed(1)} s, ${failed} without data`);
  console.log('  provider   declared   achieved   % of declared   429s sent   peak concurrency (limit)   peak calls in 1 s');
  for (const p of PROVIDERS) {
    const fake = fakes[p.id];
    const rate = achieved(fake, p.perSecond);
    console.log(
      `  ${p.id.padEnd(9)}  ${`${p.perSecond}/s`.padStart(8)}   ${`${rate.toFixed(1)}/s`.padStart(8)}   ${`${((100 * rate) / p.perSecond).toFixed(1)} %`.padStart(13)}` +
        `   ${String(fake.overLimit).padStart(9)}   ${`${fake.maxInFlight} (${p.concurrent})`.padStart(24)}   ${String(fake.maxPerSecond(SLACK_MS)).padStart(17)}`,
    );
  }
}

async function latency(instance, fakes) {
  for (const fake of Object.values(fakes)) fake.reset();
  const latencyOf = Object.fromEntries(PROVIDERS.map((p) => [p.id, p.latencyMs]));
  const samples = [];
  const client = async (kind, count) => {
    for (let i = 0; i < count; i++) {
      const r = await enrich(instance, { ...body(kind, 1000 + i), maxAge: 0 });
      const needed = Math.max(...r.answer.providers.filter((a) => a.outcome === 'found').map((a) => latencyOf[a.provider]));
      const calls = r.answer.providers.map((a) => a.ms);
      samples.push({ kind, ms: r.ms, needed, call: Math.max(...calls) });
    }
  };
  // Providers apart first, then the cascade that needs two: no client ever waits for another's turn.
  await Promise.all([client('hunter', 100), client('apollo', 100), client('pdl', 100)]);
  await client('hunter+apollo', 100);
  console.log('\nLatency below the limits (one request at a time per provider):');
  console.log('  needs           requests   enrich p50   enrich p99   providers needed   provider call p50 (server side)   p50 overhead');
  for (const kind of ['hunter', 'apollo', 'pdl', 'hunter+apollo', 'all']) {
    const mine = samples.filter((s) => kind === 'all' || s.kind === kind);
    const p50 = pct(mine.map((s) => s.ms), 0.5);
    const needed = pct(mine.map((s) => s.needed), 0.5);
    console.log(
      `  ${kind.padEnd(14)}  ${String(mine.length).padStart(8)}   ${`${p50.toFixed(1)} ms`.padStart(10)}   ${`${pct(mine.map((s) => s.ms), 0.99).toFixed(1)} ms`.padStart(10)}` +
        `   ${`${needed} ms`.padStart(16)}   ${`${pct(mine.map((s) => s.call), 0.5).toFixed(1)} ms`.padStart(31)}` +
        `   ${`${((100 * (p50 - needed)) / needed).toFixed(1)} %`.padStart(12)}`,
    );
  }
}

async function redisUrl() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} };
  const port = await freePort();
  try {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await new Promise((resolve, reject) => {
      child.once('error', reject);
      setTimeout(resolve, 300);
    });
    return { url: `redis://127.0.0.1:${port}`, stop: async () => void child.kill() };
  } catch {
    return null;
  }
}

const fakes = Object.fromEntries(
  await Promise.all(
    PROVIDERS.map(async (p) => {
      const fake = await p.start(world, { perSecond: p.perSecond, perMinute: p.perSecond * 60, maxConcurrent: p.concurrent, slackMs: SLACK_MS });
      fake.latencyMs = p.latencyMs;
      return [p.id, fake];
    }),
  ),
);

try {
  console.log(`bench:cascade on ${(await import('node:os')).cpus().length} cores, Node ${process.version}`);
  const single = await startWithFakes('one', fakes);
  try {
    await throughput('One instance', [single], fakes);
    await rerun(single, fakes);
    await latency(single, fakes);
  } finally {
    await single.stop();
  }

  const redis = await redisUrl();
  if (!redis) {
    console.log('\nTwo instances sharing Redis: skipped (set REDIS_URL or install redis-server)');
  } else {
    try {
      const pair = await Promise.all(['two-a', 'two-b'].map((name) => startWithFakes(name, fakes, { REDIS_URL: redis.url })));
      try {
        await throughput('Two instances sharing Redis', pair, fakes);
      } finally {
        await Promise.all(pair.map((i) => i.stop()));
      }
    } finally {
      await redis.stop();
    }
  }
} finally {
  await Promise.all(Object.values(fakes).map((f) => f.close()));
  await rm(work, { recursive: true, force: true });
}
