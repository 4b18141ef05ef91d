/**
 * Issue 43: /openapi.json describes the server exactly. schemathesis (PyPI, the version .ci/run
 * pins) generates requests from the document and runs all its checks against a real server with
 * the demo data, fake providers and a fake model: every status documented, every answer and event
 * valid against its schema, every schema-valid request taken and every schema-violating one
 * refused. It must find nothing. `schemathesis_hooks.py` teaches it what JSON Schema cannot say
 * (check digits, a fresh `Idempotency-Key` per request, cursors from a previous page, a name's
 * words, a minimum not above its maximum…), each rule stated in the document's descriptions.
 *
 * It runs where schemathesis is installed ($SCHEMATHESIS, else on PATH; .ci/run installs it into a
 * virtual environment) and otherwise skips after one line, except under CI=true, where it fails.
 * The run is bounded: a fixed seed, a few cases per operation and a time budget, so that it adds
 * under a minute to the suite (the server's start included). For a deeper run, e.g. before changing the
 * registry's schemas: ST_PHASES=coverage,fuzzing ST_EXAMPLES=10 ST_MAX_SECONDS=900 (several minutes).
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { startFakeWeb, type FakeWeb } from '../../helpers/fake-llm.ts';
import { runCli, startFakeProviderProcess, startServer, track, type ServerProcess } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const HOOKS = fileURLToPath(new URL('./schemathesis_hooks.py', import.meta.url));
/** `$SCHEMATHESIS` (.ci/run sets it to its virtual environment's), else the one on PATH. */
const SCHEMATHESIS = process.env.SCHEMATHESIS || 'schemathesis';
/**
 * Random cases, schema-valid and schema-violating, a few per operation. The coverage phase (each
 * schema's boundaries and violations, ~900 cases) is the deeper run's: it finds nothing either,
 * but takes minutes.
 */
const PHASES = process.env.ST_PHASES ?? 'fuzzing';
const EXAMPLES = Number(process.env.ST_EXAMPLES ?? 2);
/** Two threads: the server answers one case while schemathesis builds the next. */
const WORKERS = 2;
/**
 * And a time budget, so that the suite keeps its own (npm test is at its 10 minutes): an idle
 * machine runs every case within it, a busy one fewer. ST_MAX_SECONDS raises it for a deeper run.
 */
const MAX_SECONDS = Number(process.env.ST_MAX_SECONDS ?? 30);

const installed = spawnSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' }).status === 0;
if (!installed) {
  const missing = `no schemathesis at ${SCHEMATHESIS} (a Python tool: python3 -m venv ~/.venvs/schemathesis && ~/.venvs/schemathesis/bin/pip install schemathesis==4.32.5, then set SCHEMATHESIS=~/.venvs/schemathesis/bin/schemathesis); .ci/run does this`;
  // Under CI=true every test must run (.ci/run installs it), as the global setup rules for Redis and Chromium.
  if (/^(true|1)$/i.test(process.env.CI ?? '')) throw new Error(`CI=true, so every test must run, but there is ${missing}`);
  console.warn(`Skipping the schemathesis run: ${missing}.`);
}

let server: ServerProcess;
let web: FakeWeb;
let apiKey: string;

/** `cwd`: a folder of its own, for the `.hypothesis` database it writes there. */
function schemathesis(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(SCHEMATHESIS, args, {
        env: { ...process.env, SCHEMATHESIS_HOOKS: HOOKS, NO_COLOR: '1', PYTHONIOENCODING: 'utf-8' },
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!installed)('schemathesis against /openapi.json', () => {
  beforeAll(async () => {
    const providers = await startFakeProviderProcess();
    web = await startFakeWeb();
    // PUBLIC_URL is the server's own address: the dashboard's operations are documented under it.
    const port = await freePort();
    const dataDir = await tempDir('schemathesis');
    server = await startServer({
      ...providers.env,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      SEARXNG_URL: web.url,
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '10000000',
    });
    // The demo workspace's key, printed once on its first start.
    await eventually(() => /service_live_\S+/.test(server.stderr()), { message: 'the demo API key' });
    apiKey = /service_live_\S+/.exec(server.stderr())![0];
    // A deeper run sends more paid calls than the demo's 10,000 credits pay for: a 402 there would be no finding.
    const workspaceId = /Demo workspace (\S+);/.exec(server.stderr())![1]!;
    const granted = await runCli(['credits', 'grant', '--workspace', workspaceId, '--amount', '1000000'], { DATA_DIR: dataDir });
    expect(granted.code, granted.stderr).toBe(0);
  }, 120_000);
  afterAll(() => web?.close());

  it('finds nothing with all its checks', async () => {
    const cwd = await tempDir('schemathesis-run');
    const started = Date.now();
    const { code, output } = await schemathesis(
      [
        'run',
        `${server.url}/openapi.json`,
        '--checks',
        'all',
        // How fast an answer comes is the benchmarks' business (bench/), not the document's.
        '--max-response-time',
        '60',
        '--header',
        `Authorization: Bearer ${apiKey}`,
        '--phases',
        PHASES,
        '--max-examples',
        String(EXAMPLES),
        '--workers',
        String(WORKERS),
        '--seed',
        '43',
        '--max-time',
        String(MAX_SECONDS),
        '--request-timeout',
        '60',
        // A kept-alive connection the server closes as a request goes out (its idle timeout) is sent again.
        '--request-retries',
        '2',
        '--no-color',
      ],
      cwd,
    );
    console.log(`schemathesis: ${/Test cases:\s+(.*)/.exec(output)?.[1] ?? '?'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // It ran: the document loaded and cases were sent.
    expect(output, output).toMatch(/Test cases:\s+\d+ generated/);
    // Nothing found: no failure, no error. Each failure comes with its curl: what to fix.
    const report = output.slice(Math.max(0, output.search(/^=+ (ERRORS|FAILURES) =+$/m)));
    expect(code, `${report}\nThe server's last log lines:\n${server.stderr().slice(-3000)}${server.stdout().slice(-3000)}`).toBe(0);
  }, (MAX_SECONDS + 120) * 1000);
});
