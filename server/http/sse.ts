/**
 * Writes a handler's async iterable of events as server-sent events: one `event:`/`data:` pair
 * each, a comment every 15 s so proxies keep the connection open, and when the client leaves,
 * the iterator is closed (its `finally` blocks run) and the abort signal cancels pending work.
 *
 * The first event is awaited before anything is sent, so an error a handler raises up front (a
 * filter it refuses, a balance that cannot pay for the first page) is an ordinary HTTP error
 * with its status. Once the stream has started, an error becomes an `error` event.
 */
import { PassThrough } from 'node:stream';
import type { StreamEvent } from '../pipeline/outcome.ts';
import { ServiceError } from '../errors.ts';
import type { AppContext } from './state.ts';

const HEARTBEAT_MS = 15_000;

function errorEvent(ctx: AppContext, err: unknown): string {
  const body =
    err instanceof ServiceError
      ? { error: err.code, message: err.message }
      : { error: 'internal_error', message: 'The stream failed.' };
  if (!(err instanceof ServiceError)) ctx.state.log.error({ err }, 'stream failed');
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}

export async function sendEventStream(
  ctx: AppContext,
  events: AsyncIterable<StreamEvent>,
  abort: AbortController,
): Promise<void> {
  const iterator = events[Symbol.asyncIterator]();
  const stop = () => {
    abort.abort();
    void iterator.return?.();
  };
  ctx.res.once('close', stop);
  let first: IteratorResult<StreamEvent>;
  try {
    first = await iterator.next();
  } catch (err) {
    ctx.res.off('close', stop);
    throw err;
  }

  const out = new PassThrough();
  ctx.status = 200;
  ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  ctx.req.socket.setNoDelay(true);
  ctx.body = out;
  const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);

  void (async () => {
    try {
      for (let next = first; !next.done && !abort.signal.aborted; next = await iterator.next()) {
        out.write(`event: ${next.value.event}\ndata: ${JSON.stringify(next.value.data)}\n\n`);
      }
    } catch (err) {
      out.write(errorEvent(ctx, err));
    } finally {
      clearInterval(heartbeat);
      ctx.res.off('close', stop);
      out.end();
    }
  })();
}
