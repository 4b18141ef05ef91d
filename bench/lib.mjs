// What the benchmarks share: the built server as its own process on a fresh embedded store with
// a funded workspace, the tests' TypeScript fakes bundled for plain Node, and percentiles.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

export const root = fileURLToPath(new URL('..', import.meta.url));
/** Enough that no benchmark runs out. */
const CREDITS = 100_000_000;

/** The value at quantile `q` (0–1) of `values`. */
export const pct = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

/** A TypeScript module of the repository (a test fake), bundled into `workDir` and imported. */
export async function importTs(entry, workDir) {
  const outfile = path.join(workDir, `${path.basename(entry, '.ts')}.mjs`);
  await build({ absWorkingDir: root, entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

const keptAlive = new http.Agent({ keepAlive: true });

/**
 * POSTs `body` (a string) over one kept-alive connection per process with node:http; resolves
 * with the status, headers and text. Latency benchmarks use it rather than fetch: on Node 20,
 * fetch's POST with a body costs 1.5 to 2 ms of its own on loopback (a POST the server answers at
 * once, with a 404, took 2.5 to 3.4 ms at p50 through fetch and 1.1 to 1.3 ms through node:http
 * on a busy machine), more than the server's whole time for a single CNPJ.
 */
export function post(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent: keptAlive, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `npx prospecta …` to completion; resolves with its JSON output. */
export function cli(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/prospecta.mjs', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`prospecta ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

/**
 * dist/server.mjs on its own store in `dataDir`, with a workspace on an active plan holding
 * CREDITS (and, with `demo`, the demo registry's companies to look up);
 * `call(method, route, body)` sends an authenticated request and returns its JSON; `env` is
 * what the server runs with, for CLI commands that reach it through its control socket; `child`
 * is the server process.
 */
/** `call(method, route, body)`: one /v1/api request with the key, its JSON answer, or a throw saying what failed. */
export const apiCaller = (url, apiKey) => async (method, route, body) => {
  const res = await fetch(`${url}/v1/api${route}`, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
};

export async function startInstance(dataDir, env = {}, { demo = false, stderr, tries } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const fullEnv = { DATA_DIR: dataDir, PORT: String(port), PUBLIC_URL: url, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '10000000', ...env };
  if (demo) await cli(['seed', 'demo'], fullEnv);
  const { workspaceId, apiKey } = await cli(['workspace', 'create', '--name', 'bench', '--plan', 'active'], fullEnv);
  await cli(['credits', 'grant', '--workspace', workspaceId, '--amount', String(CREDITS)], fullEnv);
  const { child } = await launchServer(fullEnv, { stderr, ...(tries ? { tries } : {}) });
  const call = apiCaller(url, apiKey);
  return { url, env: fullEnv, workspaceId, apiKey, call, child, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) };
}

/**
 * dist/server.mjs as its own process with `env` (which holds its DATA_DIR, PORT and PUBLIC_URL),
 * resolved once `/v1/health` answers 200: the child, and the milliseconds that took. Its stderr
 * is this process's, or with `stderr: 'pipe'` the caller's to read.
 */
export async function launchServer(env, { tries = 100, stderr = 'inherit' } = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/server.mjs'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', stderr] });
  for (let tried = 0; !(await fetch(`${env.PUBLIC_URL}/v1/health`).then((r) => r.ok, () => false)); tried++) {
    if (tried > tries || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the server on ${env.PUBLIC_URL} did not start`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, ms: performance.now() - started };
}
