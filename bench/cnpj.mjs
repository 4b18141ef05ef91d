// npm run bench:cnpj — the registry end to end, as a user runs it, at two sizes (100,000 and
// 1,000,000 establishments; ESTABLISHMENTS=N for one size): `prospecta generate cnpj` writes a
// synthetic release in the Receita layout (or RELEASE_DIR names one written before, of that size), `prospecta import cnpj` imports it into a fresh
// embedded store (its peak memory sampled from /proc every 50 ms), the server is started on it
// (time to listening, resident memory), then answers 200 batch lookups of 500 CNPJs and 3 typical
// filtered searches (100 runs each) over HTTP, one request at a time. Last, the sizes side by
// side, so how each cost grows with the registry is visible.
//
// Absolute times move by a factor of two between machines and with the load on them, so each
// cost is also printed as a ratio of a floor measured in the same run: the import against
// reading, inflating and splitting the same files with the importer's own splitter on every core
// (bench/import-floor.ts); the server's ready time against reading the store's files once, like
// `cat` to /dev/null; the batch against a bare Koa app answering the same 500 companies as
// precomputed bodies, the two asked in turn.
//
// With MONGODB_URI set, each size imports into a database of its own on that server (dropped at
// the end) instead of the embedded store; there is no store file to read, so no ready ratio.
import { spawn } from 'node:child_process';
import { readFile, mkdtemp, rm, readdir, stat, writeFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Papa from 'papaparse';
import yauzl from 'yauzl';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { MongoClient } from 'mongodb';
import { pct, post as postText, root } from './lib.mjs';
const SIZES = process.env.ESTABLISHMENTS ? [Number(process.env.ESTABLISHMENTS)] : [100_000, 1_000_000];
if (process.env.RELEASE_DIR && !process.env.ESTABLISHMENTS) throw new Error('RELEASE_DIR needs ESTABLISHMENTS, the size it was generated with');
const BATCH_RUNS = 200;
const SEARCH_RUNS = 100;
/** Batch lookups sent in turn to prospecta and to the bare Koa floor answering the same bodies. */
const FLOOR_RUNS = 100;
const LOOKUP_RUNS = 500;
const LOOKUP_WARMUP = 1000;
const mongoUri = process.env.MONGODB_URI;
if (mongoUri) console.log(`on the MongoDB-wire server at ${mongoUri.replace(/\/\/[^@/]*@/, '//***@')}, a database per size`);
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-cnpj-'));
let env;

function spawnNode(args, extraEnv = {}) {
  return spawn(process.execPath, args, { cwd: root, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs the CLI; resolves with its JSON output, the seconds it took and its peak RSS in MiB. */
function cli(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawnNode(['bin/prospecta.mjs', ...args]);
    let stdout = '';
    let stderr = '';
    let peakKiB = 0;
    // The CLI starts node once more for its own options; sample the whole process tree.
    const sample = setInterval(async () => {
      for (const pid of [child.pid, ...(await children(child.pid))]) {
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
        peakKiB = Math.max(peakKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      }
    }, 50);
    child.stdout.on('data', (d) => (stdout += d));
    // Passed on as it comes: an import of millions of rows takes long enough to want its progress.
    child.stderr.on('data', (d) => {
      stderr += d;
      process.stderr.write(d);
    });
    child.on('close', (code) => {
      clearInterval(sample);
      if (code !== 0) return reject(new Error(`prospecta ${args.join(' ')} exited ${code}: ${stderr}`));
      resolve({ json: JSON.parse(stdout), seconds: (performance.now() - started) / 1000, peakMiB: peakKiB / 1024 });
    });
  });
}

async function children(pid) {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(' ').filter(Boolean).map(Number);
}

/** The first `count` CNPJs of an Estabelecimentos zip, to look up. */
function sampleCnpjs(zipPath, count) {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      zip.readEntry();
      zip.once('entry', (entry) =>
        zip.openReadStream(entry, (err2, stream) => {
          if (err2) return reject(err2);
          const cnpjs = [];
          const parser = stream.pipe(Papa.parse(Papa.NODE_STREAM_INPUT, { delimiter: ';' }));
          parser.on('data', (row) => {
            if (cnpjs.length < count) cnpjs.push(row[0] + row[1] + row[2]);
            else stream.destroy();
          });
          stream.on('close', () => resolve(cnpjs));
          parser.on('error', reject);
        }),
      );
    });
  });
}

function percentiles(samples) {
  return { p50: +pct(samples, 0.5).toFixed(1), p99: +pct(samples, 0.99).toFixed(1) };
}

/** The end-to-end samples `timed` measured, kept for a finer percentile than its one decimal. */
const kept = new WeakMap();
const lookupSamples = (timing) => kept.get(timing);

