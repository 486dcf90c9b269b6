// Each venue's trade mapping, from recorded-style payloads in the venue's real format, through the
// real ccxt class (markets loaded from a fixture, urls overridden to a local fixture server).
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

const pick = (t: { id?: string; timestamp?: number; price?: number; amount?: number; side?: string; symbol?: string }) => ({
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
  it('maps markets (XBT is BTC) and public trades', async () => {
    server = await serveFixtures({
      '/luno/api/exchange/1/markets': fixture('luno', 'markets.json'),
      '/luno/api/1/trades': fixture('luno', 'trades.json'),
    });
    const ex = venue('luno').create({ simUrl: server.url });
    const markets = await ex.loadMarkets();
    expect(Object.keys(markets).sort()).toEqual(['BTC/NGN', 'BTC/ZAR', 'ETH/BTC', 'USDT/NGN']);
    expect(markets['BTC/NGN']!.id).toBe('XBTNGN');
    const trades = await ex.fetchTrades('BTC/NGN');
    expect(trades.map(pick)).toEqual([
      { id: '4031993', timestamp: 1795168776230, price: 144395000, amount: 0.002046, side: 'buy', symbol: 'BTC/NGN' },
      { id: '4031994', timestamp: 1795168791046, price: 144210650, amount: 0.0125, side: 'sell', symbol: 'BTC/NGN' },
      { id: '4031995', timestamp: 1795168804512, price: 144381220, amount: 0.000831, side: 'buy', symbol: 'BTC/NGN' },
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
    expect(Object.keys(markets).sort()).toEqual(['BTC/USDT', 'USDT/ZAR']);
    const trades = await ex.fetchTrades('BTC/USDT', undefined, 1000);
    expect(trades.map(pick)).toEqual([
      { id: '3418855001', timestamp: 1795168801003, price: 91987.12, amount: 0.0042, side: 'sell', symbol: 'BTC/USDT' },
      { id: '3418855002', timestamp: 1795168801250, price: 91987.13, amount: 0.12843, side: 'buy', symbol: 'BTC/USDT' },
      { id: '3418855003', timestamp: 1795168802977, price: 91990, amount: 0.00011, side: 'buy', symbol: 'BTC/USDT' },
    ]);
    // spot public endpoints only: no futures/options markets, no sapi (keyed) calls
    expect(server.requests.map((r) => r.split('?')[0])).toEqual(['/binance/api/v3/exchangeInfo', '/binance/api/v3/aggTrades']);
  });
});

describe('valr', () => {
  it('is a ccxt exchange class of its own', () => {
    const ex = new Valr();
    expect(ex.id).toBe('valr');
    expect(ex.has.fetchTrades).toBe(true);
    expect(ex.has.fetchMarkets).toBe(true);
  });

  it('maps spot pairs and public trades (takerSide is the side)', async () => {
    server = await serveFixtures({
      '/valr/v1/public/pairs': fixture('valr', 'pairs.json'),
      '/valr/v1/public/BTCZAR/trades': fixture('valr', 'trades.json'),
    });
    const ex = venue('valr').create({ simUrl: server.url });
    const markets = await ex.loadMarkets();
    expect(Object.keys(markets).sort()).toEqual(['BTC/ZAR', 'USDT/ZAR']); // the perpetual is left out
    expect(markets['BTC/ZAR']!.precision.price).toBe(1);
    const trades = await ex.fetchTrades('BTC/ZAR');
    expect(trades.map(pick)).toEqual([
      { id: '0197a3c1-9d09-7c10-8f1c-74b5c1d0a311', timestamp: Date.parse('2026-11-20T09:59:58.217Z'), price: 1679406, amount: 0.004914, side: 'buy', symbol: 'BTC/ZAR' },
      { id: '0197a3c1-b6bc-7a52-a5d1-29c0f3e2b0a7', timestamp: Date.parse('2026-11-20T10:00:04.604Z'), price: 1676719, amount: 0.002344, side: 'sell', symbol: 'BTC/ZAR' },
    ]);
    expect(trades[0]!.cost).toBeCloseTo(8252.601084, 6);
  });

  it('asks for the trades since `since` with startTime', async () => {
    server = await serveFixtures({
      '/valr/v1/public/pairs': fixture('valr', 'pairs.json'),
      '/valr/v1/public/BTCZAR/trades': fixture('valr', 'trades.json'),
    });
    const ex = venue('valr').create({ simUrl: server.url });
    const trades = await ex.fetchTrades('BTC/ZAR', Date.parse('2026-11-20T10:00:00Z'), 100);
    expect(trades.map((t) => t.side)).toEqual(['sell']);
    expect(server.requests).toContain('/valr/v1/public/BTCZAR/trades?limit=100&startTime=2026-11-20T10%3A00%3A00.000Z');
  });
});

describe('quidax', () => {
  it('is a ccxt exchange class of its own', () => {
    const ex = new Quidax();
    expect(ex.id).toBe('quidax');
    expect(ex.has.fetchTrades).toBe(true);
  });

  it('maps markets and recent trades (type is the taker side)', async () => {
    server = await serveFixtures({
      '/quidax/api/v1/markets': fixture('quidax', 'markets.json'),
      '/quidax/api/v1/trades/usdtngn': fixture('quidax', 'trades.json'),
    });
    const ex = venue('quidax').create({ simUrl: server.url });
    const markets = await ex.loadMarkets();
    expect(Object.keys(markets).sort()).toEqual(['BTC/NGN', 'USDT/GHS', 'USDT/NGN']);
    expect(markets['USDT/NGN']!.id).toBe('usdtngn');
    const trades = await ex.fetchTrades('USDT/NGN');
    expect(trades.map(pick)).toEqual([
      { id: '48213376', timestamp: 1795168781300, price: 1569.02, amount: 20.69, side: 'sell', symbol: 'USDT/NGN' },
      { id: '48213377', timestamp: 1795168799042, price: 1571.77, amount: 250, side: 'buy', symbol: 'USDT/NGN' },
    ]);
    // since is applied to the recent list client-side
    const later = await ex.fetchTrades('USDT/NGN', 1795168790000, 100);
    expect(later.map((t) => t.id)).toEqual(['48213377']);
  });

  it('reads second timestamps and the older field names too', () => {
    const ex = new Quidax();
    const t = ex.parseTrade({ id: 7, price: '1500.5', volume: '3', funds: '4501.5', side: 'sell', created_at: '2026-11-20T10:00:00Z' });
    expect(pick(t)).toMatchObject({ id: '7', timestamp: Date.parse('2026-11-20T10:00:00Z'), price: 1500.5, amount: 3, side: 'sell' });
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
