// Where a webhook may be sent: an https URL whose host resolves only to public addresses. Checked
// when an endpoint is registered or changed (api/routes/webhooks.ts) and again before every
// delivery, after DNS (pipeline/webhooks/send.ts), which then connects to the very address checked:
// a name that resolved to a public address at registration and to 127.0.0.1 now is refused, and
// no second lookup between the check and the connection can change the answer.
// WEBHOOKS_ALLOW_PRIVATE=1 (an operator setting, for tests and local receivers) allows private
// addresses and plain http.
import dns from 'node:dns';
import net from 'node:net';

/** Every address a host name resolves to (injectable: tests map a public-looking name to 127.0.0.1). */
export type Lookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

const systemLookup: Lookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Ranges no webhook may reach, each with the words a customer reads when refused. */
const REFUSED: readonly [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address (RFC 1918)'],
  ['100.64.0.0', 10, 'ipv4', 'a carrier-grade NAT address (RFC 6598)'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address (cloud metadata lives here)'],
  ['172.16.0.0', 12, 'ipv4', 'a private address (RFC 1918)'],
  ['192.0.0.0', 24, 'ipv4', 'an IETF protocol assignment address'],
  ['192.0.2.0', 24, 'ipv4', 'a documentation address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address (RFC 1918)'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['198.51.100.0', 24, 'ipv4', 'a documentation address'],
  ['203.0.113.0', 24, 'ipv4', 'a documentation address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved or broadcast address'],
  ['::', 128, 'ipv6', 'an unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['100::', 64, 'ipv6', 'a discard address'],
  ['2001:db8::', 32, 'ipv6', 'a documentation address'],
  ['fc00::', 7, 'ipv6', 'a unique local (private) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['fec0::', 10, 'ipv6', 'a site-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];

const blocks = REFUSED.map(([address, prefix, family, why]) => {
  const list = new net.BlockList();
  list.addSubnet(address, prefix, family);
  return { list, why };
});

/** The IPv4 address inside an IPv6 one that carries it (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), else null. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  for (const prefix of ['::ffff:', '64:ff9b::']) {
    if (!lower.startsWith(prefix)) continue;
    const rest = lower.slice(prefix.length);
    if (net.isIPv4(rest)) return rest;
    const m = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
    if (m) {
      const hi = parseInt(m[1]!, 16);
      const lo = parseInt(m[2]!, 16);
      return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
  }
  return null;
}

/** Why a webhook may not go to this IP address (a sentence part), or null if it may. */
export function refusedAddress(address: string): string | null {
  const v4 = net.isIPv4(address) ? address : embeddedIpv4(address);
  if (v4) return blocks.find((b) => b.list.check(v4, 'ipv4'))?.why ?? null;
  if (!net.isIPv6(address)) return 'not an IP address';
  return blocks.find((b) => b.list.check(address, 'ipv6'))?.why ?? null;
}

export interface GuardOptions {
  /** WEBHOOKS_ALLOW_PRIVATE: private addresses and plain http allowed. */
  readonly allowPrivate: boolean;
  readonly lookup?: Lookup;
}

/** A URL a webhook may not use, with a message for the customer. */
export class RefusedUrl extends Error {}

export interface CheckedTarget {
  readonly url: URL;
  /** The host name without IPv6 brackets (the TLS server name, the Host header's host). */
  readonly hostname: string;
  /** The address to connect to: checked, and connected to as is. */
  readonly address: string;
  readonly family: 4 | 6;
}

/** The URL's own rules (scheme, no credentials, length): nothing resolved yet. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedUrl('is not a URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw new RefusedUrl('must start with https://');
  if (url.username || url.password) throw new RefusedUrl('must not carry a user name or password');
  if (url.hash) throw new RefusedUrl('must not have a #fragment');
  return url;
}

/**
 * Resolves the URL's host and checks every address it resolves to; refused (RefusedUrl) if any is
 * private, loopback, link-local, metadata, multicast or otherwise not public. Returns the address to
 * connect to.
 */
export async function checkTarget(raw: string | URL, opts: GuardOptions): Promise<CheckedTarget> {
  const url = typeof raw === 'string' ? parseWebhookUrl(raw, opts.allowPrivate) : raw;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: readonly { address: string; family: number }[];
  if (net.isIP(hostname)) addresses = [{ address: hostname, family: net.isIP(hostname) }];
  else {
    try {
      addresses = await (opts.lookup ?? systemLookup)(hostname);
    } catch (err) {
      throw new RefusedUrl(`host ${hostname} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
    if (addresses.length === 0) throw new RefusedUrl(`host ${hostname} has no address`);
  }
  if (!opts.allowPrivate) {
    for (const a of addresses) {
      const why = refusedAddress(a.address);
      if (why) throw new RefusedUrl(`host ${hostname} resolves to ${a.address}, ${why}: webhooks go to public addresses only`);
    }
  }
  const chosen = addresses[0]!;
  return { url, hostname, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
