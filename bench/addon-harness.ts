/**
 * The body of `npm run bench:addon` (bench/addon.mjs bundles and runs it): the add-on, over the
 * test harness's Apps Script fakes, enriches 1,000 person rows and fills 2,000 CNPJ rows against
 * a real server (its own process, a synthetic registry, fake providers in another process).
 *
 * The 6-minute execution limit is simulated: every UrlFetchApp call is charged 30 s on the
 * add-on's clock on top of its real time (a pessimistic figure for Apps Script calling a server
 * that calls providers), so long runs hand over to triggers as they would in Apps Script.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { STATUS_COLUMN, type Job } from '../addon/features/job.ts';
import type { Runtime } from '../addon/features/runs.ts';
import { controlSocketPath, sendControl } from '../server/cli/control.ts';
import { addonIn } from '../test/helpers/addon-sandbox.ts';
import { fakeGas, type FakeSheet } from '../test/helpers/fake-gas.ts';
import { runCli, startFakeProviderProcess, startServer } from '../test/helpers/processes.ts';
import { unzip } from '../test/helpers/zip.ts';

const PEOPLE = 1000;
const CNPJ_ROWS = 2000;
const CALL_COST_MS = 30_000;

const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-addon-'));
const release = path.join(work, 'release');
await runCli(['generate', 'cnpj', '--dir', release, '--establishments', String(CNPJ_ROWS)], {});
await runCli(['import', 'cnpj', '--dir', release], { DATA_DIR: work });
const zips = (await readdir(release)).filter((f) => f.startsWith('Estabelecimentos'));
const cnpjs = (await Promise.all(zips.map((f) => unzip(path.join(release, f)))))
  .flat()
  .flatMap((e) => e.bytes.toString('latin1').split('\n'))
  .filter(Boolean)
  .map((line) => line.split(';').slice(0, 3).map((f) => f.replace(/"/g, '')).join(''));

const providers = await startFakeProviderProcess(PEOPLE);
const fast = Object.fromEntries(
  ['HUNTER', 'HUNTER_VERIFIER', 'APOLLO', 'PDL'].flatMap((p) => [
    [`${p}_RATE_PER_SECOND`, '2000'],
    [`${p}_RATE_PER_MINUTE`, '1000000'],
    [`${p}_MAX_CONCURRENT`, '50'],
  ]),
);
const server = await startServer({ DATA_DIR: work, RATE_LIMIT_PER_MINUTE: '100000', ...providers.env, ...fast });
const control = async (command: string, args: Record<string, string>) => {
  const reply = await sendControl(controlSocketPath(work), { command, args });
  if (!reply.ok) throw new Error(reply.message);
  return reply.result as { workspaceId: string; apiKey: string };
};
const { workspaceId, apiKey } = await control('workspace create', { name: 'bench', plan: 'active' });
await control('credits grant', { workspace: workspaceId, amount: '1000000' });

// The add-on runs as in the tests: in a vm context holding only Apps Script's globals, over the
// fakes, each call from here one execution held to its 6 minutes of simulated time.
const gas = fakeGas();
const A = await addonIn(gas);
A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
const http = A.urlFetch();
const runtime: Runtime = {
  http: {
    fetch: (r) => (gas.quotas.advance(CALL_COST_MS), http.fetch(r)),
    fetchAll: (r) => (gas.quotas.advance(CALL_COST_MS), http.fetchAll(r)),
  },
  user: A.userProperties(),
  document: A.documentProperties(),
  sheet: A.sheetNamed,
  triggers: A.gasTriggers,
  lock: A.documentLock(),
  clock: A.gasClock,
};

async function run(name: string, kind: 'cnpj' | 'enrich', sheet: FakeSheet, options: Record<string, unknown>) {
  const calls = gas.http.calls;
  const started = performance.now();
  const job: Job = A.newJob(A.documentProperties(), { kind, sheet: name, first: 2, last: sheet.getLastRow(), options }, runtime.clock);
  let executions = 0;
  do {
    A.runJobs(A.jobDeps(runtime));
    executions++;
  } while (A.activeJobs(A.documentProperties()).length > 0 && executions < 50);
  const done = A.loadJob(A.documentProperties(), job.id)!;
  const statuses = sheet.column(STATUS_COLUMN);
  const lost = statuses.filter((s) => !s.includes(`job ${job.id}`)).length;
  const twice = statuses.filter((s) => s.split(`job ${job.id}`).length > 2).length;
  const credits = (await fetch(`${server.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${apiKey}` } }).then((r) => r.json())) as { consumed: number };
  return { calls: gas.http.calls - calls, executions, lost, twice, seconds: (performance.now() - started) / 1000, job: done, consumed: credits.consumed };
}

try {
  const people = gas.addSheet('People', [['Name', 'Website'], ...Array.from({ length: PEOPLE }, (_, i) => [`First${i} Last${i}`, `company${i % 50}.example`])]);
  const p = await run('People', 'enrich', people, { fields: ['email', 'title', 'linkedinUrl'] });
  const companies = gas.addSheet('Companies', [['CNPJ'], ...cnpjs.slice(0, CNPJ_ROWS).map((c) => [c])]);
  const consumedBefore = p.consumed;
  const c = await run('Companies', 'cnpj', companies, {});

  console.log(`bench:addon, Node ${process.version}: each UrlFetchApp call counted as 30 s against a 4.5-minute budget per 6-minute execution`);
  const line = (label: string, r: typeof p, target: number, charged: number) =>
    console.log(
      `  ${label.padEnd(22)} ${String(r.calls).padStart(3)} fetch calls (target <= ${target})   ${r.executions} execution(s)   ` +
        `${r.lost} rows lost, ${r.twice} processed twice   ${r.job.totals.done} filled, ${r.job.totals.skipped} skipped, ${r.job.totals.failed} failed   ` +
        `${charged} credits charged   ${r.seconds.toFixed(1)} s`,
    );
  line(`enrich ${PEOPLE} people`, p, 50, p.consumed);
  line(`CNPJ fill ${CNPJ_ROWS} rows`, c, 6, c.consumed - consumedBefore);
} finally {
  server.child.kill('SIGTERM');
  await server.exited;
  providers.stop();
  await rm(work, { recursive: true, force: true });
}
