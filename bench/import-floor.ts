/**
 * bench:cnpj's import floor: the least any import of a release must do — read its files, inflate
 * them and split them into rows with the importer's own reader and splitter (rows.ts, with the
 * layout row-layout.ts gives each kind) — and nothing else, one file per thread on every core.
 * The import's time is printed as a ratio of this one, measured in the same run, since absolute
 * times move by a factor of two between machines. Bundled by bench/cnpj.mjs; the
 * bundle is also the threads' script.
 */
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { findReleaseFiles, type ReleaseFile } from '../server/receita/import/release-files.ts';
import { rowLayoutOf } from '../server/receita/import/row-layout.ts';
import { openReleaseEntries, readRowBatches } from '../server/receita/import/rows.ts';

const ROLE = 'prospecta-import-floor';

/** Every row of one file, read and thrown away; how many there were. */
async function readWhole(file: ReleaseFile): Promise<number> {
  const { columns, layout } = rowLayoutOf(file.kind);
  let rows = 0;
  for await (const opened of openReleaseEntries(file, () => undefined)) {
    for await (const block of readRowBatches(opened.stream, file, columns, () => undefined, layout)) rows += block.length;
  }
  return rows;
}

if (!isMainThread && workerData === ROLE) {
  parentPort!.on('message', (file: ReleaseFile) => {
    void readWhole(file).then((rows) => parentPort!.postMessage(rows));
  });
}

/** The release in `dir` read as the floor reads it: the seconds it took and the rows it held. */
export async function importFloor(dir: string, threads = availableParallelism()): Promise<{ seconds: number; rows: number; threads: number }> {
  const started = performance.now();
  // Largest first, so the last file to finish is a small one.
  const queue = (await findReleaseFiles(dir)).sort((a, b) => b.size - a.size);
  const script = new URL(import.meta.url);
  let rows = 0;
  const count = Math.min(threads, queue.length);
  await Promise.all(
    Array.from({ length: count }, async () => {
      const worker = new Worker(script, { workerData: ROLE });
      try {
        for (let file = queue.shift(); file; file = queue.shift()) {
          let failed: (err: Error) => void = () => undefined;
          const next = new Promise<number>((resolve, reject) => {
            failed = reject;
            worker.once('message', resolve);
            worker.once('error', failed);
          });
          worker.postMessage(file);
          const read = await next.finally(() => worker.off('error', failed));
          rows += read; // not `rows += await …`, which reads `rows` before the other threads add theirs
        }
      } finally {
        await worker.terminate();
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, rows, threads: count };
}
