/**
 * Writes a handler's async iterable of events as server-sent events: one `event:`/`data:` pair
 * each, a comment every 15 s so proxies keep the connection open, and when the client leaves,
 * the iterator is closed (its `finally` blocks run) and the abort signal cancels pending work.
 */
import { PassThrough } from 'node:stream';
import type { StreamEvent } from '../handlers/types.ts';
import type { AppContext } from './state.ts';

const HEARTBEAT_MS = 15_000;

export function sendEventStream(ctx: AppContext, events: AsyncIterable<StreamEvent>, abort: AbortController): void {
  const out = new PassThrough();
  ctx.status = 200;
  ctx.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  ctx.req.socket.setNoDelay(true);
  ctx.body = out;

  const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const iterator = events[Symbol.asyncIterator]();
  const stop = () => {
    abort.abort();
    void iterator.return?.();
  };
  ctx.res.once('close', stop);

  void (async () => {
    try {
      for (;;) {
        const { value, done } = await iterator.next();
        if (done || abort.signal.aborted) break;
        out.write(`event: ${value.event}\ndata: ${JSON.stringify(value.data)}\n\n`);
      }
    } catch (err) {
      ctx.state.log.error({ err }, 'stream failed');
      out.write(`event: error\ndata: ${JSON.stringify({ error: 'internal_error', message: 'The stream failed.' })}\n\n`);
    } finally {
      clearInterval(heartbeat);
      ctx.res.off('close', stop);
      out.end();
    }
  })();
}
