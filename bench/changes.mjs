// npm run bench:changes — the change feed at the size of a real month (default 1,000,000
// establishments; ESTABLISHMENTS=N): a synthetic release for 2026-09 and the next month of it
// (`prospecta generate cnpj --after 2026-09 --changes 0.02`: about 2 % of establishments changed,
// some opened, a few gone), each imported into the same fresh embedded store as a user runs it.
// Printed: the second import's time against the first's (both in this run, so the ratio holds on
// any machine; target <= 1.3x), the changes it recorded and how many a second, then the latency of
// a changes query by 500 CNPJs (half of them changed) over HTTP, one request at a time (target
// p99 <= 50 ms). The export's figures are bench:export's.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli, pct, startInstance } from './lib.mjs';

const SIZE = Number(process.env.ESTABLISHMENTS ?? 1_000_000);
const RATE = Number(process.env.CHANGE_RATE ?? 0.02);
const QUERY_RUNS = 200;
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-changes-'));
const dataDir = path.join(work, 'data');
const f = (n, digits = 1) => n.toFixed(digits);
const timed = async (run) => {
  const started = performance.now();
  const result = await run();
  return { result, seconds: (performance.now() - started) / 1000 };
};

try {
  console.log(`releases of ${SIZE.toLocaleString('en')} establishments, the second with ${RATE * 100} % changed`);
  const first = path.join(work, '2026-09');
  const second = path.join(work, '2026-10');
  await cli(['generate', 'cnpj', '--dir', first, '--establishments', String(SIZE), '--release', '2026-09'], {});
  await cli(['generate', 'cnpj', '--dir', second, '--establishments', String(SIZE), '--release', '2026-10', '--after', '2026-09', '--changes', String(RATE)], {});

  const before = await timed(() => cli(['import', 'cnpj', '--dir', first], { DATA_DIR: dataDir }));
  const after = await timed(() => cli(['import', 'cnpj', '--dir', second], { DATA_DIR: dataDir }));
  const changes = Object.values(after.result.changes).reduce((sum, n) => sum + n, 0);
  const ratio = after.seconds / before.seconds;
  console.log(`first import ${f(before.seconds)} s (${Math.round(SIZE / before.seconds).toLocaleString('en')}/s), second ${f(after.seconds)} s: ${f(ratio, 2)}x (target <= 1.3x)`);
  console.log(`changes recorded: ${changes.toLocaleString('en')} ${JSON.stringify(after.result.changes)}, ${Math.round(changes / after.seconds).toLocaleString('en')} a second of the import`);

  const server = await startInstance(dataDir, {}, { tries: 1200 });
  try {
    // 250 changed CNPJs (from the feed itself) and 250 others (from a search), asked together.
    const changed = new Set();
    for (let cursor = null; changed.size < 250; ) {
      const page = await server.call('POST', '/companies/changes', { limit: 100, ...(cursor ? { cursor } : {}) });
      for (const change of page.changes) changed.add(change.cnpj);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    const cnpjs = new Set([...changed].slice(0, 250));
    for (let cursor = null; cnpjs.size < 500; ) {
      const page = await server.call('POST', '/companies/search', { limit: 20, state: 'SP', ...(cursor ? { cursor } : {}) });
      for (const company of page.results) if (cnpjs.size < 500) cnpjs.add(company.cnpj);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    const ms = [];
    let returned = 0;
    for (let run = 0; run < QUERY_RUNS; run++) {
      const started = performance.now();
      const page = await server.call('POST', '/companies/changes', { cnpjs: [...cnpjs], limit: 100 });
      ms.push(performance.now() - started);
      returned = page.changes.length;
    }
    console.log(
      `changes by ${cnpjs.size} CNPJs (${returned} changes on the first page), ${QUERY_RUNS} runs: p50 ${f(pct(ms, 0.5))} / p99 ${f(pct(ms, 0.99))} ms (target p99 <= 50 ms)`,
    );
    console.log(
      JSON.stringify({
        establishments: SIZE,
        firstImportSeconds: Number(f(before.seconds)),
        secondImportSeconds: Number(f(after.seconds)),
        importRatio: Number(f(ratio, 2)),
        changes,
        changesPerSecond: Math.round(changes / after.seconds),
        changesQueryP50Ms: Number(f(pct(ms, 0.5))),
        changesQueryP99Ms: Number(f(pct(ms, 0.99))),
      }),
    );
  } finally {
    await server.stop();
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
