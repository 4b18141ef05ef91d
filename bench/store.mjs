// The embedded store's write and read path, through the real server, against an earlier build in
// the same run (issue 40: SQLite against the journal store it replaced).
//
//   npm run bench:store                     (this build only)
//   BASELINE=/path/to/checkout npm run bench:store
//
// BASELINE is a checkout of an earlier commit with its own `node build.mjs` done (and node_modules
// linked): `git worktree add /tmp/base ca9bbf0 && ln -s $PWD/node_modules /tmp/base/ && (cd
// /tmp/base && node build.mjs)`. Each build gets a fresh DATA_DIR with the demo registry, a
// workspace on an active plan and credits, then:
//   - single charge: a one-CNPJ batch lookup (1 credit: a conditional debit and its ledger row),
//     sequentially (latency p50/p99, and writes acknowledged per second) and from 16 clients;
//   - template create: an insert per request, from 16 clients;
//   - credits read: GET /credits, sequentially (p50/p99).
// Prints a table and, last, one JSON line with every figure.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiCaller, freePort, importTs, pct, root } from './lib.mjs';

const SEQUENTIAL = Number(process.env.SEQUENTIAL ?? 2000);
const CONCURRENT = Number(process.env.CONCURRENT ?? 4000);
const CLIENTS = 16;

function cli(dir, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/prospecta.mjs', ...args], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`prospecta ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

async function start(dir, dataDir) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { DATA_DIR: dataDir, PORT: String(port), PUBLIC_URL: url, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '10000000' };
  await cli(dir, ['seed', 'demo'], env);
  const { workspaceId, apiKey } = await cli(dir, ['workspace', 'create', '--name', 'bench', '--plan', 'active'], env);
  await cli(dir, ['credits', 'grant', '--workspace', workspaceId, '--amount', '100000000'], env);
  const child = spawn(process.execPath, ['dist/server.mjs'], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let tried = 0; !(await fetch(`${url}/v1/health`).then((r) => r.ok, () => false)); tried++) {
    if (tried > 1200 || child.exitCode !== null) throw new Error(`the server in ${dir} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const call = apiCaller(url, apiKey);
  return { call, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) };
}

async function sequential(count, request) {
  const times = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await request(i);
    times.push(performance.now() - t);
  }
  return { perSecond: count / ((performance.now() - started) / 1000), p50: pct(times, 0.5), p99: pct(times, 0.99) };
}

async function concurrent(count, request) {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < count) await request(next++);
  }));
  return count / ((performance.now() - started) / 1000);
}

const { cnpjCheckDigits } = await importTs('shared/cnpj.ts', await mkdtemp(path.join(os.tmpdir(), 'bench-store-')));
const cnpjOf = (n) => {
  const first12 = String(10_000_000 + n).padStart(8, '0') + '0001';
  return first12 + cnpjCheckDigits(first12);
};

async function measure(name, dir) {
  const server = await start(dir, await mkdtemp(path.join(os.tmpdir(), `bench-store-${name}-`)));
  try {
    const charge = (i) => server.call('POST', '/companies/cnpj/batch', { cnpjs: [cnpjOf(i % 1000)] });
    const template = (i) => server.call('POST', '/prospecting/templates', { name: `${name}-${i}-${Math.random()}`, offering: 'Bench offering.' });
    const credits = () => server.call('GET', '/credits');
    await sequential(200, charge); // warm-up
    await sequential(200, credits);
    const charges = await sequential(SEQUENTIAL, charge);
    const chargesConcurrent = await concurrent(CONCURRENT, charge);
    const templates = await concurrent(CONCURRENT, template);
    const reads = await sequential(SEQUENTIAL, credits);
    return { name, chargePerSecond: charges.perSecond, chargeConcurrentPerSecond: chargesConcurrent, chargeP50Ms: charges.p50, chargeP99Ms: charges.p99, templatePerSecond: templates, creditsP50Ms: reads.p50, creditsP99Ms: reads.p99 };
  } finally {
    await server.stop();
  }
}

const runs = [];
if (process.env.BASELINE) runs.push(await measure('baseline', path.resolve(process.env.BASELINE)));
runs.push(await measure('this build', root));
const f = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));
console.log(`build         charge/s seq  charge/s ${CLIENTS}c  charge p50  charge p99  template/s ${CLIENTS}c  credits p50  credits p99`);
for (const r of runs) {
  console.log(
    `${r.name.padEnd(13)} ${f(r.chargePerSecond).padStart(12)}  ${f(r.chargeConcurrentPerSecond).padStart(11)}  ${f(r.chargeP50Ms).padStart(7)} ms  ${f(r.chargeP99Ms).padStart(7)} ms  ${f(r.templatePerSecond).padStart(13)}  ${f(r.creditsP50Ms).padStart(8)} ms  ${f(r.creditsP99Ms).padStart(8)} ms`,
  );
}
console.log(JSON.stringify(runs));
