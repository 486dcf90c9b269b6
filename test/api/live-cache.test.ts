// The fast path of live and markets (JSON made once per pair, presentation and second) answers
// exactly what presenting each snapshot entry at that second gives, for every tier and flag; and a
// new second or a new snapshot is never answered from the old one. Markets' gzip, made of each
// request's meta and the second's rates deflated once, decodes to exactly the uncompressed answer.
import http from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveJsonCache } from '../../api/live/cache.js';
import { presentLive } from '../../api/live/present.js';
import { assess } from '../../lib/live/assess.js';
import { TIERS } from '../../lib/tiers.js';
import { isLive } from '../../lib/methodology/rules.js';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 3 });
});
afterAll(async () => {
  await t?.close();
});

describe('the live JSON cache', () => {
  it('gives what presenting each entry at that second gives, for every tier and flag', () => {
    const { snapshot, signer } = t.api.deps;
    const cache = new LiveJsonCache(snapshot, signer);
    const now = Date.now();
    const second = LiveJsonCache.moment(now);
    let compared = 0;
    for (const tier of TIERS) {
      for (const flags of [0, 1, 2, 3, 4, 7]) {
        const p = { tier, includeSynthetic: Boolean(flags & 1), includeSources: Boolean(flags & 2), includeAudit: Boolean(flags & 4), market: 'real' as const };
        for (const entry of snapshot.all()) {
          const fast = cache.rate(entry.pair, p, now)!;
          expect(fast.json).toBe(JSON.stringify(presentLive(entry, { ...p, now: second, signer })));
          expect(fast.assessment).toEqual(assess(entry, second));
          compared++;
        }
      }
      const markets = cache.marketsData(tier, now, (a) => isLive(a.ageSeconds));
      const slow = Object.fromEntries(
        snapshot.all().filter((e) => isLive(assess(e, second).ageSeconds)).map((e) => [e.pair, presentLive(e, { tier, now: second, signer })]),
      );
      expect(JSON.parse(markets.answerTail.text.slice(0, -1))).toEqual(slow); // less the answer's closing brace
      expect(markets.count).toBe(Object.keys(slow).length);
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('starts afresh each second and after each snapshot refresh', async () => {
    const { snapshot, signer } = t.api.deps;
    const cache = new LiveJsonCache(snapshot, signer);
    const now = Date.now();
    const first = cache.rate('BTCNGN', { tier: 'builder' }, now)!;
    expect(cache.rate('BTCNGN', { tier: 'builder' }, now)).toBe(first); // the same second: reused
    const later = cache.rate('BTCNGN', { tier: 'builder' }, now + 5_000)!;
    expect(later.assessment.ageSeconds).toBe(first.assessment.ageSeconds + 5);
    await snapshot.refresh();
    expect(cache.rate('BTCNGN', { tier: 'builder' }, now + 5_000)).not.toBe(later);
  });

  it('makes a live answer once per key and second, afresh after a refresh, and keeps no failure', async () => {
    const { snapshot, signer } = t.api.deps;
    const cache = new LiveJsonCache(snapshot, signer);
    let builds = 0;
    const build = () => `${++builds}`;
    const now = Date.now();
    expect(cache.liveData('a', now, build)).toBe('1');
    expect(cache.liveData('a', now, build)).toBe('1');
    expect(cache.liveData('b', now, build)).toBe('2');
    expect(cache.liveData('a', now + 1_000, build)).toBe('3');
    await snapshot.refresh();
    expect(cache.liveData('a', now + 1_000, build)).toBe('4');
    expect(() => cache.liveData('c', now + 1_000, () => { throw new Error('no'); })).toThrow('no');
    expect(cache.liveData('c', now + 1_000, build)).toBe('5');
  });
});

describe('GET /v1/rates/live, answered from the cache', () => {
  it('never serves one tier what another tier asked for in the same second', async () => {
    const path = '/v1/rates/live?pairs=BTCNGN,BTCZAR&include_sources=true';
    const builder = await t.get(path, t.keys.builder);
    expect(builder.status).toBe(200);
    expect(builder.body.data.BTCNGN.pricing.exchange.sources.length).toBeGreaterThan(0);
    // then both tiers at once, the same query text within the second (the free tier allows 10 a minute)
    const [free, plain, ...builders] = await Promise.all([
      t.get(path, t.keys.free),
      t.get('/v1/rates/live?pairs=BTCNGN,BTCZAR', t.keys.free),
      ...Array.from({ length: 3 }, () => t.get(path, t.keys.builder)), // within the Builder's 4 in flight
    ]);
    expect(free!.status).toBe(403);
    expect(free!.body.error).toBe('tier_restricted');
    expect(plain!.status).toBe(200);
    expect(plain!.body.data.BTCNGN.pricing).toBeUndefined(); // the free tier's fields only
    expect(plain!.body.meta.request_id).not.toBe(builder.body.meta.request_id);
    for (const b of builders) expect(b.body.data.BTCNGN.pricing.exchange.sources.length).toBeGreaterThan(0);
  });
});

/** GET with the raw bytes as sent (no decoding by the client). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('GET /v1/rates/markets with gzip', () => {
  it('decodes, CRC and length checked, to the answer sent uncompressed', async () => {
    const url = `${t.api.url}/v1/rates/markets`;
    for (const tier of ['builder', 'enterprise'] as const) {
      // both answers from one second, so both carry the same rates (retried across a second's edge)
      for (let attempt = 0; ; attempt++) {
        const zipped = await rawGet(url, { 'X-API-Key': t.keys[tier], 'Accept-Encoding': 'gzip' });
        const plain = await rawGet(url, { 'X-API-Key': t.keys[tier] });
        expect(zipped.status).toBe(200);
        expect(zipped.headers['content-encoding']).toBe('gzip');
        expect(plain.headers['content-encoding']).toBeUndefined();
        const unzipped = zlib.gunzipSync(zipped.body).toString(); // throws on a wrong CRC-32 or length
        // and by a decoder that reads the stream block by block, as a browser's does
        expect(zlib.inflateRawSync(zipped.body.subarray(10, -8)).toString()).toBe(unzipped);
        const a = JSON.parse(unzipped);
        const b = JSON.parse(plain.body.toString());
        if (a.meta.timestamp.slice(0, 19) !== b.meta.timestamp.slice(0, 19) && attempt < 5) continue;
        expect(Object.keys(a)).toEqual(['meta', 'data']);
        expect(a.data).toEqual(b.data);
        expect(a.meta.pair_count).toBe(Object.keys(a.data).length);
        expect(a.meta.request_id).not.toBe(b.meta.request_id);
        const rates = (text: string) => text.slice(text.indexOf(',"data":'));
        expect(rates(unzipped)).toBe(rates(plain.body.toString())); // byte for byte
        break;
      }
    }
  });
});
