/**
 * Issue 43: /openapi.json describes the server exactly. schemathesis (PyPI, the version .ci/run
 * pins) generates requests from the document and runs all its checks against a real server with
 * the demo data, fake providers and a fake model: every status documented, every answer and event
 * valid against its schema, every schema-valid request taken and every schema-violating one
 * refused. `schemathesis_hooks.py` teaches it what JSON Schema cannot say (valid check digits,
 * a fresh `Idempotency-Key` per request, cursors that come from a previous page).
 *
 * schemathesis is found at $SCHEMATHESIS (.ci/run installs it into a virtual environment in its
 * cache folder) or on PATH. Without it the file skips after one line; under CI=true it fails.
 * Examples per operation are few and the seed fixed: the run is bounded and repeats.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.ts';
import { startFakeWeb, type FakeWeb } from '../../helpers/fake-llm.ts';
import { startFakeProviderProcess, startServer, track, type ServerProcess } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const HOOKS = fileURLToPath(new URL('./schemathesis_hooks.py', import.meta.url));
const SCHEMATHESIS = process.env.SCHEMATHESIS || 'schemathesis';
/** Cases per operation and phase: enough to meet every rule of the document, few enough for ~1-2 minutes. */
const EXAMPLES = 10;
/** And a time budget for the whole run, so that a busy machine makes it shallower, not endless. */
const MAX_SECONDS = 150;

const found = spawnSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' });
const installed = found.status === 0;
if (!installed) {
  const missing = `schemathesis is not installed (${SCHEMATHESIS}; .ci/run installs it into a virtual environment and sets SCHEMATHESIS)`;
  if (/^(true|1)$/i.test(process.env.CI ?? '')) throw new Error(`CI=true, so every test must run, but ${missing}`);
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
    server = await startServer({
      ...providers.env,
      SEARXNG_URL: web.url,
      DATA_DIR: await tempDir('schemathesis'),
      RATE_LIMIT_PER_MINUTE: '10000000',
    });
    // The demo workspace's key, printed once on its first start.
    await eventually(() => /service_live_\S+/.test(server.stderr()), { message: 'the demo API key' });
    apiKey = /service_live_\S+/.exec(server.stderr())![0];
  }, 120_000);
  afterAll(() => web?.close());

  it('finds nothing with all its checks', async () => {
    const cwd = await tempDir('schemathesis-run');
    const { code, output } = await schemathesis([
      'run',
      `${server.url}/openapi.json`,
      '--checks',
      'all',
      '--header',
      `Authorization: Bearer ${apiKey}`,
      '--max-examples',
      String(EXAMPLES),
      '--seed',
      '43',
      '--max-time',
      String(MAX_SECONDS),
      '--request-timeout',
      '30',
      '--no-color',
    ], cwd);
    expect(output).toMatch(/Schemathesis v\d/);
    // The summary and each failure with its curl: what to fix, in the test's output.
    expect(code, output.slice(output.indexOf('FAILURES'))).toBe(0);
  }, (MAX_SECONDS + 150) * 1000);
});
