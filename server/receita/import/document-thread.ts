/**
 * One worker thread of a bulk-loaded import, so that most of its work leaves the importer's
 * thread. It reads the per-company files (Empresas, Simples, Sócios) into what staging keeps;
 * it joins, builds, encodes and stores the establishments' documents into a release file
 * (`openStaging`, `stageBatch`), or builds and encodes those the importer joined, for a bulk load
 * (`build`). Its answers come in the order asked; a request that fails, or a worker that dies,
 * fails whatever waits on it (and with it the import, which a rerun resumes).
 *
 * The worker starts at once, so that it loads and compiles while the code tables are read; the
 * context (those tables) goes to it with the first request, when they have been read.
 */
import { Worker } from 'node:worker_threads';
import type { EncodedDocuments } from '../../store/port.ts';
import type { DocumentContext, EstablishmentBatch, EstablishmentRow, Joined } from './documents.ts';
import type { UnknownCodes } from './records.ts';
import type { ReleaseFile } from './release-files.ts';
import type { Problem } from './rows.ts';
import type { StagedRows } from './staged-rows.ts';
import type { CodecTables } from '../../companies/registry/record-codec.ts';

export type BuildRequest =
  | { kind: 'context'; context: DocumentContext; indexed: string[] }
  | { kind: 'batch'; id: number; batch: EstablishmentBatch }
  /**
   * Reads a per-company file, its first `skip` rows left out (already staged durably); `into`: a
   * release file's, whose rows the worker stores itself in its rows file (`place`: the file's among the release's).
   */
  | { kind: 'stage'; id: number; file: ReleaseFile; skip: number; into?: CompanyRowsInto }
  /** The importer took one of the request's staged blocks: the worker may read one more ahead. */
  | { kind: 'taken'; id: number }
  /** Opens the thread's staging into the release file at `path` (thread-staging.ts), its documents encoded with `codec`. */
  | ({ kind: 'open staging'; id: number } & StagingFiles)
  /** Joins (unless `joined` is given), builds, encodes and stages rows into the release file (thread-staging.ts). */
  | { kind: 'stage batch'; id: number; rows: EstablishmentRow[]; joined?: Joined }
  | { kind: 'close staging'; id: number }
  /** Builds a release file's search tables (search-tables.ts) at `path` from the rows staged in `stagePath` and `rowsPaths`. */
  | { kind: 'search tables'; id: number; path: string; stagePath: string; rowsPaths: string[] }
  /** Gathers the per-company rows staged in the staging file at `stagePath` and the rows files at `rowsPaths` (staging.ts's `gatherStaged`). */
  | { kind: 'gather'; id: number; stagePath: string; rowsPaths: string[] };

/** Where a worker thread stores the rows of a per-company file it reads (thread-staging.ts). */
export interface CompanyRowsInto {
  rowsPath: string;
  place: number;
}

/**
 * A block of a per-company file: its rows read (skipped and refused ones too), what they stage (or
 * how many the worker stored itself, into a release file), and the problems met.
 */
export type StagedBlock = (StagedRows | { stored: number }) & {
  rows: number;
  problems: Problem[];
  unknown: UnknownCodes;
};
/** How reading a per-company file ended: whether it opened, and whether it was read to its end. */
export interface StagedEnd {
  opened: boolean;
  ended: boolean;
  problems: Problem[];
}

/** A release file's files, for a thread's staging (thread-staging.ts), and the encoding of its documents. */
export interface StagingFiles {
  path: string;
  stagePath: string;
  rowsPath: string;
  codec: CodecTables;
}

/** A batch's documents, encoded, with the codes of its rows the release's tables lack. */
export type BuildReply =
  | { id: number; encoded: EncodedDocuments; unknown: UnknownCodes }
  /** A batch staged into a release file: how many rows, and the codes they lacked. */
  | { id: number; stagedRows: number; unknown: UnknownCodes }
  | { id: number; staged: StagedBlock }
  | { id: number; end: StagedEnd }
  | { id: number; done: true }
  /** `code`: SQLite's, if any (a full disk is told apart by it). */
  | { id: number; error: string; code?: string };
/** Encoded for the store's bulk load. */
export type Built = { encoded: EncodedDocuments; unknown: UnknownCodes };

/**
 * A batch's documents die young, but with V8's default young generation (16 MiB semispaces)
 * they outlive its scavenges and are promoted, to be marked and compacted again and again.
 */
const YOUNG_GENERATION_MB = 192;

type Reply = Exclude<BuildReply, { error: string }>;

export class DocumentThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { reply: (reply: Reply) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;
  private contextSent = false;

