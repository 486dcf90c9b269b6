// Where a webhook may go: every loopback, private, CGNAT, link-local (cloud metadata), unspecified,
// multicast and reserved address is refused, IPv4 and IPv6 alike, also written inside an IPv6
// address; public ones pass. A host name is judged by every address it resolves to.
import { describe, expect, it } from 'vitest';
import { checkTarget, parseWebhookUrl, RefusedUrl, refusedAddress, type Lookup } from '../../../lib/webhooks/addresses.js';

describe('refusedAddress', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.254', /carrier-grade NAT/],
    ['169.254.169.254', /link-local.*metadata/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.251', /multicast/],
    ['255.255.255.255', /reserved or broadcast/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fd00:ec2::254', /unique local/],
    ['fc00::1', /unique local/],
    ['fe80::1', /link-local/],
    ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:a9fe:a9fe', /link-local/], // 169.254.169.254 in hex
    ['64:ff9b::10.0.0.1', /private/],
    ['::127.0.0.1', /IPv4-compatible for 127\.0\.0\.1, a loopback/],
    ['::7f00:1', /IPv4-compatible for 127\.0\.0\.1, a loopback/],
    ['::ffff:0:7f00:1', /IPv4-translated for 127\.0\.0\.1, a loopback/],
    ['::ffff:0:127.0.0.1', /IPv4-translated for 127\.0\.0\.1, a loopback/],
    ['2002:7f00:1::', /6to4 for 127\.0\.0\.1, a loopback/],
    ['2002:a9fe:a9fe:1::1', /6to4 for 169\.254\.169\.254, a link-local/],
    ['64:ff9b::a9fe:a9fe', /NAT64 for 169\.254\.169\.254, a link-local/],
    ['64:ff9b:1::7f00:1', /local-use NAT64/],
    ['64:ff9b:1:ffff::808:808', /local-use NAT64/], // local to the network that translates it, whatever it carries
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', /Teredo for 127\.0\.0\.1, a loopback/], // client 127.0.0.1, inverted
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', /Teredo server for 10\.0\.0\.1, a private/], // the relay it goes through
  ])('refuses %s', (address, why) => {
    expect(refusedAddress(address)).toMatch(why);
  });

  it.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '169.253.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::808:808', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])('allows %s', (address) => {
    expect(refusedAddress(address)).toBeNull();
  });
});

describe('checkTarget', () => {
  const lookup =
    (answers: Record<string, string[]>): Lookup =>
    async (host) => {
      const a = answers[host];
      if (!a) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
  const guard = { allowPrivate: false, lookup: lookup({ 'hooks.example.com': ['93.184.216.34'], 'mixed.example.com': ['93.184.216.34', '10.0.0.7'], 'v6.example.com': ['::1'] }) };

  it('passes an https URL whose host resolves to public addresses, and says where to connect', async () => {
    expect(await checkTarget('https://hooks.example.com/afrates?x=1', guard)).toMatchObject({ hostname: 'hooks.example.com', address: '93.184.216.34', family: 4 });
    expect(await checkTarget('https://[2606:4700:4700::1111]:8443/h', guard)).toMatchObject({ hostname: '2606:4700:4700::1111', address: '2606:4700:4700::1111', family: 6 });
  });

  it.each([
    ['http://hooks.example.com/', /must start with https:\/\/ \(plain http only where the operator sets WEBHOOKS_ALLOW_PRIVATE=1/],
    ['ftp://hooks.example.com/', /must start with https/],
    ['not a url', /is not a URL/],
    ['https://user:pass@hooks.example.com/', /user name or password/],
    ['https://127.0.0.1/', /127\.0\.0\.1, a loopback address/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['https://[::1]/', /loopback/],
    ['https://mixed.example.com/', /10\.0\.0\.7, a private address/],
    ['https://v6.example.com/', /::1, a loopback/],
    ['https://nowhere.example.com/', /could not be resolved \(ENOTFOUND\)/],
  ])('refuses %s', async (url, why) => {
    const err = await checkTarget(url, guard).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefusedUrl);
    expect((err as Error).message).toMatch(why);
  });

  it('allows private addresses and plain http only under the operator setting', async () => {
    expect(await checkTarget('http://127.0.0.1:9000/h', { allowPrivate: true })).toMatchObject({ address: '127.0.0.1' });
    expect(parseWebhookUrl('http://localhost/', true).protocol).toBe('http:');
    await expect(checkTarget('https://localhost/', { allowPrivate: false })).rejects.toThrow(/loopback/); // the system resolver
  });
});
