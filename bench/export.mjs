// npm run bench:export — an export of EXPORT_ROWS (default 100,000) establishments, on the built
// server over a fresh embedded store holding a synthetic release of that many (`prospecta
// generate cnpj`, then `import cnpj`). For CSV and NDJSON: rows per second from the start to the
// job's end, the file's size and its download's seconds, and the server's resident memory: its
// peak before the export (the registry loaded and searched) and after it, so what the export
// added shows. A whole export reads one page of 1,000 rows at a time, so it should add little.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli, startInstance } from './lib.mjs';

const ROWS = Number(process.env.EXPORT_ROWS ?? 100_000);
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-export-'));
const dataDir = path.join(work, 'data');
const releaseDir = path.join(work, 'release');
const f = (n) => n.toFixed(1);
const mib = (kib) => f(kib / 1024);
const status = async (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

try {
  let t = performance.now();
  await cli(['generate', 'cnpj', '--dir', releaseDir, '--establishments', String(ROWS)], { DATA_DIR: dataDir });
  await cli(['import', 'cnpj', '--dir', releaseDir], { DATA_DIR: dataDir });
  console.log(`release of ${ROWS.toLocaleString('en')} establishments generated and imported in ${f((performance.now() - t) / 1000)} s`);

  const server = await startInstance(dataDir, { JOBS_POLL_MS: '200' }, { tries: 1200 });
  try {
    // The registry read once, as a search would, before the first export is measured.
    await server.call('POST', '/companies/search', { limit: 20 });
    const pid = server.child.pid;
    for (const format of ['csv', 'ndjson']) {
      const before = { peak: await status(pid, 'VmHWM'), rss: await status(pid, 'VmRSS') };
      t = performance.now();
      const { jobId } = await server.call('POST', '/companies/export', { format, maxRows: ROWS });
      let job;
      do {
        await new Promise((r) => setTimeout(r, 200));
        job = await server.call('GET', `/jobs/${jobId}`);
      } while (['queued', 'running'].includes(job.status));
      const seconds = (performance.now() - t) / 1000;
      const after = { peak: await status(pid, 'VmHWM'), rss: await status(pid, 'VmRSS') };
      t = performance.now();
      const res = await fetch(`${server.url}/v1/api/jobs/${jobId}/export`, { headers: { Authorization: `Bearer ${server.apiKey}` } });
      const bytes = (await res.arrayBuffer()).byteLength;
      const download = (performance.now() - t) / 1000;
      console.log(
        `${format}: ${job.status}, ${job.done.toLocaleString('en')} rows in ${f(seconds)} s = ${Math.round(job.done / seconds).toLocaleString('en')} rows/s; ` +
          `file ${f(bytes / 1048576)} MiB, downloaded in ${f(download)} s; ` +
          `server RSS ${mib(before.rss)} → ${mib(after.rss)} MiB, peak ${mib(before.peak)} → ${mib(after.peak)} MiB`,
      );
    }
  } finally {
    await server.stop();
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
