// npm run bench:jobs — a job of N `lookupCnpjBatch` items (JOB_ITEMS, default 10,000; one CNPJ
// each) against the same work sent as synchronous calls by 8 concurrent clients, on the built
// server over a fresh embedded store with the demo registry: items per second both ways, the p99
// of interactive lookups while the job runs against the same lookups on the idle server, and the
// server's peak resident memory. (The 2,000-item `enrich` job against the fake providers, with
// their quota use and 429s, is not measured yet.)
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importTs, pct, startInstance } from './lib.mjs';

const ITEMS = Number(process.env.JOB_ITEMS ?? 10_000);
const CLIENTS = 8;
const PROBES = 200;
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-jobs-'));
const { cnpjCheckDigits } = await importTs('shared/cnpj.ts', work);
const cnpjOf = (n) => {
  const first12 = String(10_000_000 + n).padStart(8, '0') + '0001';
  return first12 + cnpjCheckDigits(first12);
};
const cnpjs = Array.from({ length: ITEMS }, (_, i) => cnpjOf(i));

const server = await startInstance(path.join(work, 'data'), { JOBS_POLL_MS: '200' }, { demo: true });
const peakMiB = async () => Number(/VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${server.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function probes(count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await server.call('POST', '/companies/cnpj/batch', { cnpjs: [cnpjs[i % cnpjs.length]] });
    times.push(performance.now() - started);
  }
  return times;
}

try {
  await probes(50); // warm-up
  const idle = await probes(PROBES);

  let next = 0;
  let started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < ITEMS) await server.call('POST', '/companies/cnpj/batch', { cnpjs: [cnpjs[next++]] });
    }),
  );
  const syncSeconds = (performance.now() - started) / 1000;

  started = performance.now();
  const { jobId } = await server.call('POST', '/jobs', { operation: 'lookupCnpjBatch', items: cnpjs.map((cnpj) => ({ input: { cnpjs: [cnpj] } })) });
  const accepted = (performance.now() - started) / 1000;
  const during = [];
  let job;
  for (;;) {
    during.push(...(await probes(20)));
    job = await server.call('GET', `/jobs/${jobId}`);
    if (!['queued', 'running'].includes(job.status)) break;
  }
  const jobSeconds = (performance.now() - started) / 1000;

  const f = (n) => n.toFixed(1);
  console.log(`jobs: ${ITEMS.toLocaleString('en')} lookupCnpjBatch items, 1 CNPJ each, embedded store`);
  console.log(`  synchronous, ${CLIENTS} clients: ${f(ITEMS / syncSeconds)} items/s (${f(syncSeconds)} s)`);
  console.log(`  as one job:              ${f(ITEMS / jobSeconds)} items/s (${f(jobSeconds)} s, accepted in ${f(accepted)} s; ${job.status}, ${job.done} done, ${job.failed} failed)`);
  console.log(`  job / synchronous:       ${f((syncSeconds / jobSeconds) * 100)} % (target ≥ 100 %)`);
  console.log(`  interactive p99 idle:    ${f(pct(idle, 0.99))} ms (p50 ${f(pct(idle, 0.5))} ms, ${idle.length} lookups)`);
  console.log(`  interactive p99 in job:  ${f(pct(during, 0.99))} ms (p50 ${f(pct(during, 0.5))} ms, ${during.length} lookups; target within 20 % of idle)`);
  console.log(`  server peak RSS:         ${f(await peakMiB())} MiB`);
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
