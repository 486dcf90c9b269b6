// The simulated market itself: deterministic and stable trades that move like a market, replay
// files, fault control over HTTP, and a clean stop even with a request held open.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchCoinbase, fetchExchangeRateApi } from '../../pipeline/fx/index.js';
import { parseReplay, startSimMarket, type SimMarket, type SimTrade } from '../../sim/index.js';
import { venueById } from '../../pipeline/venues/index.js';
import { until } from '../support/wait.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

describe('generated market', () => {
  let clock = T0;
  let sim: SimMarket;
  beforeAll(async () => {
    sim = await startSimMarket({ seed: 1, now: () => clock, historyStart: T0 - 6 * HOUR });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('lists what the venues list: Luno NGN, ZAR, KES and UGX books, Binance its USDT books, VALR ZAR, Quidax NGN', () => {
    const l = sim.listings();
    expect(l.luno).toEqual(expect.arrayContaining(['BTCNGN', 'USDTNGN', 'BTCZAR', 'BTCKES', 'BTCUGX']));
    expect(l.binance).toEqual(['BTCUSDT', 'ETHUSDT', 'XRPUSDT', 'SOLUSDT']);
    expect(l.valr).toEqual(['BTCZAR', 'ETHZAR', 'XRPZAR', 'SOLZAR', 'USDTZAR']);
    expect(l.quidax).toEqual(['BTCNGN', 'ETHNGN', 'XRPNGN', 'USDTNGN']);
    const all = Object.values(l).flat();
    expect(all.filter((pair) => /GHS$/.test(pair))).toEqual([]);
    for (const pair of ['ETHKES', 'XRPKES', 'USDTKES', 'USDCKES', 'USDTUGX', 'BTCGHS', 'USDTGHS']) expect(all, pair).not.toContain(pair);
    l.luno!.push('MUTATED');
    expect(sim.listings().luno).not.toContain('MUTATED');
    expect(sim.served('luno', 'BTCKES').length).toBeGreaterThan(0);
    expect(sim.served('luno', 'USDTKES')).toEqual([]);
    expect(sim.served('nowhere', 'BTCNGN')).toEqual([]);
  });

  it('serves only trades up to now, from historyStart, with unique ids increasing with time', () => {
    for (const [venue, pairs] of Object.entries(sim.listings())) {
      for (const pair of pairs) {
        const trades = sim.served(venue, pair);
        expect(trades.length, `${venue} ${pair}`).toBeGreaterThan(0);
        expect(trades[0]!.time).toBeGreaterThanOrEqual(T0 - 6 * HOUR);
        expect(trades.at(-1)!.time).toBeLessThanOrEqual(T0);
        expect(new Set(trades.map((t) => t.id)).size).toBe(trades.length);
        const problems: string[] = [];
        for (let i = 0; i < trades.length; i++) {
          const t = trades[i]!;
          const prev = trades[i - 1];
          if (prev && !(t.time > prev.time)) problems.push(`${t.id}: time not increasing`);
          if (prev && !(t.id.length === prev.id.length ? t.id > prev.id : t.id.length > prev.id.length)) problems.push(`${t.id}: id not increasing`);
          if (t.venue !== venue || t.pair !== pair) problems.push(`${t.id}: wrong venue/pair`);
          if (!(t.price > 0) || !(t.amount > 0) || (t.side !== 'buy' && t.side !== 'sell')) problems.push(`${t.id}: bad trade`);
        }
        expect(problems, `${venue} ${pair}`).toEqual([]);
      }
    }
  });

  it('prices sit at realistic levels and every venue agrees on a pair to within about 1%', () => {
    const level = (venue: string, pair: string) => median(sim.served(venue, pair).filter((t) => t.time > T0 - HOUR).map((t) => t.price));
    const within = (x: number, target: number, tolerance: number) => Math.abs(x / target - 1) < tolerance;
    expect(within(level('binance', 'BTCUSDT'), 90_000, 0.15)).toBe(true);
    expect(within(level('binance', 'ETHUSDT'), 3_200, 0.2)).toBe(true);
    expect(within(level('binance', 'XRPUSDT'), 2.2, 0.25)).toBe(true);
    expect(within(level('binance', 'SOLUSDT'), 180, 0.25)).toBe(true);
    expect(within(level('luno', 'USDTNGN'), 1530 * 1.035, 0.05)).toBe(true); // parallel-market premium
    expect(within(level('valr', 'USDTZAR'), 18, 0.05)).toBe(true);
    expect(within(level('quidax', 'USDTNGN'), 1530 * 1.035, 0.05)).toBe(true);
    expect(within(level('luno', 'BTCKES') / level('binance', 'BTCUSDT'), 129 * 1.015, 0.06)).toBe(true);
    expect(within(level('luno', 'BTCUGX') / level('binance', 'BTCUSDT'), 3650 * 1.02, 0.06)).toBe(true);
    // Local books carry a premium over the USDT book times the official rate.
    const ngnPremium = level('luno', 'BTCNGN') / level('binance', 'BTCUSDT') / 1530;
    expect(ngnPremium).toBeGreaterThan(0.98);
    for (const [pair, venues] of [
      ['BTCNGN', ['luno', 'quidax']],
      ['USDTNGN', ['luno', 'quidax']],
      ['BTCZAR', ['luno', 'valr']],
      ['USDTZAR', ['luno', 'valr']],
      ['ETHZAR', ['luno', 'valr']],
    ] as const) {
      const levels = venues.map((v) => level(v, pair));
      expect(Math.max(...levels) / Math.min(...levels) - 1, pair).toBeLessThan(0.01);
    }
  });

  it('busy books trade several times a minute, thin ones less, with bursts', () => {
    const perMinute = (venue: string, pair: string) => sim.served(venue, pair).length / 360;
    expect(perMinute('binance', 'BTCUSDT')).toBeGreaterThan(5);
    expect(perMinute('luno', 'BTCZAR')).toBeGreaterThan(2);
    expect(perMinute('luno', 'BTCUGX')).toBeLessThan(1);
    const byMinute = new Map<number, number>();
    for (const t of sim.served('binance', 'BTCUSDT')) byMinute.set(Math.floor(t.time / MINUTE), (byMinute.get(Math.floor(t.time / MINUTE)) ?? 0) + 1);
    const counts = [...byMinute.values()];
    expect(Math.max(...counts)).toBeGreaterThan(3 * median(counts)); // a burst
    const sides = new Set(sim.served('luno', 'BTCNGN').map((t) => t.side));
    expect(sides).toEqual(new Set(['buy', 'sell']));
  });

  it('is deterministic: same seed and clock, same trades; another seed, other trades', async () => {
    const twin = await startSimMarket({ seed: 1, now: () => clock, historyStart: T0 - 6 * HOUR });
    const other = await startSimMarket({ seed: 2, now: () => clock, historyStart: T0 - 6 * HOUR });
    try {
      for (const [venue, pair] of [['luno', 'BTCNGN'], ['valr', 'XRPZAR'], ['quidax', 'USDTNGN'], ['binance', 'SOLUSDT']] as const) {
        expect(twin.served(venue, pair)).toEqual(sim.served(venue, pair));
        expect(other.served(venue, pair)).not.toEqual(sim.served(venue, pair));
      }
    } finally {
      await twin.stop();
      await other.stop();
    }
  });

  it('never changes a trade once it exists, whatever was asked before or where history starts', async () => {
    const before = sim.served('luno', 'ETHZAR');
    clock = T0 + 30 * MINUTE;
    try {
      const after = sim.served('luno', 'ETHZAR');
      expect(after.length).toBeGreaterThan(before.length);
      expect(after.slice(0, before.length)).toEqual(before);
      const late = await startSimMarket({ seed: 1, now: () => clock, historyStart: T0 - HOUR });
      try {
        const overlap = (ts: SimTrade[]) => ts.filter((t) => t.time >= T0 - HOUR);
        expect(late.served('luno', 'ETHZAR')).toEqual(overlap(after));
      } finally {
        await late.stop();
      }
    } finally {
      clock = T0;
    }
  });

  it("pages VALR's history back by trade id, every trade once, and refuses an id it never gave", async () => {
    type ValrTrade = { id: string; tradedAt: string };
    const page = async (query: string) => (await (await fetch(`${sim.url}/valr/v1/public/BTCZAR/trades${query}`)).json()) as ValrTrade[];
    const newest = await page('');
    const older = await page(`?beforeId=${newest.at(-1)!.id}`);
    const all = sim.served('valr', 'BTCZAR').reverse(); // newest first, as VALR sends them
    expect(newest.length).toBe(100);
    expect([...newest, ...older].map((t) => t.id)).toEqual(all.slice(0, newest.length + older.length).map((t) => t.id));
    // the same shape, time and sequence number, another opaque part: not a trade of this market
    const real = newest[0]!.id;
    const forged = `${real.slice(0, 15)}${real[15] === '0' ? '1' : '0'}${real.slice(16)}`;
    const refused = await fetch(`${sim.url}/valr/v1/public/BTCZAR/trades?beforeId=${forged}`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ message: expect.stringContaining('unknown trade id') });
  });

  it('serves Binance aggTrades from startTime or up to endTime, any distance apart (no one-hour window)', async () => {
    type Agg = { a: number; p: string; q: string; T: number; m: boolean };
    const agg = async (query: string) => {
      const res = await fetch(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&${query}`);
      expect(res.status, query).toBe(200);
      return (await res.json()) as Agg[];
    };
    const served = sim.served('binance', 'BTCUSDT');
    const start = T0 - 5 * HOUR;
    const fromStart = served.filter((t) => t.time >= start).slice(0, 1000).map((t) => Number(t.id));
    expect((await agg(`startTime=${start}&endTime=${T0}&limit=1000`)).map((t) => t.a)).toEqual(fromStart);
    expect((await agg(`startTime=${start}&limit=1000`)).map((t) => t.a)).toEqual(fromStart);
    const end = T0 - 4 * HOUR;
    expect((await agg(`endTime=${end}&limit=50`)).map((t) => t.a)).toEqual(served.filter((t) => t.time <= end).slice(-50).map((t) => Number(t.id)));
    const [first] = await agg(`startTime=${start}&limit=1`);
    expect(first).toMatchObject({ a: expect.any(Number), p: expect.stringMatching(/^\d+\.\d{8}$/), q: expect.stringMatching(/^\d+\.\d{8}$/), T: expect.any(Number), m: expect.any(Boolean) });
  });

  it('gives VALR trades version-7 UUIDs of their time and sequenceIds beyond 2^53, written exactly', async () => {
    const text = await (await fetch(`${sim.url}/valr/v1/public/BTCZAR/trades?limit=5`)).text();
    const sequenceIds = [...text.matchAll(/"sequenceId":(\d+)/g)].map((m) => BigInt(m[1]!));
    expect(sequenceIds).toHaveLength(5);
    for (const [i, seq] of sequenceIds.entries()) {
      expect(seq).toBeGreaterThan(2n ** 53n);
      if (i > 0) expect(seq).toBeLessThan(sequenceIds[i - 1]!); // newest first
    }
    for (const t of JSON.parse(text) as Array<{ id: string; tradedAt: string; price: string; quantity: string }>) {
      expect(t.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(t.id.slice(0, 8) + t.id.slice(9, 13), 16)).toBe(Date.parse(t.tradedAt));
      expect(t).toMatchObject({ price: expect.stringMatching(/^\d+(\.\d+)?$/), quantity: expect.stringMatching(/^\d+(\.\d+)?$/) });
    }
  });

  it("answers a VALR trades URL with the same answer for 30 s, as VALR's CDN does", async () => {
    const url = `${sim.url}/valr/v1/public/BTCZAR/trades?limit=3`;
    const newestOf = async (res: Response) => ((await res.json()) as Array<{ id: string }>)[0]!.id;
    try {
      const first = await fetch(url);
      expect(first.headers.get('cache-control')).toBe('max-age=30');
      expect(first.headers.get('age')).toBeNull();
      const date = first.headers.get('date');
      const newest = await newestOf(first);
      clock = T0 + 25_000;
      const traded = sim.served('valr', 'BTCZAR').filter((t) => t.time > T0);
      expect(traded.length).toBeGreaterThan(0); // a trade since: a fresh answer would hold it
      const again = await fetch(url);
      expect({ date: again.headers.get('date'), age: again.headers.get('age'), newest: await newestOf(again) }).toEqual({ date, age: '25', newest });
      // another URL is another answer, made now
      expect(await newestOf(await fetch(`${url}&skip=0`))).toBe(traded.at(-1)!.id);
      clock = T0 + 30_000;
      const expired = await fetch(url);
      expect(expired.headers.get('age')).toBeNull();
      expect(await newestOf(expired)).toBe(sim.served('valr', 'BTCZAR').at(-1)!.id);
      // only the trades are cached
      expect((await fetch(`${sim.url}/valr/v1/public/pairs`)).headers.get('cache-control')).toBeNull();
    } finally {
      clock = T0;
    }
  });

  it('answers unknown paths and venues with 404s in the venue style', async () => {
    expect((await fetch(`${sim.url}/kraken/0/public/Trades`)).status).toBe(404);
    const luno = await fetch(`${sim.url}/luno/api/1/nothing`);
    expect(luno.status).toBe(404);
    expect(await luno.json()).toMatchObject({ error_code: 'ErrNotFound' });
    const bad = await fetch(`${sim.url}/binance/api/v3/aggTrades?symbol=DOGEUSDT`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ code: -1121, msg: 'Invalid symbol.' });
    const both = await fetch(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&fromId=1&startTime=${T0}`);
    expect(await both.json()).toMatchObject({ code: -1128 });
    const old = await fetch(`${sim.url}/luno/api/1/trades?pair=XBTNGN&since=${T0 - 25 * HOUR}`);
    expect(old.status).toBe(400);
    expect(await old.json()).toMatchObject({ error_code: 'ErrInvalidArguments' });
  });
});

describe('real volume', () => {
  it('plays the USDT legs at hundreds of trades a minute, pages them through ccxt, and forgets old ones', async () => {
    let clock = T0;
    const sim = await startSimMarket({ seed: 2, now: () => clock, historyStart: T0 - HOUR, volume: 'real', retainMs: 30 * MINUTE });
    try {
      const perMinute = median(
        Array.from({ length: 60 }, (_, m) => sim.served('binance', 'BTCUSDT').filter((t) => Math.floor((t.time - (T0 - HOUR)) / MINUTE) === m).length),
      );
      expect(perMinute).toBeGreaterThanOrEqual(200);
      expect(perMinute).toBeLessThanOrEqual(1_000);
      const day = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT'].reduce((n, p) => n + sim.served('binance', p).length, 0) * 24;
      expect(day).toBeGreaterThan(1_000_000); // a real day: 1-2 million trades
      // a busy minute takes several 1,000-trade pages, in order and without a gap
      const binance = venueById('binance')!.create({ simUrl: sim.url });
      const served = sim.served('binance', 'BTCUSDT').filter((t) => t.time >= T0 - 10 * MINUTE);
      const got: string[] = [];
      let since = T0 - 10 * MINUTE;
      for (let page = 0; page < 50; page++) {
        const trades = await binance.fetchTrades('BTC/USDT', since, 1000);
        for (const t of trades) if (!got.includes(String(t.id)) && t.timestamp! >= T0 - 10 * MINUTE) got.push(String(t.id));
        if (trades.length < 1000) break;
        since = trades.at(-1)!.timestamp!;
      }
      expect(got).toEqual(served.map((t) => t.id));
      // an hour later, trades older than the 30 minutes kept are gone, the recent ones intact
      clock += HOUR;
      const kept = sim.served('binance', 'BTCUSDT');
      expect(kept[0]!.time).toBeGreaterThanOrEqual(clock - 30 * MINUTE - MINUTE);
      expect(kept.at(-1)!.time).toBeLessThanOrEqual(clock);
    } finally {
      await sim.stop();
    }
  });
});

describe('retention', () => {
  it('keeps a long-running light market to the hours it was told, however many days pass', async () => {
    let clock = T0;
    const sim = await startSimMarket({ seed: 3, now: () => clock, historyStart: T0 - 2 * HOUR, retainMs: 2 * HOUR });
    try {
      const lengths: number[] = [];
      for (let hour = 0; hour < 72; hour++) {
        clock += HOUR;
        const kept = sim.served('binance', 'BTCUSDT');
        expect(kept.at(-1)!.time).toBeLessThanOrEqual(clock);
        // dropped in steps (a quarter of the tape), so a little more than 2 hours may be left
        expect(kept[0]!.time).toBeGreaterThanOrEqual(clock - 4 * HOUR);
        lengths.push(kept.length);
      }
      expect(Math.max(...lengths.slice(-24))).toBeLessThanOrEqual(Math.max(...lengths.slice(0, 24)) * 1.5);
    } finally {
      await sim.stop();
    }
  });
});

describe('faults over HTTP and stopping', () => {
  it('sets, lists and clears faults with /_control/fault', async () => {
    const sim = await startSimMarket({ seed: 1, historyStart: Date.now() - 10 * MINUTE });
    try {
      const set = await fetch(`${sim.url}/_control/fault`, { method: 'POST', body: JSON.stringify({ venue: 'valr', kind: 'server_error', times: 2 }) });
      expect(set.status).toBe(200);
      expect(await set.json()).toEqual({ ok: true, venue: 'valr', fault: { kind: 'server_error', times: 2 } });
      expect(((await (await fetch(`${sim.url}/_control/fault`)).json()) as Record<string, unknown>).valr).toEqual({ kind: 'server_error', times: 2 });
      expect((await fetch(`${sim.url}/valr/v1/public/pairs`)).status).toBe(500);
      expect((await fetch(`${sim.url}/valr/v1/public/pairs`)).status).toBe(500);
      expect((await fetch(`${sim.url}/valr/v1/public/pairs`)).status).toBe(200); // times: 2 used up

      await fetch(`${sim.url}/_control/fault`, { method: 'POST', body: JSON.stringify({ venue: 'coinbase', kind: 'rate_limit' }) });
      expect((await fetch(`${sim.url}/coinbase/v2/exchange-rates?currency=USD`)).status).toBe(429);
      expect((await fetch(`${sim.url}/coinbase/v2/exchange-rates?currency=USD`)).status).toBe(429);
      const cleared = await fetch(`${sim.url}/_control/fault?venue=coinbase`, { method: 'DELETE' });
      expect(await cleared.json()).toEqual({ ok: true });
      expect((await fetch(`${sim.url}/coinbase/v2/exchange-rates?currency=USD`)).status).toBe(200);

      const bad = await fetch(`${sim.url}/_control/fault`, { method: 'POST', body: JSON.stringify({ venue: 'kraken', kind: 'timeout' }) });
      expect(bad.status).toBe(400);
      const badKind = await fetch(`${sim.url}/_control/fault`, { method: 'POST', body: JSON.stringify({ venue: 'luno', kind: 'explode' }) });
      expect(badKind.status).toBe(400);
      expect(() => sim.setFault('kraken', { kind: 'silent' })).toThrow(/unknown venue/);
      expect(await (await fetch(`${sim.url}/_control/listings`)).json()).toEqual(sim.listings());
    } finally {
      await sim.stop();
    }
  });

  it('GET /_control/served lists every trade offered so far (id and time), as served() does; --host picks the address', async () => {
    const sim = await startSimMarket({ seed: 3, host: '127.0.0.1', historyStart: Date.now() - 20 * MINUTE });
    try {
      expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const from = Date.now() - 10 * MINUTE;
      const answer = (await (await fetch(`${sim.url}/_control/served?venue=luno&pair=BTCNGN&from=${from}`)).json()) as { trades: { id: string; time: number }[] };
      const served = sim.served('luno', 'BTCNGN').filter((t) => t.time >= from);
      expect(answer.trades.length).toBeGreaterThan(0);
      // served() came second: trades made between the two calls may follow; the ones both saw are the same
      expect(served.slice(0, answer.trades.length).map((t) => ({ id: t.id, time: t.time }))).toEqual(answer.trades);
      const none = (await (await fetch(`${sim.url}/_control/served?venue=luno&pair=NOPE`)).json()) as { trades: unknown[] };
      expect(none.trades).toEqual([]);
    } finally {
      await sim.stop();
    }
  });

  it('stop() closes every socket, even a request held by a timeout fault', async () => {
    const sim = await startSimMarket({ historyStart: Date.now() - 10 * MINUTE });
    sim.setFault('luno', { kind: 'timeout', times: 1 });
    const hung = fetch(`${sim.url}/luno/api/1/trades?pair=XBTNGN`).then(
      () => 'answered',
      () => 'closed',
    );
    // held: the request has taken the fault's one use
    await until('the request held', async () => (await (await fetch(`${sim.url}/_control/fault`)).json()).luno === null, 5_000);
    const started = Date.now();
    await sim.stop();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await hung).toBe('closed');
    await sim.stop(); // idempotent
  });
});

describe('replay', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'afrates-replay-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const lines = [
    '# a small replay file',
    '{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:00:00.123Z","id":"123","price":152000000,"amount":0.01,"side":"buy"}',
    '{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:00:05.000Z","id":"124","price":151990000,"amount":0.002,"side":"sell"}',
    '',
    '{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:05:00.000Z","id":"125","price":152100000,"amount":0.5,"side":"buy"}',
    '{"venue":"valr","pair":"USDTZAR","time":"2026-11-20T10:01:00.000Z","id":"a1","price":18.21,"amount":100,"side":"sell"}',
    '{"fx":"coinbase","currency":"NGN","rate":1530.5,"time":"2026-11-20T10:00:00Z"}',
    '{"fx":"coinbase","currency":"ZAR","rate":18.1,"time":"2026-11-20T10:00:00Z"}',
    '{"fx":"coinbase","currency":"KES","rate":129.1,"time":"2026-11-20T10:00:00Z"}',
    '{"fx":"coinbase","currency":"GHS","rate":15.2,"time":"2026-11-20T10:00:00Z"}',
    '{"fx":"coinbase","currency":"UGX","rate":3650,"time":"2026-11-20T10:00:00Z"}',
    '{"fx":"coinbase","currency":"NGN","rate":1540,"time":"2026-11-20T10:04:00Z"}',
  ];

  it('serves exactly the file, each trade once the clock reaches it, through ccxt too', async () => {
    const file = path.join(dir, 'ok.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    let clock = Date.parse('2026-11-20T10:02:00Z');
    const sim = await startSimMarket({ replay: file, now: () => clock });
    try {
      expect(sim.listings()).toEqual({ luno: ['BTCNGN'], valr: ['USDTZAR'] });
      expect(sim.served('luno', 'BTCNGN').map((t) => t.id)).toEqual(['123', '124']);
      expect(sim.served('luno', 'BTCNGN')[0]).toEqual({
        venue: 'luno',
        pair: 'BTCNGN',
        time: Date.parse('2026-11-20T10:00:00.123Z'),
        id: '123',
        price: 152000000,
        amount: 0.01,
        side: 'buy',
      });
      const ex = venueById('luno')!.create({ simUrl: sim.url });
      await ex.loadMarkets();
      expect(Object.keys(ex.markets ?? {})).toEqual(['BTC/NGN']);
      const early = await ex.fetchTrades('BTC/NGN', Date.parse('2026-11-20T09:00:00Z'), 100);
      // ccxt hands the venue's decimal strings through as written (pipeline/venues/shared.ts)
      expect(early.map((t) => [t.id, Number(t.price), Number(t.amount), t.side])).toEqual([
        ['123', 152000000, 0.01, 'buy'],
        ['124', 151990000, 0.002, 'sell'],
      ]);
      const cb = await fetchCoinbase({ baseUrl: `${sim.url}/coinbase` });
      expect(cb.rates.find((r) => r.currency === 'NGN')!.unitsPerUsd).toBe('1530.5');
      await expect(fetchExchangeRateApi({ baseUrl: `${sim.url}/exchangerate-api` })).rejects.toThrow(/no rate for NGN/);

      clock = Date.parse('2026-11-20T11:00:00Z');
      expect(sim.served('luno', 'BTCNGN').map((t) => t.id)).toEqual(['123', '124', '125']);
      const all = await ex.fetchTrades('BTC/NGN', Date.parse('2026-11-20T10:00:05Z'), 100);
      expect(all.map((t) => t.id)).toEqual(['124', '125']);
      expect((await fetchCoinbase({ baseUrl: `${sim.url}/coinbase` })).rates[0]!.unitsPerUsd).toBe('1540');
      const valr = venueById('valr')!.create({ simUrl: sim.url });
      expect((await valr.fetchTrades('USDT/ZAR')).map((t) => [t.id, Number(t.price), t.side])).toEqual([['a1', 18.21, 'sell']]);
    } finally {
      await sim.stop();
    }
  });

  it('refuses to start on a bad line, naming its number', async () => {
    const file = path.join(dir, 'bad.jsonl');
    writeFileSync(file, [lines[1], lines[2], '{"venue":"luno","pair":"BTCNGN","time":"yesterday","id":"9","price":1,"amount":1,"side":"buy"}'].join('\n'));
    await expect(startSimMarket({ replay: file })).rejects.toThrow(/bad\.jsonl:3: "time"/);
    await expect(startSimMarket({ replay: path.join(dir, 'missing.jsonl') })).rejects.toThrow(/missing\.jsonl/);
  });

  it('checks every field', () => {
    const bad: Array<[string, RegExp]> = [
      ['not json', /:1: not valid JSON/],
      ['[1]', /:1: expected a JSON object/],
      ['{"venue":"kraken","pair":"BTCNGN","time":"2026-11-20T10:00:00Z","id":"1","price":1,"amount":1,"side":"buy"}', /"venue" must be one of/],
      ['{"venue":"luno","pair":"btc-ngn","time":"2026-11-20T10:00:00Z","id":"1","price":1,"amount":1,"side":"buy"}', /"pair"/],
      ['{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:00:00Z","id":"","price":1,"amount":1,"side":"buy"}', /"id"/],
      ['{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:00:00Z","id":"1","price":-1,"amount":1,"side":"buy"}', /"price"/],
      ['{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:00:00Z","id":"1","price":1,"amount":0,"side":"buy"}', /"amount"/],
      ['{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:00:00Z","id":"1","price":1,"amount":1,"side":"bid"}', /"side"/],
      ['{"fx":"oanda","currency":"NGN","rate":1,"time":"2026-11-20T10:00:00Z"}', /"fx"/],
      ['{"fx":"coinbase","currency":"naira","rate":1,"time":"2026-11-20T10:00:00Z"}', /"currency"/],
      ['{"fx":"coinbase","currency":"NGN","rate":"1530","time":"2026-11-20T10:00:00Z"}', /"rate"/],
    ];
    for (const [line, message] of bad) expect(() => parseReplay(line, 'x.jsonl'), line).toThrow(message);
    const dup = [lines[1], lines[1]].join('\n');
    expect(() => parseReplay(dup, 'x.jsonl')).toThrow(/x\.jsonl:2: duplicate id "123"/);
  });
});
