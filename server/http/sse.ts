/**
 * Writes a handler's async iterable of events as server-sent events: a `retry:` hint first, then
 * one `id:`/`event:`/`data:` block each (the id is `<streamId>:<seq>`), a comment every 15 s so
 * proxies keep the connection open.
 *
 * The first event is awaited before anything is sent, so an error a handler raises up front (a
 * filter it refuses, a balance that cannot pay for the first page) is an ordinary HTTP error
 * with its status; a client that leaves before it stops the handler at once. Once the stream has
 * started it is held (`held-streams.ts`): a client that leaves pauses it, one that reconnects
 * with `Last-Event-ID` resumes it (`resumeEventStream`), and an error becomes an `error` event.
 */
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import type { StreamEvent } from '../invocation/outcome.ts';
import { ServiceError } from '../lib/errors.ts';
import { RETRY_MS, type HeldStream, type HeldStreams, type StreamStatus } from './held-streams.ts';
import type { AppContext } from './state.ts';

const HEARTBEAT_MS = 15_000;

function errorEvent(log: Logger, err: unknown): StreamEvent {
  const data =
    err instanceof ServiceError
      ? { error: err.code, message: err.message }
      : { error: 'internal_error', message: 'The stream failed.' };
  if (!(err instanceof ServiceError)) log.error({ err }, 'stream failed');
  return { event: 'error', data };
}

export interface StreamStart {
  workspaceId: string | null;
  operationId: string;
  streamId: string;
  events: AsyncIterable<StreamEvent>;
  /** The handler's signal: aborted when the stream is stopped. */
  abort: AbortController;
  /** See `StreamSchemas.pausable`. */
  pausable: boolean;
}

export async function sendEventStream(ctx: AppContext, held: HeldStreams, start: StreamStart): Promise<void> {
  const iterator = start.events[Symbol.asyncIterator]();
  const stop = () => {
    start.abort.abort();
    void iterator.return?.();
  };
  ctx.res.once('close', stop);
  let first: IteratorResult<StreamEvent>;
  try {
    first = await iterator.next();
  } finally {
    ctx.res.off('close', stop);
  }
  if (start.abort.signal.aborted) {
    // The client left before the first event: nothing was sent, nothing is held.
    ctx.status = 204;
    return;
  }
  const log = ctx.state.log;
  const stream = held.start(start.workspaceId, start.operationId, start.streamId, iterator, start.abort, first, (err) => errorEvent(log, err), start.pausable);
  writeFrom(ctx, stream, 0);
}

/** A reconnection: the events after `after`, then the rest as they come; 204 when there is nothing more. */
export function resumeEventStream(ctx: AppContext, found: { stream: HeldStream; after: number } | null): void {
  if (!found || (found.stream.end && found.after >= found.stream.events.length)) {
    noMoreEvents(ctx, found?.stream.end ?? 'unknown');
    return;
  }
  writeFrom(ctx, found.stream, found.after);
}

/**
 * 204 No Content: by the SSE specification it ends an EventSource's reconnection. `Stream-Status`
 * says why, for people reading logs.
 */
function noMoreEvents(ctx: AppContext, status: StreamStatus): void {
  // The request's body is not read: a kept-alive connection would take it for the next request.
  if (!ctx.req.complete) ctx.set('Connection', 'close');
  ctx.set('Stream-Status', status);
  ctx.status = 204;
}

function writeFrom(ctx: AppContext, stream: HeldStream, after: number): void {
  const out = new PassThrough();
  ctx.status = 200;
  ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  if (!ctx.req.complete) ctx.set('Connection', 'close');
  ctx.req.socket.setNoDelay(true);
  ctx.body = out;
  out.write(`retry: ${RETRY_MS}\n\n`);
  const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);

  const leave = stream.attach();
  let gone = false;
  let wakeOnClose: () => void = () => {};
  const closed = new Promise<void>((resolve) => (wakeOnClose = resolve));
  const onClose = () => {
    gone = true;
    leave();
    wakeOnClose();
  };
  ctx.res.once('close', onClose);

  void (async () => {
    let sent = after;
    try {
      for (;;) {
        const changed = stream.changed();
        while (sent < stream.events.length && !gone) out.write(stream.events[sent++]);
        if (gone || stream.end) break;
        await Promise.race([changed, closed]);
      }
    } finally {
      clearInterval(heartbeat);
      ctx.res.off('close', onClose);
      leave();
      out.end();
    }
  })();
}
