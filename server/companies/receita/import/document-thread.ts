/**
 * One worker thread building and encoding a bulk load's documents, so that about half of an
 * import's work leaves the thread that reads, joins and writes. Its batches are answered in the
 * order sent; a batch that fails, or a worker that dies, fails the writes waiting on it (and
 * with them the import, which a rerun resumes).
 */
import { Worker } from 'node:worker_threads';
import type { EncodedDocuments } from '../../../store/port.ts';
import type { DocumentContext, EstablishmentBatch } from './documents.ts';
import type { UnknownCodes } from './records.ts';

export type BuildRequest =
  | { kind: 'context'; context: DocumentContext; indexed: string[] }
  | { kind: 'batch'; id: number; batch: EstablishmentBatch };
/** A batch's documents, encoded, with the codes of its rows the release's tables lack. */
export type BuildReply = { id: number; encoded: EncodedDocuments; unknown: UnknownCodes } | { id: number; error: string };
export type Built = { encoded: EncodedDocuments; unknown: UnknownCodes };

/**
 * A batch's documents die young, but with V8's default young generation (16 MiB semispaces)
 * they outlive its scavenges and are promoted, to be marked and compacted again and again.
 */
const YOUNG_GENERATION_MB = 192;

export class DocumentThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (built: Built) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;

  /**
   * `script`: the built document-worker.mjs. The worker starts with the first batch, when the
   * context's code tables have been read.
   */
  constructor(
    private readonly script: URL,
    private readonly context: DocumentContext,
    /** The fields whose values go beside the documents (the loader's `indexed`). */
    private readonly indexed: string[],
  ) {}

  build(batch: EstablishmentBatch): Promise<Built> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.started().postMessage({ kind: 'batch', id, batch } satisfies BuildRequest);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the document worker was closed');
    await this.worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = (this.worker = new Worker(this.script, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } }));
    worker.on('message', (reply: BuildReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if ('error' in reply) waiting?.reject(new Error(`building documents failed: ${reply.error}`));
      else waiting?.resolve({ encoded: reply.encoded, unknown: reply.unknown });
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the document worker exited (code ${code})`)));
    worker.postMessage({ kind: 'context', context: this.context, indexed: this.indexed } satisfies BuildRequest);
    return worker;
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const { reject } of this.pending.values()) reject(this.failure);
    this.pending.clear();
  }
}
