/**
 * A webhook receiver on a loopback port, as the kill tests use one: each delivery's parsed body
 * and headers handed to `onDelivery`, answered 200; closed when the test ends.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deferCleanup } from './cleanup.ts';

/** Starts the receiver; resolves with the URL to give as a webhook. */
export async function webhookReceiver<T>(onDelivery: (body: T, headers: IncomingHttpHeaders) => void): Promise<string> {
  const hook = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      onDelivery(JSON.parse(body) as T, req.headers);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  deferCleanup(async () => {
    hook.closeAllConnections();
    await new Promise((resolve) => hook.close(resolve));
  });
  return `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
}
