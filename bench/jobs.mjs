// npm run bench:jobs — jobs against the same work sent as synchronous calls by 8 concurrent
// clients, on the built server over a fresh embedded store:
//
//  1. Lookups: a job of JOB_ITEMS (default 10,000) `lookupCnpjBatch` items, one CNPJ each, on the
//     demo registry. Items per second both ways, the p99 of interactive lookups while the job
//     runs against the same lookups on the idle server, and the server's peak resident memory.
//  2. Enrichment: a job of ENRICH_ITEMS (default 2,000) `enrich` items against the fake providers
//     with the limits of bench:cascade (Hunter 20 req/s × 5 at 200 ms, Apollo 50 req/s × 10 at
//     100 ms, People Data Labs 100 req/s × 20 at 50 ms), items shared in proportion to their
//     rates, each needing one provider; the synchronous run and the job enrich different people
//     (nothing is answered from the enrichment memory). Items per second both ways, each
//     provider's quota use (achieved rate over declared, target ≥ 90 %) and 429s (target 0),
//     the p99 of interactive enrichments (Apollo) while the job runs against idle, and peak memory.
//
// BENCH_HALF=lookups or BENCH_HALF=enrich runs one half.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importTs, pct, startInstance } from './lib.mjs';

const ITEMS = Number(process.env.JOB_ITEMS ?? 10_000);
const ENRICH_ITEMS = Number(process.env.ENRICH_ITEMS ?? 2_000);
const HALF = process.env.BENCH_HALF ?? 'both';
const CLIENTS = 8;
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-jobs-'));
const f = (n) => n.toFixed(1);

const peakMiB = async (server) => Number(/VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${server.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** `count` calls of `once(i)`, CLIENTS at a time; the seconds it took. */
async function synchronous(count, once) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) await once(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Starts a job of `items`, probing with `probe` until it ends: its seconds, its last view and the probes' latencies. */
async function asJob(server, operation, items, probe) {
  const started = performance.now();
  const { jobId } = await server.call('POST', '/jobs', { operation, items });
  const accepted = (performance.now() - started) / 1000;
  const during = [];
  let job;
  for (;;) {
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await probe(during.length);
      during.push(performance.now() - t);
    }
    job = await server.call('GET', `/jobs/${jobId}`);
    if (!['queued', 'running'].includes(job.status)) break;
  }
  return { seconds: (performance.now() - started) / 1000, accepted, job, during };
}

async function probes(count, probe) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await probe(i);
    times.push(performance.now() - t);
  }
  return times;
}

function report(title, count, syncSeconds, run, idle, server, peak) {
  console.log(title);
  console.log(`  synchronous, ${CLIENTS} clients: ${f(count / syncSeconds)} items/s (${f(syncSeconds)} s)`);
  console.log(`  as one job:              ${f(count / run.seconds)} items/s (${f(run.seconds)} s, accepted in ${f(run.accepted)} s; ${run.job.status}, ${run.job.done} done, ${run.job.failed} failed)`);
  console.log(`  job / synchronous:       ${f((syncSeconds / run.seconds) * 100)} % (target ≥ 100 %)`);
  console.log(`  interactive p99 idle:    ${f(pct(idle, 0.99))} ms (p50 ${f(pct(idle, 0.5))} ms, ${idle.length} calls)`);
  console.log(`  interactive p99 in job:  ${f(pct(run.during, 0.99))} ms (p50 ${f(pct(run.during, 0.5))} ms, ${run.during.length} calls; target within 20 % of idle)`);
  console.log(`  server peak RSS:         ${f(peak)} MiB`);
}

async function lookups() {
  const { cnpjCheckDigits } = await importTs('shared/cnpj.ts', work);
  const cnpjOf = (n) => {
    const first12 = String(10_000_000 + n).padStart(8, '0') + '0001';
    return first12 + cnpjCheckDigits(first12);
  };
  const cnpjs = Array.from({ length: ITEMS }, (_, i) => cnpjOf(i));
  // The demo registry loads at start-up: on a busy machine that takes a while.
  const server = await startInstance(path.join(work, 'lookups'), { JOBS_POLL_MS: '200' }, { demo: true, tries: 1200 });
  const probe = (i) => server.call('POST', '/companies/cnpj/batch', { cnpjs: [cnpjs[i % cnpjs.length]] });
  try {
    await probes(50, probe); // warm-up
    const idle = await probes(200, probe);
    const syncSeconds = await synchronous(ITEMS, (i) => server.call('POST', '/companies/cnpj/batch', { cnpjs: [cnpjs[i]] }));
    const run = await asJob(server, 'lookupCnpjBatch', cnpjs.map((cnpj) => ({ input: { cnpjs: [cnpj] } })), probe);
    report(`jobs: ${ITEMS.toLocaleString('en')} lookupCnpjBatch items, 1 CNPJ each, embedded store`, ITEMS, syncSeconds, run, idle, server, await peakMiB(server));
  } finally {
    await server.stop();
  }
}

const PROVIDERS = [
  { id: 'hunter', env: 'HUNTER', perSecond: 20, concurrent: 5, latencyMs: 200, start: 'startFakeHunter' },
  { id: 'apollo', env: 'APOLLO', perSecond: 50, concurrent: 10, latencyMs: 100, start: 'startFakeApollo' },
  { id: 'pdl', env: 'PDL', perSecond: 100, concurrent: 20, latencyMs: 50, start: 'startFakePdl' },
];
const SLACK_MS = 20;

