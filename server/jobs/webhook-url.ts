/**
 * A job's webhook URL, checked when the job starts: `https:` on a public address, unless
 * WEBHOOK_ALLOW_PRIVATE. A host name is resolved now as well, so a name pointing at a private
 * address is refused with a 400 rather than failing every delivery; each delivery checks the
 * addresses it connects to again (`guardedLookup`), which a name re-pointed later cannot pass.
 */
import dns from 'node:dns/promises';
import { isIP } from 'node:net';
import { BlockedAddressError, checkUrl, isPublicAddress } from '../outbound/ssrf-guard.ts';
import { invalidRequest } from '../lib/errors.ts';

/** What a refusal for a private or plain-http address adds: the variable that allows it. */
const ALLOW = 'set WEBHOOK_ALLOW_PRIVATE=true on the server to allow private addresses and http:';

export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = checkUrl(raw, { allowLoopback: allowPrivate });
  } catch (err) {
    if (!(err instanceof BlockedAddressError)) throw err;
    if (allowPrivate && /not a public address/.test(err.message)) return new URL(raw);
    throw invalidRequest(/not a public address/.test(err.message) ? `webhook.url: ${err.message} (${ALLOW})` : `webhook.url: ${err.message}`);
  }
  if (allowPrivate) return url;
  if (url.protocol !== 'https:') throw invalidRequest(`webhook.url must be an https: URL (${ALLOW})`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return url;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await dns.lookup(host, { all: true });
  } catch {
    throw invalidRequest(`webhook.url: ${host} does not resolve`);
  }
  const bad = addresses.find((a) => !isPublicAddress(a.address));
  if (bad) throw invalidRequest(`webhook.url: ${host} resolves to ${bad.address}, not a public address (${ALLOW})`);
  return url;
}
