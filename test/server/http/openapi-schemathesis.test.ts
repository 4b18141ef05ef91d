/**
 * Issue 43: /openapi.json describes the server exactly. schemathesis (PyPI, the version .ci/run
 * pins) generates requests from the document and runs all its checks against a real server with
 * the demo data, fake providers and a fake model: every status documented, every answer and event
 * valid against its schema, every schema-valid request taken and every schema-violating one
 * refused. `schemathesis_hooks.py` teaches it what JSON Schema cannot say (valid check digits,
 * a fresh `Idempotency-Key` per request, cursors that come from a previous page).
 *
 * Opt-in: it runs when $SCHEMATHESIS names the executable (installed into a virtual environment);
 * otherwise the file skips after one line.
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
const SCHEMATHESIS = process.env.SCHEMATHESIS ?? '';
/** Cases per operation and phase: enough to meet every rule of the document, few enough for ~1-2 minutes. */
const EXAMPLES = 10;
/** And a time budget for the whole run, so that a busy machine makes it shallower, not endless. */
const MAX_SECONDS = 150;

// Opt-in while the document still has known gaps (issue 43, item 11: see docs/api.md): a run takes
// minutes, and the suite must stay within its budget. SCHEMATHESIS=path/to/schemathesis runs it.
const installed = SCHEMATHESIS !== '' && spawnSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' }).status === 0;
if (!installed) console.warn('Skipping the schemathesis run: set SCHEMATHESIS to its executable (pip install schemathesis==4.32.5) to run it.');

/**
 * Rules the server keeps that JSON Schema cannot say, so a schema-valid request meets them (ST202),
 * each with why; any other failure fails the test. `message` matches the server's 400.
 */
const COMPANY_FILTER_RULES =
  /must contain at least one word|must contain a letter or digit|must name a city or a state|must be a Brazilian state code|name different|must be one of micro|must be a CNAE code|must be a CPF|legal nature code|must not be (greater|after)/;
const EXPECTED_FAILURES: Array<{ operation: string; check: string; message: RegExp; why: string }> = [
  ...['POST /api/companies/search', 'POST /api/companies/search/stream'].map((operation) => ({
    operation,
    check: 'ST202',
    message: COMPANY_FILTER_RULES,
    why: 'free-text filters are read for words (stop words and one-letter words left out), places and codes; no pattern says that',
  })),
  {
    operation: 'POST /api/jobs',
    check: 'ST202',
    message: /^items\[\d+\]\.input/,
    why: "each item's input is checked against its operation's own body; the schema does not yet say which body goes with which `operation` (a discriminated oneOf)",
  },
];

interface Failure {
  operation: string;
  check: string;
  message: string;
}

/** The failures of schemathesis's text report: per operation, each check that failed and the server's message. */
function failuresOf(output: string): Failure[] {
  const section = output.split(/^=+ FAILURES =+$/m)[1]?.split(/^=+ [A-Z ]+ =+$/m)[0] ?? '';
  const failures: Failure[] = [];
  let operation = '';
  let pending: string[] = [];
  for (const line of section.split('\n')) {
    const header = /^_+ (.+?) _+$/.exec(line);
    const caseStart = /^\d+\. Test Case ID/.test(line);
    if ((header || caseStart) && pending.length) {
      // A case whose answer was no JSON error (a stream, a success): no message to match.
      failures.push(...pending.map((code) => ({ operation, check: code, message: '' })));
      pending = [];
    }
    if (header) operation = header[1]!;
    const check = /^- (ST\d+)/.exec(line);
    if (check) pending.push(check[1]!);
    const body = /^\s+`(\{.*\})`$/.exec(line);
    if (body && pending.length) {
      let message = '';
      try {
        message = String((JSON.parse(body[1]!) as { message?: unknown }).message ?? '');
      } catch {
        // a body cut short in the report: no message to match
      }
      failures.push(...pending.map((code) => ({ operation, check: code, message })));
      pending = [];
    }
  }
  failures.push(...pending.map((code) => ({ operation, check: code, message: '' })));
  return failures;
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
      '60',
      '--request-retries',
      '2',
      '--no-color',
    ], cwd);
    // It ran: the document loaded and cases were sent.
    expect(output, output).toMatch(/Test cases:\s+\d+ generated/);
    const unexpected = failuresOf(output).filter(
      (f) => !EXPECTED_FAILURES.some((e) => e.operation === f.operation && e.check === f.check && e.message.test(f.message)),
    );
    // Each failure with its curl: what to fix, in the test's output.
    expect(unexpected, output.slice(output.indexOf('FAILURES'))).toEqual([]);
    // The exit code counts the expected failures too; what must not happen is the run itself breaking.
    if (code !== 0) expect(output).not.toMatch(/Schema Error|Unexpected error|Internal Error/i);
  }, (MAX_SECONDS + 150) * 1000);
});