  /** `script`: the built document-worker.mjs. */
  constructor(
    script: URL,
    private readonly context: DocumentContext,
    /** The fields whose values go beside the documents (the loader's `indexed`). */
    private readonly indexed: string[],
  ) {
    const worker = (this.worker = new Worker(script, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } }));
    worker.on('message', (reply: BuildReply) => {
      const waiting = this.pending.get(reply.id);
      if ('error' in reply) {
        this.pending.delete(reply.id);
        waiting?.reject(Object.assign(new Error(`the import's worker thread failed: ${reply.error}`), reply.code ? { code: reply.code } : {}));
      } else {
        waiting?.reply(reply);
      }
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the document worker exited (code ${code})`)));
  }

  build(batch: EstablishmentBatch): Promise<Built> {
    return this.ask((id) => ({ kind: 'batch', id, batch }), (reply) => reply as Built);
  }

  /**
   * A per-company file read in the worker, as staged blocks in the file's order, then how it
   * ended. The worker reads a few blocks ahead of what was taken, and no further.
   */
  stage(file: ReleaseFile, skip: number, into?: CompanyRowsInto): StagedRead {
    const read = new StagedRead(() => this.send({ kind: 'taken', id }));
    if (this.failure) {
      read.fail(this.failure);
      return read;
    }
    const id = this.nextId++;
    this.pending.set(id, {
      reply: (reply) => {
        if ('staged' in reply) read.push(reply.staged);
        else if ('end' in reply) {
          this.pending.delete(id);
          read.end(reply.end);
        }
      },
      reject: (err) => read.fail(err),
    });
    this.send({ kind: 'stage', id, file, skip, ...(into ? { into } : {}) });
    return read;
  }

  /** Builds a release file's search tables in the worker (search-tables.ts's `buildSearchTables`). */
  buildSearchTables(path: string, stagePath: string, rowsPaths: string[]): Promise<void> {
    return this.done((id) => ({ kind: 'search tables', id, path, stagePath, rowsPaths }));
  }

  /** Opens the worker's staging into a release file (thread-staging.ts), for `stageBatch`. */
  openStaging(files: StagingFiles): Promise<void> {
    return this.done((id) => ({ kind: 'open staging', id, ...files }));
  }

  /** Joins (unless `joined` is given), builds and stages the rows in the worker; resolves once they are durable. */
  stageBatch(rows: EstablishmentRow[], joined?: Joined): Promise<{ stagedRows: number; unknown: UnknownCodes }> {
    return this.ask((id) => ({ kind: 'stage batch', id, rows, ...(joined ? { joined } : {}) }), (reply) => reply as { stagedRows: number; unknown: UnknownCodes });
  }

  /** Closes the worker's staging: its rows file is read by others from now on. */
  closeStaging(): Promise<void> {
    return this.done((id) => ({ kind: 'close staging', id }));
  }

  /** Gathers the staged per-company rows in the worker (staging.ts's `gatherStaged`). */
  gatherStaged(stagePath: string, rowsPaths: string[]): Promise<void> {
    return this.done((id) => ({ kind: 'gather', id, stagePath, rowsPaths }));
  }

  /** A request whose reply only says it is done. */
  private done(request: (id: number) => BuildRequest): Promise<void> {
    return this.ask(request, () => undefined);
  }

  /** A request answered by one reply, of which `answer` takes what the caller gets. */
  private ask<T>(request: (id: number) => BuildRequest, answer: (reply: Reply) => T): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        reply: (reply) => {
          this.pending.delete(id);
          resolve(answer(reply));
        },
        reject,
      });
      this.send(request(id));
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the document worker was closed');
    await this.worker.terminate();
  }

  private send(request: BuildRequest): void {
    if (!this.contextSent) {
      this.contextSent = true;
      this.worker.postMessage({ kind: 'context', context: this.context, indexed: this.indexed } satisfies BuildRequest);
    }
    this.worker.postMessage(request);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const { reject } of this.pending.values()) reject(this.failure);
    this.pending.clear();
  }
}

/** The staged blocks of one file as they come from its worker, taken one at a time. */
export class StagedRead implements AsyncIterable<StagedBlock> {
  private readonly blocks: StagedBlock[] = [];
  private ending: StagedEnd | undefined;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly taken: () => void) {}

  push(block: StagedBlock): void {
    this.blocks.push(block);
    this.notify();
  }

  end(end: StagedEnd): void {
    this.ending = end;
    this.notify();
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.notify();
  }

  /** How the file ended, once every block was taken. */
  get ended(): StagedEnd {
    return this.ending!;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StagedBlock> {
    for (;;) {
      const block = this.blocks.shift();
      if (block) {
        this.taken();
        yield block;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.ending) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
