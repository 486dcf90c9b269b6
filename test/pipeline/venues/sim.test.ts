// Every venue, through its real ccxt class, against the simulated market: markets, paging with
// `since` (concatenated and de-duplicated, exactly what the simulator served), and each fault.
import {
  BadResponse,
  BaseError,
  DDoSProtection,
  ExchangeError,
  ExchangeNotAvailable,
  OperationFailed,
  RateLimitExceeded,
  RequestTimeout,
  type Exchange,
  type Trade,
} from 'ccxt';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimMarket, type SimMarket, type SimTrade } from '../../../sim/index.js';
import { venueById, venues, type Venue } from '../../../pipeline/venues/index.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const START = Date.UTC(2026, 10, 20, 12, 0, 0);

function venue(id: string): Venue {
  const v = venueById(id);
  if (!v) throw new Error(`no venue ${id}`);
  return v;
}

function symbolOf(ex: Exchange, pair: string): string {
  const market = Object.values(ex.markets ?? {}).find((m) => `${m.base}${m.quote}` === pair);
  if (!market) throw new Error(`${ex.id} lists no ${pair}`);
  return market.symbol;
}

/** Pages forward like the collector: since = the last trade's time, until a short page. */
async function pageForward(ex: Exchange, v: Venue, symbol: string, since: number, seen = new Map<string, Trade>()): Promise<Map<string, Trade>> {
  for (let pages = 0; pages < 1000; pages++) {
    const page = await ex.fetchTrades(symbol, since, v.pageSize);
    for (let i = 1; i < page.length; i++) expect(page[i]!.timestamp!).toBeGreaterThanOrEqual(page[i - 1]!.timestamp!);
    for (const t of page) {
      expect(t.timestamp!).toBeGreaterThanOrEqual(since);
      seen.set(t.id!, t);
    }
    if (page.length < v.pageSize) return seen;
    since = page[page.length - 1]!.timestamp!;
  }
  throw new Error('paging did not end');
}

function expectSame(got: Map<string, Trade>, served: SimTrade[], label: string): void {
  expect([...got.keys()].sort(), label).toEqual(served.map((t) => t.id).sort());
  for (const s of served) {
    const t = got.get(s.id)!;
    // ccxt hands the venue's decimal strings through as written: their values are the served ones
    expect({ time: t.timestamp, price: Number(t.price), amount: Number(t.amount), side: t.side }, `${label} ${s.id}`).toEqual({
      time: s.time,
      price: s.price,
      amount: s.amount,
      side: s.side,
    });
  }
}

