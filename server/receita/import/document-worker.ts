/**
 * The worker thread of a bulk-loaded import (see document-thread.ts). It reads per-company files
 * into staged blocks. Into a release file, it joins each batch of establishments, builds and
 * encodes their documents and stages them in a rows file of its own (thread-staging.ts); into the
 * store's bulk load, it builds and encodes each batch the importer's thread joined, and transfers
 * the bytes back. At the end of an import into a release file, one of them builds its search tables.
 */
import { parentPort } from 'node:worker_threads';
import { encodeUntaggedDocuments } from '../../store/embedded/bulk-load.ts';
import { companyDocuments, type DocumentContext } from './documents.ts';
import type { BuildReply, BuildRequest } from './document-thread.ts';
import { Codes, type UnknownCodes } from './records.ts';
import { cutShort, openReleaseFile, readRowBatches, type Problem } from './rows.ts';
import { rowLayoutOf } from './row-layout.ts';
import { stageRows, type CompanyFileKind } from './staged-rows.ts';
import type { ReleaseFile } from './release-files.ts';
import { RecordEncoder } from '../../companies/registry/record-codec.ts';
import { stagedRows } from '../../companies/registry/staged-row.ts';
import type { ThreadStaging } from './thread-staging.ts';

/** Staged blocks a file's reading may run ahead of the importer taking them. */
const BLOCKS_AHEAD = 4;

let context: DocumentContext | undefined;
let indexed: string[] = [];
/** What this thread stores into a release file (registry/): its rows file; for the establishments, the files they join and their encoder. */
interface Storing {
  rows: ThreadStaging;
  join?: { release: string; stage: string };
  encoder?: RecordEncoder;
}
/** The rows file opened last, by its path (once: the files read ahead ask for it at the same time). */
let storing: { path: string; opened: Promise<Storing> } | undefined;

function rowsFile(path: string): Promise<Storing> {
  if (storing?.path === path) return storing.opened;
  const previous = storing?.opened;
  const opened = (async () => {
    (await previous?.catch(() => undefined))?.rows.close();
    const { ThreadStaging } = await import('./thread-staging.ts');
    return { rows: new ThreadStaging(path) };
  })();
  storing = { path, opened };
  return opened;
}
/** Per stage request, the blocks sent and not taken yet, and the reading waiting for room. */
const ahead = new Map<number, { sent: number; room?: () => void }>();

const reply = (message: BuildReply, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(message, transfer);

parentPort!.on('message', (request: BuildRequest) => {
  switch (request.kind) {
    case 'context':
      context = request.context;
      indexed = request.indexed;
      return;
    case 'taken': {
      const reading = ahead.get(request.id);
      if (!reading) return;
      reading.sent--;
      const room = reading.room;
      reading.room = undefined;
      room?.();
      return;
    }
    case 'stage':
      stage(request.id, request.file, request.skip, request.into).catch((err: Error & { code?: unknown }) =>
        reply({ id: request.id, error: err.message, ...(typeof err.code === 'string' ? { code: err.code } : {}) }),
      );
      return;
    // Loaded when asked: SQLite is no part of most imports' worker threads.
    case 'search tables':
      return done(request.id, import('./search-tables.ts').then(({ buildSearchTables }) => buildSearchTables(request.path, request.stagePath, request.rowsPaths)));
    case 'open staging': {
      const { path, stagePath, rowsPath, codec } = request;
      return done(request.id, async () => {
        const opened = await rowsFile(rowsPath);
        opened.join = { release: path, stage: stagePath };
        opened.encoder = new RecordEncoder(codec);
      });
    }
    case 'stage batch':
      return done(request.id, async () => {
        const { rows, join, encoder } = await storing!.opened;
        const unknown = {};
        const joined = request.joined ?? rows.join(request.rows.map((row) => row.cnpj), join!);
        const docs = companyDocuments({ rows: request.rows, ...joined }, context!, unknown);
        rows.put(stagedRows(docs, encoder!, request.rows));
        return { stagedRows: request.rows.length, unknown };
      });
    case 'close staging':
      return done(request.id, async () => {
        const closing = storing;
        storing = undefined;
        (await closing?.opened)?.rows.close();
      });
    case 'gather':
      return done(request.id, import('./staging.ts').then(({ gatherStaged }) => gatherStaged(request.stagePath, request.rowsPaths)));
    case 'batch':
      try {
        const unknown = {};
        const encoded = encodeUntaggedDocuments(companyDocuments(request.batch, context!, unknown), indexed);
        reply({ id: request.id, encoded, unknown }, [encoded.bytes.buffer as ArrayBuffer]);
      } catch (err) {
        reply({ id: request.id, error: (err as Error).message });
      }
  }
});

/** Replies once `work` is done (with what it gave, if anything), or with its error (and SQLite's code, which tells a full disk). */
function done(id: number, work: Promise<void | { stagedRows: number; unknown: UnknownCodes }> | (() => Promise<void | { stagedRows: number; unknown: UnknownCodes }>)): void {
  (typeof work === 'function' ? work() : work)
    .then((result) => reply(result ? { id, ...result } : { id, done: true }))
    .catch((err: Error & { code?: unknown }) => reply({ id, error: err.message, ...(typeof err.code === 'string' ? { code: err.code } : {}) }));
}

/** As the importer's own thread reads a per-company file (importer.ts's importFile), block by block. */
async function stage(id: number, file: ReleaseFile, skip: number, into?: { rowsPath: string; place: number }): Promise<void> {
  const reading: { sent: number; room?: () => void } = { sent: 0 };
  ahead.set(id, reading);
  let problems: Problem[] = [];
  let unknown: UnknownCodes = {};
  const codes = () => new Codes(context!.lookups, unknown);
  let ended = true;
  const report = (problem: Problem) => {
    if (cutShort(problem)) ended = false;
    problems.push(problem);
  };
  try {
    const opened = await openReleaseFile(file, report);
    if (!opened) return reply({ id, end: { opened: false, ended: false, problems } });
    ended = !opened.damaged;
    const { columns, layout } = rowLayoutOf(file.kind);
    let seen = 0;
    for await (const rows of readRowBatches(opened.stream, file, columns, report, layout)) {
      const fresh = seen >= skip ? rows : rows.slice(Math.min(rows.length, skip - seen));
      seen += rows.length;
      const staged = stageRows(file.kind as CompanyFileKind, file.name, fresh, codes(), report);
      // Into a release file, stored here: only how many rows cross back.
      const block = into ? { stored: (await rowsFile(into.rowsPath)).rows.stageCompanies(file.kind as CompanyFileKind, staged, into.place) } : staged;
      reply({ id, staged: { rows: rows.length, ...block, problems, unknown } });
      problems = [];
      unknown = {};
      if (++reading.sent >= BLOCKS_AHEAD) await new Promise<void>((resolve) => (reading.room = resolve));
    }
    reply({ id, end: { opened: true, ended, problems } });
  } finally {
    ahead.delete(id);
  }
}
