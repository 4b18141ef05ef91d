// npm run bench:http — the full stack (auth, version, rate limit, validation, store read) on the
// embedded store against a bare Koa app answering a constant JSON, both driven by autocannon
// with 100 connections for 10 s. Each server runs in its own process, like in production.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONNECTIONS = 100;
const DURATION = 10;

function start(args, env, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (d) => {
      out += d;
      const found = ready(out);
      if (found) resolve({ child, ...found });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

function run(url, headers, duration = DURATION) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration, headers }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

function summary(name, r) {
  const errors = r.non2xx + r.errors + r.timeouts;
  return { name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors };
}

const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-'));
const barePath = path.join(work, 'bare.mjs');
await writeFile(
  barePath,
  `import Koa from '${path.join(root, 'node_modules/koa/dist/koa.mjs')}';
   const app = new Koa();
   app.use((ctx) => { ctx.body = { balance: 500, consumed: 0 }; });
   const s = app.listen(0, '127.0.0.1', () => console.log('bare listening ' + s.address().port));`,
);

const results = [];
try {
  const bare = await start([barePath], {}, (out) => {
    const m = /bare listening (\d+)/.exec(out);
    return m && { url: `http://127.0.0.1:${m[1]}/` };
  });
  await run(bare.url, {}, 3); // warm-up
  results.push(summary('bare Koa, constant JSON', await run(bare.url, {})));
  bare.child.kill();

  const full = await start(
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
  const headers = { Authorization: `Bearer ${full.key}` };
  await run(full.url, headers, 3); // warm-up
  results.push(summary('prospecta GET /v1/api/credits', await run(full.url, headers)));
  full.child.kill('SIGTERM');
} finally {
  await rm(work, { recursive: true, force: true });
}

console.log(`\nautocannon: ${CONNECTIONS} connections, ${DURATION} s each\n`);
console.table(results);
const [bare, full] = results;
const ratio = full.rps / bare.rps;
console.log(`full stack / bare Koa requests/s: ${(ratio * 100).toFixed(1)}% (target >= 50%)`);
console.log(`full stack p99: ${full.p99} ms (target < 25 ms)`);
if (full.errors) console.log(`WARNING: ${full.errors} non-2xx/errored responses in the full-stack run`);
