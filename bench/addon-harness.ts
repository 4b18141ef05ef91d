/**
 * The body of `npm run bench:addon` (bench/addon.mjs bundles and runs it): the add-on, over the
 * test harness's Apps Script fakes, enriches 1,000 person rows (then the same rows again, which
 * the workspace's enrichment memory answers) and fills 2,000 CNPJ rows against a real server
 * (its own process, a synthetic registry, fake providers in another process). Each run is larger
 * than one fetchAll, so it becomes a server job; the bench polls it once a second, as the Jobs
 * panel and the trigger do, until every result is written.
 *
 * The 6-minute execution limit is simulated: every UrlFetchApp call is charged 30 s on the
 * add-on's clock on top of its real time (a pessimistic figure for Apps Script calling a server
 * that calls providers), so a poll with many pages to write hands over as it would in Apps Script.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
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

const POLL_MS = 1000;

async function run(name: string, kind: 'cnpj' | 'enrich', sheet: FakeSheet, options: Record<string, unknown>) {
  const calls = gas.http.calls;
  const started = performance.now();
  const job: Job = A.startRun(runtime, kind, name, 2, sheet.getLastRow(), options as never);
  let executions = 1;
  while (A.activeJobs(A.documentProperties()).length > 0 && executions < 600) {
    await wait(POLL_MS);
    A.runJobs(A.jobDeps(runtime));
    executions++;
  }
  const done = A.loadJob(A.documentProperties(), job.id)!;
  const statuses = sheet.column(STATUS_COLUMN);
  const lost = statuses.filter((s) => !s.includes(`job ${job.id}`)).length;
  const twice = statuses.filter((s) => s.split(`job ${job.id}`).length > 2).length;
  const credits = (await fetch(`${server.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${apiKey}` } }).then((r) => r.json())) as { consumed: number };
  return { calls: gas.http.calls - calls, executions, lost, twice, seconds: (performance.now() - started) / 1000, job: done, consumed: credits.consumed };
}

try {
  const people = gas.addSheet('People', [['Name', 'Website'], ...Array.from({ length: PEOPLE }, (_, i) => [`First${i} Last${i}`, `company${i % 50}.example`])]);
  const fields = ['email', 'title', 'linkedinUrl'];
  const p = await run('People', 'enrich', people, { fields });
  // The same rows again, overwriting: every subject was paid for a moment ago.
  const again = await run('People', 'enrich', people, { fields, overwrite: true });
  const companies = gas.addSheet('Companies', [['CNPJ'], ...cnpjs.slice(0, CNPJ_ROWS).map((c) => [c])]);
  const c = await run('Companies', 'cnpj', companies, {});
  const cached = people.column(STATUS_COLUMN).filter((s) => s.includes(' · cached · ')).length;

  console.log(
    `bench:addon, Node ${process.version}: each run is a server job polled every ${POLL_MS / 1000} s (an execution each); ` +
      'each UrlFetchApp call counted as 30 s against a 4.5-minute budget per 6-minute execution',
  );
  const line = (label: string, r: typeof p, target: number, charged: number, extra = '') =>
    console.log(
      `  ${label.padEnd(26)} ${String(r.calls).padStart(3)} fetch calls (target <= ${target})   ${r.executions} execution(s)   ` +
        `${r.lost} rows lost, ${r.twice} processed twice   ${r.job.totals.done} filled, ${r.job.totals.skipped} skipped, ${r.job.totals.failed} failed   ` +
        `${charged} credits charged${extra}   ${r.seconds.toFixed(1)} s`,
    );
  line(`enrich ${PEOPLE} people`, p, 50, p.consumed);
  line(`same ${PEOPLE} again (memory)`, again, 50, again.consumed - p.consumed, `, ${cached} cached`);
  line(`CNPJ fill ${CNPJ_ROWS} rows`, c, 6, c.consumed - again.consumed);
} finally {
  server.child.kill('SIGTERM');
  await server.exited;
  providers.stop();
  await rm(work, { recursive: true, force: true });
}
