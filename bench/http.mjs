// npm run bench:http — the full stack (auth, version, rate limit, validation, store read) on the
// embedded store against a bare Koa app answering a constant JSON, both driven by autocannon
// with 50 connections. Each server runs in its own process, like in production, and both stay up
// for the whole run: after a warm-up of each, they are measured in alternating rounds (bare,
// prospecta, bare, ...) so a drift of the machine (thermal, a neighbour, the page cache) falls
// on both rather than on whichever ran second. Each round is printed; the verdict uses medians.
//
// Each round also reads the server process's CPU time from /proc: requests per second compare
// the two only while each server has a core to itself, whereas CPU per request says what a
// request costs whatever saturates first (the client, a neighbour on a shared machine).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP = 3;

function start(args, env, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let done = false;
    const onData = (d) => {
      if (done) return;
      out += d;
      const found = ready(out);
      if (found) {
        done = true;
        out = '';
        resolve({ child, ...found });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      if (!done) reject(new Error(`exited ${code}: ${out}`));
    });
  });
}

function run(url, headers, duration) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration, headers }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** CPU time (user + system) of a process so far, in µs; Linux only, else NaN. */
async function cpuMicros(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return NaN;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, in clock ticks of 1/100 s on Linux.
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

function summary(round, name, r, cpu) {
  const errors = r.non2xx + r.errors + r.timeouts;
  const cpuPerRequest = Math.round((cpu / r.requests.total) * 10) / 10;
  return { round, name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, 'cpu µs/req': cpuPerRequest, errors };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-'));
const barePath = path.join(work, 'bare.mjs');
await writeFile(
  barePath,
  `import Koa from '${path.join(root, 'node_modules/koa/dist/koa.mjs')}';
   const app = new Koa();
   app.use((ctx) => { ctx.body = { balance: 500, consumed: 0 }; });
   const s = app.listen(0, '127.0.0.1', () => console.log('bare listening ' + s.address().port));`,
);

const rows = [];
let bare;
let full;
try {
  bare = await start([barePath], {}, (out) => {
    const m = /bare listening (\d+)/.exec(out);
    return m && { url: `http://127.0.0.1:${m[1]}/` };
  });
  full = await start(
    ['dist/server.mjs'],
    { DATA_DIR: path.join(work, 'data'), PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '10000000', LOG_LEVEL: 'info' },
    (out) => {
      const key = /(service_live_[0-9A-Za-z]+)/.exec(out)?.[1];
      const port = /"port":(\d+)/.exec(out)?.[1];
      return key && port && { url: `http://127.0.0.1:${port}/v1/api/credits`, key };
    },
  );
  // Access logs go to a pipe we drain, as they would to a log collector.
  full.child.stdout.resume();
  full.child.stderr.resume();
  bare.child.stdout.resume();
  const headers = { Authorization: `Bearer ${full.key}` };
  await run(bare.url, {}, WARMUP);
  await run(full.url, headers, WARMUP);
  console.log(`autocannon: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s each (after ${WARMUP} s warm-ups)\n`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, server, url, h] of [
      ['bare Koa, constant JSON', bare, bare.url, {}],
      ['prospecta GET /v1/api/credits', full, full.url, headers],
    ]) {
      const before = await cpuMicros(server.child.pid);
      const result = await run(url, h, DURATION);
      const row = summary(round, name, result, (await cpuMicros(server.child.pid)) - before);
      rows.push(row);
      console.log(
        `round ${round}  ${name.padEnd(30)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  ` +
          `server CPU ${row['cpu µs/req']} µs/request${row.errors ? `  errors ${row.errors}` : ''}`,
      );
    }
  }
} finally {
  bare?.child.kill();
  full?.child.kill('SIGTERM');
  await rm(work, { recursive: true, force: true });
}

const of = (prefix) => rows.filter((r) => r.name.startsWith(prefix));
const med = (prefix) => {
  const rs = of(prefix);
  const mid = (field) => median(rs.map((r) => r[field]));
  return { name: rs[0].name, rps: mid('rps'), p50: mid('p50'), p99: mid('p99'), 'cpu µs/req': mid('cpu µs/req'), errors: rs.reduce((n, r) => n + r.errors, 0) };
};
const b = med('bare');
const f = med('prospecta');
console.log(`\nmedians over ${ROUNDS} rounds:`);
console.table([b, f]);
const ratio = f.rps / b.rps;
console.log(`full stack / bare Koa requests/s: ${(ratio * 100).toFixed(1)}% (target >= 50%)`);
console.log(`full stack p99: ${f.p99} ms (target < 25 ms)`);
console.log(`server CPU per request: bare Koa ${b['cpu µs/req']} µs, full stack ${f['cpu µs/req']} µs; bare / full ${((b['cpu µs/req'] / f['cpu µs/req']) * 100).toFixed(1)}%`);
if (f.errors) console.log(`WARNING: ${f.errors} non-2xx/errored responses in the full-stack runs`);
