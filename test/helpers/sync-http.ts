/**
 * A synchronous HttpPort, like Apps Script's UrlFetchApp, that makes real HTTP calls: the
 * request runs in a worker thread while this thread waits (synckit).
 */
import { createSyncFn } from 'synckit';
import type { HttpPort, HttpRequest, HttpResponse } from '../../addon/api/http.ts';

const send = createSyncFn<(requests: HttpRequest[]) => Promise<HttpResponse[]>>(
  new URL('./sync-http-worker.mjs', import.meta.url).pathname,
);

export function syncHttp(): HttpPort & { calls: number } {
  const port = {
    calls: 0,
    fetch(request: HttpRequest) {
      port.calls++;
      return send([request])[0]!;
    },
    fetchAll(requests: HttpRequest[]) {
      port.calls++;
      return send(requests);
    },
  };
  return port;
}