describe('against the simulated market', () => {
  let clock = START;
  let sim: SimMarket;
  const exchanges = new Map<string, Exchange>();

  beforeAll(async () => {
    sim = await startSimMarket({ seed: 7, now: () => clock, historyStart: START - 3 * HOUR });
    for (const v of venues) exchanges.set(v.id, v.create({ simUrl: sim.url, timeoutMs: 2_000 }));
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('loads every listed pair of every venue, with unified symbols', async () => {
    const listings = sim.listings();
    expect(Object.keys(listings).sort()).toEqual(['binance', 'luno', 'quidax', 'valr']);
    for (const v of venues) {
      const ex = exchanges.get(v.id)!;
      await ex.loadMarkets();
      const pairs = Object.values(ex.markets ?? {}).map((m) => `${m.base}${m.quote}`).sort();
      expect(pairs, v.id).toEqual([...listings[v.id]!].sort());
      expect(Object.keys(ex.markets ?? {}).every((s) => /^[A-Z]+\/[A-Z]+$/.test(s))).toBe(true);
    }
    expect(exchanges.get('luno')!.markets!['BTC/NGN']!.id).toBe('XBTNGN');
  });

  for (const id of ['luno', 'binance', 'valr']) {
    it(`${id}: paging forward from since returns exactly what was served, for every pair`, async () => {
      const v = venue(id);
      const ex = exchanges.get(id)!;
      await ex.loadMarkets();
      for (const pair of sim.listings()[id]!) {
        const served = sim.served(id, pair);
        expect(served.length, `${id} ${pair}`).toBeGreaterThan(0);
        const got = await pageForward(ex, v, symbolOf(ex, pair), START - 3 * HOUR);
        expectSame(got, served, `${id} ${pair}`);
      }
    });
  }

  it('quidax: recent trades only, filtered by since', async () => {
    const v = venue('quidax');
    const ex = exchanges.get('quidax')!;
    await ex.loadMarkets();
    for (const pair of sim.listings().quidax!) {
      const served = sim.served('quidax', pair);
      const recent = served.slice(-100);
      const got = await pageForward(ex, v, symbolOf(ex, pair), START - 3 * HOUR);
      expectSame(got, recent, `quidax ${pair}`);
    }
  });

  it('a collector polling every two minutes stores exactly what was served, on every venue', async () => {
    const local = await startSimMarket({ seed: 11, now: () => clock, historyStart: START + HOUR });
    try {
      clock = START + HOUR + 2 * MINUTE;
      const targets = [
        ['luno', 'BTCNGN'],
        ['luno', 'BTCKES'],
        ['luno', 'BTCUGX'],
        ['binance', 'BTCUSDT'],
        ['valr', 'BTCZAR'],
        ['quidax', 'USDTNGN'],
        ['quidax', 'XRPNGN'],
      ] as const;
      const state = targets.map(([id, pair]) => ({ id, pair, ex: venue(id).create({ simUrl: local.url }), seen: new Map<string, Trade>(), since: START + HOUR }));
      for (let step = 0; step < 15; step++) {
        for (const s of state) {
          await s.ex.loadMarkets();
          await pageForward(s.ex, venue(s.id), symbolOf(s.ex, s.pair), s.since, s.seen);
          const times = [...s.seen.values()].map((t) => t.timestamp!);
          if (times.length > 0) s.since = Math.max(...times);
        }
        clock += 2 * MINUTE;
      }
      clock -= 2 * MINUTE;
      for (const s of state) expectSame(s.seen, local.served(s.id, s.pair), `${s.id} ${s.pair}`);
    } finally {
      clock = START;
      await local.stop();
    }
  });

  it('luno: its KES book loads as BTC/KES and pages through ccxt like any other', async () => {
    const ex = exchanges.get('luno')!;
    await ex.loadMarkets();
    expect(ex.markets!['BTC/KES']).toMatchObject({ id: 'XBTKES', base: 'BTC', quote: 'KES', spot: true });
    const served = sim.served('luno', 'BTCKES');
    expect(served.length).toBeGreaterThan(0);
    expectSame(await pageForward(ex, venue('luno'), 'BTC/KES', START - 3 * HOUR), served, 'luno BTCKES');
  });

  it('binance pages on from since however long a quiet spell lasts, with startTime alone', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'afrates-binance-'));
    const file = path.join(dir, 'quiet.jsonl');
    const line = (id: number, time: string) =>
      JSON.stringify({ venue: 'binance', pair: 'BTCUSDT', time, id: String(id), price: 90_000 + id, amount: 0.01, side: id % 2 ? 'buy' : 'sell' });
    writeFileSync(
      file,
      [line(1001, '2026-11-20T10:00:00Z'), line(1002, '2026-11-20T10:01:00Z'), line(1003, '2026-11-20T13:00:00Z'), line(1004, '2026-11-20T13:05:00Z')].join('\n'),
    );
    const quiet = await startSimMarket({ replay: file, now: () => Date.parse('2026-11-20T14:00:00Z') });
    try {
      const v = venue('binance');
      const ex = v.create({ simUrl: quiet.url });
      await ex.loadMarkets();
      // from the watermark (the trade at 10:01): it and the next trades, three hours on
      expect((await ex.fetchTrades('BTC/USDT', Date.parse('2026-11-20T10:01:00Z'), 1000)).map((t) => t.id)).toEqual(['1002', '1003', '1004']);
      // a fresh start inside the quiet spell
      expect((await ex.fetchTrades('BTC/USDT', Date.parse('2026-11-20T10:30:00Z'), 1000)).map((t) => t.id)).toEqual(['1003', '1004']);
      // a backfill's bound
      expect((await ex.fetchTrades('BTC/USDT', Date.parse('2026-11-20T09:00:00Z'), 1000, { until: Date.parse('2026-11-20T12:00:00Z') })).map((t) => t.id)).toEqual(['1001', '1002']);
      expectSame(await pageForward(ex, v, 'BTC/USDT', Date.parse('2026-11-20T09:00:00Z')), quiet.served('binance', 'BTCUSDT'), 'quiet');
    } finally {
      await quiet.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('valr: a collector polling every 10 s sees every trade, though the CDN keeps an answer 30 s', async () => {
    const local = await startSimMarket({ seed: 12, now: () => clock, historyStart: START + HOUR });
    try {
      clock = START + HOUR + 10 * MINUTE;
      const v = venue('valr');
      const ex = v.create({ simUrl: local.url });
      await ex.loadMarkets();
      const seen = new Map<string, Trade>();
      let since = START + HOUR;
      let polls = 0;
      for (let step = 0; step < 60; step++) {
        await pageForward(ex, v, 'BTC/ZAR', since, seen);
        polls++;
        // caught up: everything served so far is in, although the same URL asked within 30 s
        // would have been answered from the CDN's copy
        expect([...seen.keys()].sort(), `poll ${polls}`).toEqual(local.served('valr', 'BTCZAR').map((t) => t.id).sort());
        since = Math.max(since, ...[...seen.values()].map((t) => t.timestamp!));
        clock += 10_000;
      }
    } finally {
      clock = START;
      await local.stop();
    }
  });
  it('luno keeps since inside its 24 hours', async () => {
    const ex = exchanges.get('luno')!;
    await ex.loadMarkets();
    const trades = await ex.fetchTrades('BTC/NGN', START - 3 * 24 * HOUR, 100);
    expect(trades.length).toBe(100);
  });

  describe('faults', () => {
    type Check = (e: unknown) => boolean;
    const rateLimited: Check = (e) => e instanceof RateLimitExceeded || e instanceof DDoSProtection;
    // ExchangeNotAvailable (a NetworkError) from the HTTP status, or what the venue's error body maps
    // to (Binance's -1001 "Internal error" is OperationFailed): all retryable ccxt errors.
    const serverError: Check = (e) => e instanceof ExchangeNotAvailable || e instanceof ExchangeError || e instanceof OperationFailed;

    for (const v of venues) {
      const pair = { luno: 'BTCNGN', binance: 'ETHUSDT', valr: 'XRPZAR', quidax: 'BTCNGN' }[v.id];

      it(`${v.id}: rate_limit, server_error, timeout and malformed raise the right ccxt errors, then recover`, async () => {
        const ex = v.create({ simUrl: sim.url, timeoutMs: 300 });
        await ex.loadMarkets();
        const symbol = symbolOf(ex, pair);
        const since = clock - 30 * MINUTE;
        const cases: Array<[Parameters<SimMarket['setFault']>[1], Check, string]> = [
          [{ kind: 'rate_limit', times: 1 }, rateLimited, 'RateLimitExceeded/DDoSProtection'],
          [{ kind: 'server_error', times: 1 }, serverError, 'ExchangeNotAvailable/ExchangeError'],
          [{ kind: 'timeout', times: 1 }, (e) => e instanceof RequestTimeout, 'RequestTimeout'],
          [{ kind: 'malformed', times: 1 }, (e) => e instanceof BadResponse, 'BadResponse'],
        ];
        for (const [fault, check, expected] of cases) {
          sim.setFault(v.id, fault);
          const error = await ex.fetchTrades(symbol, since, v.pageSize).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error, `${v.id} ${fault!.kind}`).toBeInstanceOf(BaseError);
          expect(check(error), `${v.id} ${fault!.kind}: expected ${expected}, got ${(error as Error).constructor.name}: ${(error as Error).message}`).toBe(true);
          // times: 1 -> the next call goes through
          const page = await ex.fetchTrades(symbol, since, v.pageSize);
          expect(page.length, `${v.id} after ${fault!.kind}`).toBeGreaterThan(0);
        }
      });

      it(`${v.id}: duplicates and out_of_order still page to the same trades; silent serves none`, async () => {
        const ex = v.create({ simUrl: sim.url });
        await ex.loadMarkets();
        const symbol = symbolOf(ex, pair);
        const since = v.id === 'quidax' ? sim.served(v.id, pair).slice(-100)[0]!.time : clock - 2 * HOUR;
        const served = sim.served(v.id, pair).filter((t) => t.time >= since);
        for (const kind of ['duplicates', 'out_of_order'] as const) {
          sim.setFault(v.id, { kind });
          try {
            expectSame(await pageForward(ex, v, symbol, since), served, `${v.id} ${kind}`);
          } finally {
            sim.setFault(v.id, null);
          }
        }
        sim.setFault(v.id, { kind: 'silent' });
        try {
          expect(await ex.fetchTrades(symbol, since, v.pageSize)).toEqual([]);
        } finally {
          sim.setFault(v.id, null);
        }
        expect((await ex.fetchTrades(symbol, since, v.pageSize)).length).toBeGreaterThan(0);
      });
    }

    it('raw responses: 429 carries Retry-After, duplicates repeat, out_of_order shuffles', async () => {
      const url = `${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&limit=50`;
      const plain = (await (await fetch(url)).json()) as Array<{ a: number }>;
      sim.setFault('binance', { kind: 'rate_limit', times: 1 });
      const limited = await fetch(url);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
      await limited.body?.cancel();
      sim.setFault('binance', { kind: 'duplicates', times: 1 });
      const dup = (await (await fetch(url)).json()) as Array<{ a: number }>;
      expect(dup.length).toBeGreaterThan(plain.length);
      expect(new Set(dup.map((t) => t.a))).toEqual(new Set(plain.map((t) => t.a)));
      sim.setFault('binance', { kind: 'out_of_order', times: 1 });
      const shuffled = (await (await fetch(url)).json()) as Array<{ a: number }>;
      expect(shuffled.map((t) => t.a)).not.toEqual(plain.map((t) => t.a));
      expect([...shuffled.map((t) => t.a)].sort()).toEqual([...plain.map((t) => t.a)].sort());
      sim.setFault('binance', { kind: 'malformed', times: 1 });
      const broken = await (await fetch(url)).text();
      expect(() => JSON.parse(broken)).toThrow();
      expect((await (await fetch(url)).json()) as unknown).toEqual(plain);
    });
  });
});