async function timed(runs, send) {
  const samples = [];
  const server = [];
  let rows = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const { body, serverMs } = await send(i);
    samples.push(performance.now() - started);
    server.push(serverMs);
    rows += body.results.length;
  }
  const inServer = percentiles(server);
  const timing = { ...percentiles(samples), 'server p50': inServer.p50, 'server p99': inServer.p99, rows: Math.round(rows / runs) };
  kept.set(timing, samples);
  return timing;
}

/** Resident memory of a process now, in MiB. */
async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/**
 * The import's floor (bench/import-floor.ts) on the release in `releaseDir`. Bundled with a
 * `require` of its own: yauzl is CommonJS, and requires Node's modules.
 */
async function importFloor(releaseDir) {
  const outfile = path.join(work, 'import-floor.mjs');
  await build({
    absWorkingDir: root,
    entryPoints: ['bench/import-floor.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'warning',
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  const { importFloor: floor } = await import(pathToFileURL(outfile).href);
  return floor(releaseDir);
}

/** Bytes of the files under `dir`. */
async function bytesUnder(dir) {
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += (await stat(path.join(entry.parentPath ?? entry.path, entry.name))).size;
  }
  return bytes;
}

/** Seconds to read every file under `dir` once and throw the bytes away, as `cat` to /dev/null. */
async function readOnce(dir) {
  const started = performance.now();
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    for await (const chunk of createReadStream(path.join(entry.parentPath ?? entry.path, entry.name), { highWaterMark: 1 << 20 })) bytes += chunk.length;
  }
  return { seconds: (performance.now() - started) / 1000, bytes };
}

/** A bare Koa app in its own process answering each request body in `answers` with its precomputed answer. */
async function startBareBatch(answers) {
  const answersPath = path.join(work, 'batch-answers.json');
  const script = path.join(work, 'bare-batch.mjs');
  await writeFile(answersPath, JSON.stringify([...answers]));
  await writeFile(
    script,
    `import Koa from '${path.join(root, 'node_modules/koa/dist/koa.mjs')}';
     import { readFileSync } from 'node:fs';
     const answers = new Map(JSON.parse(readFileSync(${JSON.stringify(answersPath)}, 'utf8')));
     const app = new Koa();
     app.use(async (ctx) => {
       const chunks = [];
       for await (const chunk of ctx.req) chunks.push(chunk);
       ctx.type = 'application/json';
       ctx.body = answers.get(Buffer.concat(chunks).toString());
     });
     const s = app.listen(0, '127.0.0.1', () => console.log('bare listening ' + s.address().port));`,
  );
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /bare listening (\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`the bare Koa app exited ${code}`)));
  });
  child.stdout.resume();
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((r) => (child.once('exit', r), child.kill())) };
}

/**
 * The 500-CNPJ batch against its floor: prospecta's answers to `FLOOR_RUNS` batches are kept,
 * a bare Koa app answers the same requests with them, and the two are asked in turn, each
 * request sent and its answer parsed the same way, so the machine's drift falls on both.
 */
