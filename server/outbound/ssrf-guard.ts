/**
 * The SSRF guard for every fetch of a URL a user supplied (a website to research, a search
 * result): only http(s), and only public addresses. The check runs on the addresses DNS gives for
 * the connection itself (a `lookup` hook), so a name that resolves to a public address for a
 * check and to 127.0.0.1 for the connection (DNS rebinding) is refused too. "Public" is what the
 * IANA special-purpose registries (RFC 6890 and its updates) do not list, and no IPv6 form that
 * carries an IPv4 address can smuggle a private one.
 */
import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export class BlockedAddressError extends Error {}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.31.196.0', 24], // AS112
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['192.175.48.0', 24], // AS112 direct delegation
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  // IPv4-mapped addresses (::ffff:0:0/96) are judged by the IPv4 rules above (BlockList does).
  ['::', 96], // IPv4-compatible (deprecated), with :: and ::1
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b::', 96], // NAT64 maps onto IPv4, private ones included
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID…
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 carries any IPv4 address, private ones included
  ['3fff::', 20], // documentation
  ['5f00::', 16], // SRv6 SIDs
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Whether an address is on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !blocked.check(mapped[1]!, 'ipv4');
  return !blocked.check(address, 'ipv6');
}

export interface GuardOptions {
  /** Lets loopback addresses through, and only those: for tests (`WEB_FETCH_ALLOW_LOOPBACK`). */
  allowLoopback: boolean;
}

const isLoopback = (address: string) => /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
const allowed = (address: string, { allowLoopback }: GuardOptions) => isPublicAddress(address) || (allowLoopback && isLoopback(address));

/** Refuses a URL before any connection: its scheme, or a host that is a non-public IP literal. */
export function checkUrl(raw: string, options: GuardOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedAddressError(`"${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BlockedAddressError(`${url.protocol} URLs are not fetched`);
  if (url.username || url.password) throw new BlockedAddressError('URLs with credentials are not fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !allowed(host, options)) throw new BlockedAddressError(`${host} is not a public address`);
  return url;
}

/** A `lookup` for http(s).request that refuses names resolving to a non-public address. */
export function guardedLookup(guard: GuardOptions): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const bad = list.find((a) => !allowed(a.address, guard));
      if (bad) return callback(new BlockedAddressError(`${hostname} resolves to ${bad.address}, not a public address`), '', 0);
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
