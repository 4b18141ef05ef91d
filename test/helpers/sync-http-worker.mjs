// Runs in a worker thread: performs real HTTP requests for the synchronous HttpPort of the tests.
import { runAsWorker } from 'synckit';

runAsWorker(async (requests) =>
  Promise.all(
    requests.map(async (r) => {
      const res = await fetch(r.url, { method: r.method.toUpperCase(), headers: r.headers, body: r.payload });
      return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
    }),
  ),
);