/** Calls per second a fake saw, first to last call plus the one interval the last owns (perfect pacing reads 100 %). */
function achieved(fake, perSecond) {
  const at = fake.requests.map((r) => r.at);
  if (at.length < 2) return 0;
  return (at.length * 1000) / (at[at.length - 1] - at[0] + 1000 / perSecond);
}

function quota(label, fakes) {
  console.log(`  ${label}: provider   declared   achieved   quota use   429s`);
  for (const p of PROVIDERS) {
    const fake = fakes[p.id];
    const rate = achieved(fake, p.perSecond);
    console.log(`    ${p.id.padEnd(8)} ${`${p.perSecond}/s`.padStart(8)}   ${`${f(rate)}/s`.padStart(8)}   ${`${f((100 * rate) / p.perSecond)} %`.padStart(9)}   ${String(fake.overLimit).padStart(4)}`);
  }
}

async function enrichment() {
  const fakeModule = await importTs('test/helpers/fake-providers.ts', work);
  // Two sets of people: the synchronous run's and the job's, so neither is answered from memory.
  const world = fakeModule.syntheticWorld(2 * ENRICH_ITEMS + 1000);
  const fakes = {};
  for (const p of PROVIDERS) {
    fakes[p.id] = await fakeModule[p.start](world, { perSecond: p.perSecond, perMinute: p.perSecond * 60, maxConcurrent: p.concurrent, slackMs: SLACK_MS });
    fakes[p.id].latencyMs = p.latencyMs;
  }
  const total = PROVIDERS.reduce((sum, p) => sum + p.perSecond, 0);
  // Interleaved in proportion, as a sheet of mixed rows would be: every provider busy all along.
  const kinds = PROVIDERS.flatMap((p, k) => {
    // Rounded shares, the last taking what rounding left, so there are exactly ENRICH_ITEMS.
    const before = PROVIDERS.slice(0, k).reduce((sum, q) => sum + Math.round((ENRICH_ITEMS * q.perSecond) / total), 0);
    const count = k === PROVIDERS.length - 1 ? ENRICH_ITEMS - before : Math.round((ENRICH_ITEMS * p.perSecond) / total);
    return Array.from({ length: count }, (_, j) => ({ id: p.id, at: (j + 0.5) / count }));
  })
    .sort((a, b) => a.at - b.at)
    .map((kind) => kind.id);
  const body = (provider, n) => {
    const p = world[n];
    if (provider === 'hunter') return { fullName: `${p.firstName} ${p.lastName}`, companyDomain: p.domain, goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true };
    if (provider === 'apollo') return { email: p.email, goalFields: ['seniority'], providerOrder: ['apollo'], onlyListed: true };
    return { linkedinUrl: p.linkedinUrl, goalFields: ['personalEmail'], providerOrder: ['pdl'], onlyListed: true };
  };
  const env = { JOBS_POLL_MS: '200' };
  for (const p of PROVIDERS) {
    Object.assign(env, {
      [`${p.env}_API_KEY`]: fakes[p.id].key,
      [`${p.env}_URL`]: fakes[p.id].url,
      [`${p.env}_RATE_PER_SECOND`]: String(p.perSecond),
      [`${p.env}_RATE_PER_MINUTE`]: String(p.perSecond * 60),
      [`${p.env}_MAX_CONCURRENT`]: String(p.concurrent),
    });
  }
  const server = await startInstance(path.join(work, 'enrich'), env, { tries: 600 });
  const reset = () => Object.values(fakes).forEach((fake) => fake.reset());
  // Interactive: an Apollo enrichment, run afresh each time (maxAge 0), of the last 1,000 people.
  const probe = (i) => server.call('POST', '/enrich', { ...body('apollo', 2 * ENRICH_ITEMS + (i % 1000)), maxAge: 0 });
  try {
    await probes(20, probe); // warm-up
    const idle = await probes(100, probe);
    reset();
    const syncSeconds = await synchronous(kinds.length, (i) => server.call('POST', '/enrich', body(kinds[i], i)));
    const sync429 = Object.fromEntries(PROVIDERS.map((p) => [p.id, fakes[p.id].overLimit]));
    console.log(`jobs: ${kinds.length.toLocaleString('en')} enrich items against the fake providers, embedded store`);
    quota('synchronous', fakes);
    reset();
    const run = await asJob(server, 'enrich', kinds.map((kind, i) => ({ input: body(kind, ENRICH_ITEMS + i) })), probe);
    // The job's own calls: the probes' (Apollo, `maxAge: 0`) are counted with them, as the provider sees them.
    quota('as one job (with the interactive probes)', fakes);
    report('', kinds.length, syncSeconds, run, idle, server, await peakMiB(server));
    if (Object.values(sync429).some(Boolean)) console.log(`  (429s in the synchronous run: ${JSON.stringify(sync429)})`);
  } finally {
    await server.stop();
    await Promise.all(Object.values(fakes).map((fake) => fake.close()));
  }
}

try {
  if (HALF !== 'enrich') await lookups();
  if (HALF !== 'lookups') await enrichment();
} finally {
  await rm(work, { recursive: true, force: true });
}
