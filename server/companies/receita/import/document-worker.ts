/**
 * The worker thread of a bulk-loaded import (see document-thread.ts): builds each batch's
 * documents and encodes them as the embedded store's journal holds them, while the importer's
 * thread goes on reading the release. The bytes are transferred, not copied.
 */
import { parentPort } from 'node:worker_threads';
import { encodeDocuments } from '../../../store/embedded/bulk-load.ts';
import { companyDocuments, type DocumentContext } from './documents.ts';
import type { BuildReply, BuildRequest } from './document-thread.ts';

let context: DocumentContext | undefined;
let indexed: string[] = [];

parentPort!.on('message', (request: BuildRequest) => {
  if (request.kind === 'context') {
    context = request.context;
    indexed = request.indexed;
    return;
  }
  let reply: BuildReply;
  try {
    const unknown = {};
    reply = { id: request.id, encoded: encodeDocuments(companyDocuments(request.batch, context!, unknown), indexed), unknown };
  } catch (err) {
    reply = { id: request.id, error: (err as Error).message };
  }
  parentPort!.postMessage(reply, 'encoded' in reply ? [reply.encoded.bytes.buffer as ArrayBuffer] : []);
});