async function batchFloor(url, apiKey, requestOf) {
  const send = async (base, text, auth) => {
    const started = performance.now();
    const res = await postText(base + '/v1/api/companies/cnpj/batch', text, auth ? { Authorization: `Bearer ${apiKey}` } : {});
    const answer = res.text;
    if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${answer.slice(0, 200)}`);
    if (JSON.parse(answer).results.length === 0) throw new Error('the batch found nothing');
    return { ms: performance.now() - started, answer };
  };
  const requests = Array.from({ length: FLOOR_RUNS }, (_, i) => JSON.stringify(requestOf(i)));
  const answers = new Map();
  for (const text of requests) answers.set(text, (await send(url, text, true)).answer);
  const bare = await startBareBatch(answers);
  try {
    for (const text of requests.slice(0, 20)) await send(bare.url, text, false); // warm-up
    const prospecta = [];
    const floor = [];
    for (const text of requests) {
      prospecta.push((await send(url, text, true)).ms);
      floor.push((await send(bare.url, text, false)).ms);
    }
    const p = percentiles(prospecta);
    const f = percentiles(floor);
    return { prospecta: p, floor: f, p50: p.p50 / f.p50, p99: p.p99 / f.p99 };
  } finally {
    await bare.stop();
  }
}

/** One size, end to end; prints as it goes and answers its figures. */
async function measure(establishments) {
  const dir = path.join(work, String(establishments));
  env = { ...process.env, DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' };
  if (mongoUri) {
    const uri = new URL(mongoUri);
    uri.pathname = `/prospecta_bench_${establishments}_${Date.now()}`;
    env.MONGODB_URI = uri.toString();
  }
  console.log(`\n== ${establishments.toLocaleString('en')} establishments`);
  // RELEASE_DIR: a release generated before (by `prospecta generate cnpj`) with ESTABLISHMENTS rows, read in place.
  const releaseDir = process.env.RELEASE_DIR ?? path.join(dir, '2026-10');
  if (process.env.RELEASE_DIR) console.log(`the release in ${releaseDir}, generated before`);
  else {
    const generated = await cli(['generate', 'cnpj', '--dir', releaseDir, '--establishments', String(establishments)]);
    console.log(`generated ${generated.json.establishments.toLocaleString('en')} establishments in ${generated.seconds.toFixed(1)} s`);
  }

  const imported = await cli(['import', 'cnpj', '--dir', releaseDir]);
  // Everything the store holds on disk after the import: the registry's files and the store's own.
  const storeBytes = mongoUri ? NaN : await bytesUnder(env.DATA_DIR);
  const rate = imported.json.establishments / imported.seconds;
  console.log(
    `imported ${imported.json.establishments.toLocaleString('en')} establishments in ${imported.seconds.toFixed(1)} s: ` +
      `${Math.round(rate).toLocaleString('en')} establishments/s (target >= 50,000), ` +
      `peak memory ${(imported.peakMiB / 1024).toFixed(2)} GiB (target < 2.5 GiB), problems ${imported.json.problems.count}`,
  );

  const floor = await importFloor(releaseDir);
  const importRatio = imported.seconds / floor.seconds;
  console.log(
    `import floor (read, inflate, split on ${floor.threads} threads, nothing else): ${floor.rows.toLocaleString('en')} rows in ${floor.seconds.toFixed(1)} s; ` +
      `import / floor: ${importRatio.toFixed(2)}x (target <= 1.5x)`,
  );

  const { json: account } = await cli(['workspace', 'create', '--name', 'bench', '--plan', 'active']);
  await cli(['credits', 'grant', '--workspace', account.workspaceId, '--amount', '1000000000']);
  const cnpjs = await sampleCnpjs(path.join(releaseDir, 'Estabelecimentos0.zip'), 20_000);

  const storeRead = mongoUri ? null : await readOnce(env.DATA_DIR);
  const startedServer = performance.now();
  const server = spawnNode(['dist/server.mjs'], { PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '10000000', LOG_LEVEL: 'info' });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const port = /"port":(\d+)/.exec(out)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    });
    server.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  server.stdout.resume();
  const readySeconds = (performance.now() - startedServer) / 1000;
  const readyRss = await rssMiB(server.pid);
  console.log(`server ready on the imported store in ${readySeconds.toFixed(1)} s (target <= 10 s at 1,000,000), resident memory ${readyRss.toFixed(0)} MiB`);
  const readyRatio = storeRead ? readySeconds / storeRead.seconds : NaN;
  if (storeRead) {
    console.log(
      `store read once (${(storeRead.bytes / 2 ** 20).toFixed(0)} MiB, as cat to /dev/null) in ${storeRead.seconds.toFixed(2)} s; ` +
        `ready / read once: ${readyRatio.toFixed(1)}x (target <= 3x)`,
    );
  }

  const post = async (route, body) => {
    const res = await postText(url + route, JSON.stringify(body), { Authorization: `Bearer ${account.apiKey}` });
    if (res.status !== 200) throw new Error(`${route} answered ${res.status}: ${res.text}`);
    // Server-Timing: the server's own time, apart from moving and parsing the answer.
    const serverMs = Number(/dur=([\d.]+)/.exec(res.headers['server-timing'] ?? '')?.[1] ?? NaN);
    return { body: JSON.parse(res.text), serverMs };
  };

  const results = [];
  // Batches of 500 taken in turn from the sampled CNPJs, wrapping around a small release's few.
  const batchRange = (i) => {
    const start = ((i * 500) % Math.max(1, cnpjs.length - 500)) | 0;
    return [start, start + 500];
  };
  const batch = (i) => post('/v1/api/companies/cnpj/batch', { cnpjs: cnpjs.slice(...batchRange(i)) });
  await timed(20, batch); // warm-up
  results.push({ query: 'batch lookup, 500 CNPJs', ...(await timed(BATCH_RUNS, (i) => batch(20 + i))), target: 'p99 <= 20 ms' });
  const searches = [
    ['state + status + CNAE', { state: 'SP', registrationStatuses: ['ATIVA'], industry: 'padaria', limit: 20 }],
    ['capital range + has email', { capitalMin: 100000, capitalMax: 1000000, hasEmail: true, limit: 20 }],
    ['partner name', { partnerName: 'maria souza', limit: 20 }],
  ];
  for (const [name, body] of searches) {
    await timed(10, () => post('/v1/api/companies/search', body));
    results.push({ query: `search: ${name}`, ...(await timed(SEARCH_RUNS, () => post('/v1/api/companies/search', body))), target: 'p99 <= 50 ms' });
  }
  // One CNPJ per request, one request at a time: the key check, the charge and the lookup. Measured
  // once the server's code for it is compiled: the first 500 after a start took 1.4 ms more at p50
  // than the next (issue 41), which is the JIT's warm-up, not what a server in service answers.
  await timed(LOOKUP_WARMUP, (i) => post('/v1/api/companies/cnpj/batch', { cnpjs: [cnpjs[(i * 7919) % cnpjs.length]] }));
  const lookup = await timed(LOOKUP_RUNS, (i) => post('/v1/api/companies/cnpj/batch', { cnpjs: [cnpjs[(i * 104729) % cnpjs.length]] }));
  results.push({ query: 'lookup, 1 CNPJ', ...lookup, target: 'p50 <= 0.8 ms' });
  const batchVsFloor = await batchFloor(url, account.apiKey, (i) => ({ cnpjs: cnpjs.slice(...batchRange(i)) }));
  const servedRss = await rssMiB(server.pid);
  server.kill('SIGTERM');
  await new Promise((resolve) => server.on('exit', resolve));

  console.log(`\nHTTP, one request at a time, latencies in ms end to end and in the server (Server-Timing; rows = average rows returned)\n`);
  console.table(results);
  console.log(
    `\nbatch lookup, 500 CNPJs, asked in turn with a bare Koa app answering the same bodies (${FLOOR_RUNS} each): ` +
      `prospecta p50 ${batchVsFloor.prospecta.p50} / p99 ${batchVsFloor.prospecta.p99} ms, bare Koa p50 ${batchVsFloor.floor.p50} / p99 ${batchVsFloor.floor.p99} ms; ` +
      `ratio p50 ${batchVsFloor.p50.toFixed(2)}x, p99 ${batchVsFloor.p99.toFixed(2)}x (target <= 2x)`,
  );
  await rm(dir, { recursive: true, force: true });
  if (mongoUri) {
    const client = await MongoClient.connect(env.MONGODB_URI);
    await client.db().dropDatabase();
    await client.close();
  }
  const searchP99 = Math.max(...results.filter((r) => r.query.startsWith('search')).map((r) => r.p99));
  const line = {
    establishments: imported.json.establishments,
    importSeconds: +imported.seconds.toFixed(1),
    importPerSecond: Math.round(rate),
    importPeakMiB: Math.round(imported.peakMiB),
    storeBytes,
    bytesPerEstablishment: Math.round(storeBytes / imported.json.establishments),
    readyMs: Math.round(readySeconds * 1000),
    serverRssMiB: Math.round(servedRss),
    batchP50Ms: results[0].p50,
    batchP99Ms: results[0].p99,
    batchP99RatioToBareKoa: +batchVsFloor.p99.toFixed(2),
    searchP99Ms: searchP99,
    lookupP50Ms: +pct(lookupSamples(lookup), 0.5).toFixed(2),
  };
  return { establishments, rate, importPeakGiB: imported.peakMiB / 1024, readySeconds, readyRss, servedRss, results, importRatio, readyRatio, batchVsFloor, line };
}

try {
  const measured = [];
  for (const size of SIZES) measured.push(await measure(size));
  if (measured.length > 1) {
    // Side by side: each row is one cost, each column one size.
    const column = (m) => m.establishments.toLocaleString('en');
    const row = (name, value) => Object.fromEntries([['', name], ...measured.map((m) => [column(m), value(m)])]);
    const rows = [
      row('import, establishments/s', (m) => Math.round(m.rate).toLocaleString('en')),
      row('import / its floor', (m) => `${m.importRatio.toFixed(2)}x`),
      row('import peak memory, GiB', (m) => m.importPeakGiB.toFixed(2)),
      row('server ready, s', (m) => m.readySeconds.toFixed(1)),
      row('server ready / store read once', (m) => `${m.readyRatio.toFixed(1)}x`),
      row('batch / bare Koa, p50 / p99', (m) => `${m.batchVsFloor.p50.toFixed(2)}x / ${m.batchVsFloor.p99.toFixed(2)}x`),
      row('server memory ready / after queries, MiB', (m) => `${m.readyRss.toFixed(0)} / ${m.servedRss.toFixed(0)}`),
      ...measured[0].results.map((r, i) => row(`${r.query}, p50 / p99 ms`, (m) => `${m.results[i].p50} / ${m.results[i].p99}`)),
    ];
    console.log('\nHow cost grows with the registry\n');
    console.table(rows);
  }
  // decisions.md's line, last: one JSON object per size.
  for (const m of measured) {
    console.log(`server memory ready / after queries at ${m.establishments.toLocaleString('en')}: ${m.readyRss.toFixed(0)} / ${m.servedRss.toFixed(0)} MiB`);
  }
  for (const m of measured) console.log(JSON.stringify(m.line));
} finally {
  await rm(work, { recursive: true, force: true });
}
