// Where a webhook may be sent: an https URL whose host resolves only to public addresses. Checked
// when an endpoint is registered or changed (api/routes/webhooks.ts) and again before every
// delivery, after DNS (pipeline/webhooks/send.ts), which then connects to the very address checked:
// a name that resolved to a public address at registration and to 127.0.0.1 now is refused, and
// no second lookup between the check and the connection can change the answer. An IPv6 address
// that carries an IPv4 one (mapped, translated, compatible, NAT64, 6to4, Teredo) is judged by it.
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
  // local-use NAT64 (RFC 8215): translated by a gateway of the network it is used in, never public
  ['64:ff9b:1::', 48, 'ipv6', 'a local-use NAT64 address (RFC 8215)'],
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

/** An IPv6 address as its eight 16-bit groups (a trailing dotted IPv4 counts as two), or null. */
function groupsOf(address: string): number[] | null {
  if (!net.isIPv6(address)) return null;
  let text = address.toLowerCase().replace(/%.*$/, ''); // a zone (fe80::1%eth0) names no other address
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const front = part(head);
  const back = part(tail);
  return tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const ipv4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 addresses an IPv6 address carries, each with the form's name: a packet sent to the IPv6
 * address reaches them (through the host's stack, a NAT64 gateway or a 6to4/Teredo relay), so they
 * are judged as the IPv4 address itself would be.
 */
function carriedIpv4(g: readonly number[]): { v4: string; form: string }[] {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const low = ipv4Of(g[6]!, g[7]!);
  if (zero(0, 5) && g[5] === 0xffff) return [{ v4: low, form: 'IPv4-mapped' }]; // ::ffff:0:0/96
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return [{ v4: low, form: 'IPv4-translated' }]; // ::ffff:0:0:0/96 (RFC 2765)
  if (zero(0, 6)) return [{ v4: low, form: 'IPv4-compatible' }]; // ::/96 (deprecated, RFC 4291); :: and ::1 are judged before
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [{ v4: low, form: 'NAT64' }]; // 64:ff9b::/96 (RFC 6052)
  if (g[0] === 0x2002) return [{ v4: ipv4Of(g[1]!, g[2]!), form: '6to4' }]; // 2002::/16 (RFC 3056)
  if (g[0] === 0x2001 && g[1] === 0) {
    // Teredo 2001::/32 (RFC 4380): the server's address as is, the client's inverted in the last 32 bits
    return [
      { v4: ipv4Of(~g[6]! & 0xffff, ~g[7]! & 0xffff), form: 'Teredo' },
      { v4: ipv4Of(g[2]!, g[3]!), form: 'Teredo server' },
    ];
  }
  return [];
}

/**
 * Why a webhook may not go to this IP address (a sentence part), or null if it may. The one rule,
 * at registration and at delivery: an IPv6 address is refused by its own range, or by the IPv4
 * address it carries (any spelling of 127.0.0.1 or 169.254.169.254 reaches the same host).
 */
export function refusedAddress(address: string): string | null {
  if (net.isIPv4(address)) return blocks.find((b) => b.list.check(address, 'ipv4'))?.why ?? null;
  const groups = groupsOf(address);
  if (!groups || groups.length !== 8) return 'not an IP address';
  const own = blocks.find((b) => b.list.check(address.replace(/%.*$/, ''), 'ipv6'))?.why;
  if (own) return own;
  for (const { v4, form } of carriedIpv4(groups)) {
    const why = blocks.find((b) => b.list.check(v4, 'ipv4'))?.why;
    if (why) return `${form} for ${v4}, ${why}`;
  }
  return null;
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
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    // plain http is refused for the same reason as private addresses, and lifted by the same
    // setting: the message names it, so a developer with a local receiver knows what to set
    if (url.protocol === 'http:') throw new RefusedUrl('must start with https:// (plain http only where the operator sets WEBHOOKS_ALLOW_PRIVATE=1: tests and local receivers)');
    throw new RefusedUrl('must start with https://');
  }
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
      if (why) throw new RefusedUrl(`host ${hostname} resolves to ${a.address}, ${why}: webhooks go to public addresses only (an operator allows private ones with WEBHOOKS_ALLOW_PRIVATE=1)`);
    }
  }
  const chosen = addresses[0]!;
  return { url, hostname, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
