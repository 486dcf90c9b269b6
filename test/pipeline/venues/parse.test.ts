// Each venue's mapping, from payloads in the venue's own shape and field types (each fixture folder
// names its sources in SOURCE.md), served byte for byte through the real ccxt class (urls
// overridden to a local fixture server). Values are checked exactly: the venue's own strings as
// sent (info), numbers and ids as parsed.
import { afterEach, describe, expect, it } from 'vitest';
import { venueById, venues } from '../../../pipeline/venues/index.js';
import { Quidax } from '../../../pipeline/venues/quidax.js';
import { Valr } from '../../../pipeline/venues/valr.js';
import { fixture, serveFixtures, type FixtureServer } from './fixture-server.js';

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function venue(id: string) {
  const v = venueById(id);
  if (!v) throw new Error(`no venue ${id}`);
  return v;
}

const pick = (t: { id?: string; timestamp?: number; price?: number | string; amount?: number | string; side?: string; symbol?: string }) => ({
  id: t.id,
  timestamp: t.timestamp,
  price: t.price,
  amount: t.amount,
  side: t.side,
  symbol: t.symbol,
});

describe('venue registry', () => {
  it('collects the four venues with sane limits', () => {
    expect(venues.map((v) => v.id)).toEqual(['luno', 'binance', 'valr', 'quidax']);
    for (const v of venues) {
      expect(v.rateLimitDocs).toMatch(/^https:\/\//);
      expect(v.limits.minTimeMs).toBeGreaterThan(0);
      expect(v.limits.maxConcurrent).toBeGreaterThanOrEqual(1);
      expect(v.pageSize).toBeGreaterThan(0);
      const ex = v.create();
      expect(ex.enableRateLimit).toBe(false);
      expect(ex.id).toBe(v.id);
    }
    expect(venueById('nope')).toBeUndefined();
  });

  it('points every url at the real hosts by default', () => {
    expect(venue('luno').create().urls.api).toMatchObject({ public: 'https://api.luno.com/api', exchange: 'https://api.luno.com/api/exchange' });
    expect(venue('binance').create().urls.api).toMatchObject({ public: 'https://api.binance.com/api/v3' });
    expect(venue('valr').create().urls.api).toEqual({ public: 'https://api.valr.com' });
    expect(venue('quidax').create().urls.api).toEqual({ public: 'https://app.quidax.io/api/v1' });
  });

  it('rewrites every url to the simulator, keeping the real path layout', () => {
    const sim = 'http://127.0.0.1:4010';
    const luno = venue('luno').create({ simUrl: sim }).urls.api as Record<string, string>;
    expect(luno.public).toBe(`${sim}/luno/api`);
    expect(luno.exchange).toBe(`${sim}/luno/api/exchange`);
    const binance = venue('binance').create({ simUrl: `${sim}/` }).urls.api as Record<string, string>;
    expect(binance.public).toBe(`${sim}/binance/api/v3`);
    expect(Object.values(binance).every((u) => u.startsWith(`${sim}/binance/`))).toBe(true);
    expect(venue('valr').create({ simUrl: sim }).urls.api).toEqual({ public: `${sim}/valr` });
    expect(venue('quidax').create({ simUrl: sim }).urls.api).toEqual({ public: `${sim}/quidax/api/v1` });
  });

  it('passes the request timeout to ccxt', () => {
    expect(venue('luno').create({ timeoutMs: 1234 }).timeout).toBe(1234);
  });
});

describe('luno', () => {
  it('maps markets (XBT is BTC; its KES and UGX books too) and public trades', async () => {
    server = await serveFixtures({
      '/luno/api/exchange/1/markets': fixture('luno', 'markets.json'),
      '/luno/api/1/trades': fixture('luno', 'trades.json'),
    });
    const ex = venue('luno').create({ simUrl: server.url });
    const markets = await ex.loadMarkets();
    expect(Object.keys(markets).sort()).toEqual(['BTC/KES', 'BTC/NGN', 'BTC/UGX', 'BTC/ZAR', 'ETH/BTC']);
    expect(markets['BTC/NGN']!.id).toBe('XBTNGN');
    expect(markets['BTC/KES']).toMatchObject({ id: 'XBTKES', baseId: 'XBT', quoteId: 'KES', spot: true, active: true });
    const trades = await ex.fetchTrades('BTC/NGN');
    expect(trades.map(pick)).toEqual([
      { id: '4031993', timestamp: 1795168776230, price: '144395000.00000000', amount: '0.00204600', side: 'buy', symbol: 'BTC/NGN' },
      { id: '4031994', timestamp: 1795168791046, price: '144210650.00000000', amount: '0.01250000', side: 'sell', symbol: 'BTC/NGN' },
      { id: '4031995', timestamp: 1795168804512, price: '144381220.00000000', amount: '0.00083100', side: 'buy', symbol: 'BTC/NGN' },
    ]);
    expect(trades.map((t) => [t.info.price, t.info.volume])).toEqual([
      ['144395000.00000000', '0.00204600'],
      ['144210650.00000000', '0.01250000'],
      ['144381220.00000000', '0.00083100'],
    ]);
    expect(server.requests).toContain('/luno/api/1/trades?pair=XBTNGN');
    // no private endpoint (currencies need keys) was asked for
    expect(server.requests.every((r) => r.startsWith('/luno/api/exchange/1/markets') || r.startsWith('/luno/api/1/trades'))).toBe(true);
  });

  it('asks Luno for since - 1 (its since is exclusive) and keeps only trades from since', async () => {
    server = await serveFixtures(
      {
        '/luno/api/exchange/1/markets': fixture('luno', 'markets.json'),
        '/luno/api/1/trades': fixture('luno', 'trades.json'),
      },
      { Date: new Date(1795168805000).toUTCString() },
    );
    const ex = venue('luno').create({ simUrl: server.url });
    const trades = await ex.fetchTrades('BTC/NGN', 1795168791046, 100);
    expect(trades.map((t) => t.id)).toEqual(['4031994', '4031995']);
    expect(server.requests).toContain('/luno/api/1/trades?pair=XBTNGN&since=1795168791045');
  });
});

describe('binance', () => {
  it('maps aggregate trades: id a, time T, m=true means the taker sold', async () => {
    server = await serveFixtures({
      '/binance/api/v3/exchangeInfo': fixture('binance', 'exchangeInfo.json'),
      '/binance/api/v3/aggTrades': fixture('binance', 'aggTrades.json'),
    });
    const ex = venue('binance').create({ simUrl: server.url });
    const markets = await ex.loadMarkets();
    expect(Object.keys(markets).sort()).toEqual(['BTC/USDT', 'ETH/USDT']);
    const trades = await ex.fetchTrades('BTC/USDT', undefined, 1000);
    expect(trades.map(pick)).toEqual([
      { id: '3598855001', timestamp: 1795168801003, price: '91987.12000000', amount: '0.00420000', side: 'sell', symbol: 'BTC/USDT' },
      { id: '3598855002', timestamp: 1795168801250, price: '91987.13000000', amount: '0.12843000', side: 'buy', symbol: 'BTC/USDT' },
      { id: '3598855003', timestamp: 1795168802977, price: '91990.00000000', amount: '0.00011000', side: 'buy', symbol: 'BTC/USDT' },
    ]);
    expect(trades.map((t) => [t.info.p, t.info.q, t.info.f, t.info.l])).toEqual([
      ['91987.12000000', '0.00420000', 5302233401, 5302233401],
      ['91987.13000000', '0.12843000', 5302233402, 5302233405],
      ['91990.00000000', '0.00011000', 5302233406, 5302233406],
    ]);
    // spot public endpoints only: no futures/options markets, no sapi (keyed) calls
    expect(server.requests.map((r) => r.split('?')[0])).toEqual(['/binance/api/v3/exchangeInfo', '/binance/api/v3/aggTrades']);
  });

  it('asks for the trades from since with startTime alone (no one-hour window), and a backfill bound with endTime', async () => {
    server = await serveFixtures({
      '/binance/api/v3/exchangeInfo': fixture('binance', 'exchangeInfo.json'),
      '/binance/api/v3/aggTrades': fixture('binance', 'aggTrades.json'),
    });
    const ex = venue('binance').create({ simUrl: server.url });
    const trades = await ex.fetchTrades('BTC/USDT', 1795168801250, 1000);
    expect(trades.map((t) => t.id)).toEqual(['3598855002', '3598855003']);
    await ex.fetchTrades('BTC/USDT', 1795168801250, 1000, { until: 1795168900000 });
    expect(server.requests.filter((r) => r.startsWith('/binance/api/v3/aggTrades'))).toEqual([
      '/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=1795168801250&limit=1000',
      '/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=1795168801250&limit=1000&endTime=1795168900000',
    ]);
  });
});

describe('valr', () => {
  it('is a ccxt exchange class of its own', () => {
    const ex = new Valr();
    expect(ex.id).toBe('valr');
    expect(ex.has.fetchTrades).toBe(true);
    expect(ex.has.fetchMarkets).toBe(true);
  });

  it('maps spot pairs (its futures left out) and public trades (takerSide is the side), sequenceIds exact', async () => {
    server = await serveFixtures({
      '/valr/v1/public/pairs': fixture('valr', 'pairs.json'),
      '/valr/v1/public/BTCZAR/trades': fixture('valr', 'trades.json'),
    });
    const ex = venue('valr').create({ simUrl: server.url });
    const markets = await ex.loadMarkets();
    expect(Object.keys(markets).sort()).toEqual(['BTC/ZAR', 'USDT/ZAR']); // USDTZARPERP is a future
    expect(markets['BTC/ZAR']!.precision.price).toBe('1');
    const trades = await ex.fetchTrades('BTC/ZAR');
    expect(trades.map(pick)).toEqual([
      { id: '01a1f866-0609-7b3e-9e02-5a6c7d8e9f10', timestamp: Date.parse('2026-11-20T09:59:58.217Z'), price: '1679406', amount: '0.0105', side: 'buy', symbol: 'BTC/ZAR' },
      { id: '01a1f866-0609-7c10-8f1c-74b5c1d0a311', timestamp: Date.parse('2026-11-20T09:59:58.217Z'), price: '1679406', amount: '0.004914', side: 'buy', symbol: 'BTC/ZAR' },
      { id: '01a1f866-1efc-7a52-a5d1-29c0f3e2b0a7', timestamp: Date.parse('2026-11-20T10:00:04.604Z'), price: '1676719', amount: '0.002344', side: 'sell', symbol: 'BTC/ZAR' },
    ]);
    // integers beyond 2^53 keep every digit (as text), and the venue's decimal strings are kept as sent
    expect(trades.map((t) => [String(t.info.sequenceId), t.info.price, t.info.quantity, t.info.quoteVolume])).toEqual([
      ['1368931122675208191', '1679406', '0.0105', '17633.763'],
      ['1368931122675208192', '1679406', '0.004914', '8252.601084'],
      ['1368931122675208193', '1676719', '0.002344', '3930.229336'],
    ]);
    expect(trades[1]!.cost).toBe('8252.601084');
  });

  it('asks for the trades since `since` with startTime, and an endTime of its own each call (past the CDN)', async () => {
    server = await serveFixtures(
      {
        '/valr/v1/public/pairs': fixture('valr', 'pairs.json'),
        '/valr/v1/public/BTCZAR/trades': fixture('valr', 'trades.json'),
      },
      { Date: new Date(Date.parse('2026-11-20T10:00:05Z')).toUTCString() },
    );
    const ex = venue('valr').create({ simUrl: server.url });
    const trades = await ex.fetchTrades('BTC/ZAR', Date.parse('2026-11-20T10:00:00Z'), 100);
    expect(trades.map((t) => t.side)).toEqual(['sell']);
    await ex.fetchTrades('BTC/ZAR', Date.parse('2026-11-20T10:00:00Z'), 100);
    const asked = server.requests.filter((r) => r.startsWith('/valr/v1/public/BTCZAR/trades')).map((r) => new URL(r, server!.url).searchParams);
    expect(asked.map((q) => [q.get('limit'), q.get('startTime')])).toEqual([
      ['100', '2026-11-20T10:00:00.000Z'],
      ['100', '2026-11-20T10:00:00.000Z'],
    ]);
    // past the venue's clock (its Date), and never the same twice: no answer is a CDN copy of another
    const ends = asked.map((q) => Date.parse(q.get('endTime')!));
    expect(ends[0]).toBeGreaterThanOrEqual(Date.parse('2026-11-20T10:00:06Z'));
    expect(ends[1]).toBeGreaterThan(ends[0]!);
  });

  for (const bound of ['now', 'until'] as const) {
    it(`asks an empty page after a full one again by another URL, so the CDN's copy of it loses nothing (walking back from ${bound})`, async () => {
      const at = (i: number) => new Date(Date.parse('2026-11-20T10:00:00Z') + i * 1000).toISOString();
      const trade = (i: number) => ({
        price: String(1_670_000 + i),
        quantity: '0.001',
        currencyPair: 'BTCZAR',
        tradedAt: at(i),
        takerSide: i % 2 ? 'buy' : 'sell',
        sequenceId: 1000 + i,
        id: `trade-${i}`,
        quoteVolume: '1670',
      });
      const all = Array.from({ length: 130 }, (_, i) => trade(i)).reverse(); // newest first
      // VALR answers the walk's second page (before trade-30) empty once, and the CDN keeps that
      // answer for its URL; any other URL reaches VALR and gets the 30 older trades.
      const kept = new Map<string, unknown>();
      let glitched = false;
      server = await serveFixtures({
        '/valr/v1/public/pairs': fixture('valr', 'pairs.json'),
        '/valr/v1/public/BTCZAR/trades': (url: URL) => {
          if (kept.has(url.search)) return kept.get(url.search);
          const from = Date.parse(url.searchParams.get('startTime')!);
          const listed = all.filter((t) => Date.parse(t.tradedAt) >= from);
          const before = url.searchParams.get('beforeId');
          let answer: unknown[];
          if (before === null) answer = listed.slice(0, 100);
          else if (before === 'trade-30' && !glitched) {
            glitched = true;
            answer = [];
          } else answer = listed.slice(listed.findIndex((t) => t.id === before) + 1).slice(0, 100);
          kept.set(url.search, answer);
          return answer;
        },
      });
      const v = venue('valr');
      const ex = v.create({ simUrl: server.url });
      const params = bound === 'until' ? { until: Date.parse('2026-11-20T11:00:00Z') } : {};
      const got: string[] = [];
      let since = Date.parse('2026-11-20T09:00:00Z');
      for (let page = 0; page < 5; page++) {
        const trades = await ex.fetchTrades('BTC/ZAR', since, v.pageSize, params);
        for (const t of trades) if (!got.includes(t.id!)) got.push(t.id!);
        if (trades.length < v.pageSize) break;
        since = trades.at(-1)!.timestamp!;
      }
      expect(got).toEqual(Array.from({ length: 130 }, (_, i) => `trade-${i}`));
    });
  }
});

describe('quidax', () => {
  it('is a ccxt exchange class of its own', () => {
    const ex = new Quidax();
    expect(ex.id).toBe('quidax');
    expect(ex.has.fetchTrades).toBe(true);
  });

  it('maps markets (NGN books and others) and recent trades (type is the taker side)', async () => {
    server = await serveFixtures({
      '/quidax/api/v1/markets': fixture('quidax', 'markets.json'),
      '/quidax/api/v1/trades/usdtngn': fixture('quidax', 'trades.json'),
    });
    const ex = venue('quidax').create({ simUrl: server.url });
    const markets = await ex.loadMarkets();
    expect(Object.keys(markets).sort()).toEqual(['BTC/NGN', 'BTC/USDT', 'USDT/NGN']);
    expect(markets['USDT/NGN']!.id).toBe('usdtngn');
    const trades = await ex.fetchTrades('USDT/NGN');
    expect(trades.map(pick)).toEqual([
      { id: '48213376', timestamp: 1795168781300, price: '1569.02', amount: '20.69', side: 'sell', symbol: 'USDT/NGN' },
      { id: '48213377', timestamp: 1795168799042, price: '1571.77', amount: '250.0', side: 'buy', symbol: 'USDT/NGN' },
    ]);
    expect(trades.map((t) => [t.info.trade_id, t.info.price, t.info.base_volume, t.info.quote_volume])).toEqual([
      [48213376, '1569.02', '20.69', '32463.0238'],
      [48213377, '1571.77', '250.0', '392942.5'],
    ]);
    // since is applied to the recent list client-side
    const later = await ex.fetchTrades('USDT/NGN', 1795168790000, 100);
    expect(later.map((t) => t.id)).toEqual(['48213377']);
  });

  it('reads second timestamps and the older field names too', () => {
    const ex = new Quidax({ number: String }); // as the service makes it (pipeline/venues/shared.ts baseConfig)
    const t = ex.parseTrade({ id: 7, price: '1500.5', volume: '3', funds: '4501.5', side: 'sell', created_at: '2026-11-20T10:00:00Z' });
    expect(pick(t)).toMatchObject({ id: '7', timestamp: Date.parse('2026-11-20T10:00:00Z'), price: '1500.5', amount: '3', side: 'sell' });
    const s = ex.parseTrade({ trade_id: 8, price: '1', base_volume: '2', timestamp: 1795168781, type: 'buy' });
    expect(s.timestamp).toBe(1795168781000);
  });
});

describe('bodies that are not JSON', () => {
  it('are an error, not an empty page', async () => {
    server = await serveFixtures({
      '/luno/api/exchange/1/markets': fixture('luno', 'markets.json'),
      '/luno/api/1/trades': '{"trades":[{"sequence":4031995,"timest',
    });
    const ex = venue('luno').create({ simUrl: server.url });
    await expect(ex.fetchTrades('BTC/NGN')).rejects.toThrow(/not JSON/);
  });
});
