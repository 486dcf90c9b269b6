// The SQL layer against an independent TypeScript computation over the same trades: candles at
// every level (per pair and per venue), VWAP, synthetic price, premium, EOD and index values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { insertFxRates, insertTrades, type TradeRow } from '../../pipeline/store.js';
import { openTestDatabase } from '../support/db.js';
import { generateFx, generateTrades } from '../support/market.js';
import * as ref from '../support/reference.js';

const start = new Date('2026-03-01T00:00:00Z');
const HOURS = 50; // three UTC days, the last one partial
const listings = {
  BTCNGN: ['luno', 'quidax'],
  ETHNGN: ['luno'],
  USDTNGN: ['luno', 'quidax'],
  BTCZAR: ['luno', 'valr', 'binance'],
  BTCUSDT: ['binance'],
  ETHUSDT: ['binance'],
};

let db: Database;
let trades: TradeRow[];
const fx = generateFx(start, HOURS);

interface SqlCandle {
  interval: string;
  bucket: Date;
  pair: string;
  open: string;
  high: string;
  low: string;
  close: string;
  pv: string;
  volume: string;
  trades: string;
  vwap: string;
}

async function sqlCandles(interval: ref.Interval): Promise<SqlCandle[]> {
  return db.sql<SqlCandle[]>`
    SELECT * FROM candles WHERE interval = ${interval} ORDER BY bucket, pair`;
}

function expectCandlesMatch(actual: Array<Omit<SqlCandle, 'interval'> & { exchange?: string }>, expected: ref.RefCandle[]) {
  expect(actual.map((c) => `${c.bucket.getTime()}|${c.pair}|${c.exchange ?? ''}`)).toEqual(
    expected.map((c) => `${c.bucket}|${c.pair}|${c.exchange ?? ''}`),
  );
  actual.forEach((c, i) => {
    const e = expected[i]!;
    const where = `${c.pair} ${c.exchange ?? ''} ${c.bucket.toISOString()}`;
    expect(Number(c.open), where).toBe(e.open);
    expect(Number(c.high), where).toBe(e.high);
    expect(Number(c.low), where).toBe(e.low);
    expect(Number(c.close), where).toBe(e.close);
    expect(Number(c.trades), where).toBe(e.trades);
    expect(ref.closeTo(c.volume, e.volume), where).toBe(true);
    expect(ref.closeTo(c.pv, e.pv), where).toBe(true);
    expect(ref.closeTo(c.vwap, e.vwap), `${where} vwap ${c.vwap} vs ${e.vwap}`).toBe(true);
  });
}

async function expectAllLevelsMatch() {
  for (const interval of ['5m', '15m', '1h', '1d'] as const) {
    expectCandlesMatch(await sqlCandles(interval), ref.candles(trades, interval));
  }
  const byExchange = await db.sql<Array<SqlCandle & { exchange: string }>>`
    SELECT *, pv / volume AS vwap FROM candles_5m_by_exchange ORDER BY bucket, pair, exchange`;
  expectCandlesMatch(byExchange, ref.candles(trades, '5m', true));
}

beforeAll(async () => {
  db = await openTestDatabase();
  trades = generateTrades({ seed: 42, start, hours: HOURS, listings });
  // All at once: the writer must split this into statements the embedded database survives.
  const result = await insertTrades(db.sql, trades);
  expect(result.inserted).toBe(trades.length);
  await insertFxRates(db.sql, fx);
  await refreshAggregates(db.sql);
});

afterAll(async () => {
  await db?.close();
});

describe('candles', () => {
  it('match an independent computation at 5m, 15m, 1h and 1d, per pair and per venue', async () => {
    expect(trades.some((t) => t.time.getTime() % 86_400_000 === 0)).toBe(true); // day edges present
    await expectAllLevelsMatch();
  });

  it('store a repeated trade once', async () => {
    const again = await insertTrades(db.sql, trades.slice(0, 500));
    expect(again.inserted).toBe(0);
    const [row] = await db.sql`SELECT count(*)::int AS count FROM trades`;
    expect(row!.count).toBe(trades.length);
  });

  it('take in late trades once the touched range is refreshed', async () => {
    const late: TradeRow[] = [
      // on the very first edge of the data, and in the middle of an already refreshed hour
      { time: new Date(start.getTime() + 7), exchange: 'valr', pair: 'BTCZAR', tradeId: 'late-1', price: '1700000.50', amount: '0.25', side: 'buy' },
      { time: new Date(start.getTime() + 5 * 3_600_000 + 123), exchange: 'quidax', pair: 'BTCNGN', tradeId: 'late-2', price: '142000000', amount: '1.5', side: 'sell' },
    ];
    const result = await insertTrades(db.sql, late);
    expect(result.inserted).toBe(2);
    trades = [...trades, ...late];
    await refreshAggregates(db.sql);
    await expectAllLevelsMatch();
  });

  it('show trades above the refreshed range before any refresh (real-time aggregation)', async () => {
    // a new UTC day after all data: above every aggregate's watermark, so visible at all levels
    const nextDay = new Date(start.getTime() + 3 * 86_400_000 + 60_000);
    const fresh: TradeRow = { time: nextDay, exchange: 'luno', pair: 'ETHNGN', tradeId: 'rt-1', price: '5000000', amount: '2', side: 'buy' };
    await insertTrades(db.sql, [fresh]);
    trades = [...trades, fresh];
    for (const interval of ['5m', '15m', '1h', '1d']) {
      const rows = await db.sql`SELECT vwap FROM candles WHERE interval = ${interval} AND pair = 'ETHNGN' AND bucket <= ${nextDay} ORDER BY bucket DESC LIMIT 1`;
      expect(rows.map((r) => Number(r.vwap)), interval).toEqual([5000000]);
    }
    await expectAllLevelsMatch();
  });
});

describe('synthetic price and premium', () => {
  it('is VWAP(BASE/USDT) x USD/QUOTE at the bucket’s hour, USDT at 1 USD, for every level', async () => {
    for (const interval of ['5m', '15m', '1h', '1d'] as const) {
      const all = ref.candles(trades, interval);
      const rows = (
        await Promise.all(
          ['BTCNGN', 'ETHNGN', 'USDTNGN', 'BTCZAR'].map((pair) =>
            db.sql`SELECT bucket, pair, synthetic_price, premium, premium_pct
                   FROM candles_with_synthetic(${interval}, ${pair}, '2026-01-01', '2027-01-01')`,
          ),
        )
      ).flat().sort((a, b) => a.bucket - b.bucket || a.pair.localeCompare(b.pair));
      const expected = all.filter((c) => !c.pair.endsWith('USDT'));
      expect(rows.length).toBe(expected.length);
      let checked = 0;
      rows.forEach((r, i) => {
        const c = expected[i]!;
        const synthetic = ref.synthetic(all, fx, c);
        expect(ref.closeTo(r.synthetic_price, synthetic), `${c.pair} ${interval} ${r.bucket.toISOString()}`).toBe(true);
        if (synthetic !== null) {
          checked++;
          // a difference of two close numbers: compare on the scale of the price, not of the premium
          expect(Math.abs(Number(r.premium) - (c.vwap - synthetic))).toBeLessThan(1e-9 * c.vwap);
          expect(Math.abs(Number(r.premium_pct) - ((c.vwap - synthetic) / synthetic) * 100)).toBeLessThan(1e-7);
        }
      });
      expect(checked).toBeGreaterThan(0);
    }
  });

  it('premium_series groups the 5-minute premiums of each quarter hour and each hour', async () => {
    const all = ref.candles(trades, '5m');
    const points = all
      .filter((c) => c.pair === 'BTCNGN')
      .map((c) => ({ c, s: ref.synthetic(all, fx, c) }))
      .filter((p): p is { c: ref.RefCandle; s: number } => p.s !== null);
    for (const interval of ['15m', '1h'] as const) {
      const width = ref.WIDTH[interval];
      const byBucket = new Map<number, number[]>();
      for (const { c, s } of points) {
        const b = Math.floor(c.bucket / width) * width;
        byBucket.set(b, [...(byBucket.get(b) ?? []), ((c.vwap - s) / s) * 100]);
      }
      const rows = await db.sql`
        SELECT * FROM premium_series('BTCNGN', ${interval}, ${start}, ${new Date(start.getTime() + 86_400_000 * 3)})`;
      expect(rows.map((r) => r.bucket.getTime()), interval).toEqual([...byBucket.keys()].sort((a, b) => a - b));
      for (const r of rows) {
        const pcts = byBucket.get(r.bucket.getTime())!;
        expect(Number(r.data_points)).toBe(pcts.length);
        expect(Math.abs(Number(r.max_premium_pct) - Math.max(...pcts))).toBeLessThan(1e-7);
        expect(Math.abs(Number(r.min_premium_pct) - Math.min(...pcts))).toBeLessThan(1e-7);
        expect(Math.abs(Number(r.avg_premium_pct) - pcts.reduce((a, b) => a + b, 0) / pcts.length)).toBeLessThan(1e-7);
      }
    }
  });
});

describe('pages and hourly observations', () => {
  it('are never JIT-compiled, by the functions themselves and on the app\'s connections', async () => {
    // A server with LLVM compiles any plan whose estimated cost passes jit_above_cost, and the
    // pages' enable_nestloop = off inflates every estimate: a 42-row page took 1.2 s, all of it JIT.
    const fns = await db.sql<{ proname: string; proconfig: string[] | null }[]>`
      SELECT proname, proconfig FROM pg_proc WHERE proname IN ('candle_page', 'candles_with_synthetic') ORDER BY proname`;
    expect(fns.map((f) => f.proname)).toEqual(['candle_page', 'candles_with_synthetic']);
    for (const f of fns) expect(f.proconfig, f.proname).toContain('jit=off');
    // a server's JIT is off on our connections; the embedded build has none (and takes no startup parameters)
    const [conn] = await db.sql<{ available: boolean; jit: string }[]>`SELECT pg_jit_available() AS available, current_setting('jit') AS jit`;
    if (process.env.TEST_DATABASE_URL) expect(conn!.jit).toBe('off');
    else expect(conn!.available).toBe(false);
  });

  it('candle_page: each candle with its synthetic price and how its venues spread, as computed independently', async () => {
    for (const interval of ['5m', '15m', '1h'] as const) {
      const all = ref.candles(trades, interval);
      const byVenue = ref.candles(trades.filter((t) => t.pair === 'BTCZAR'), interval, true);
      const rows = (
        await db.sql<{ t: string; pv: string; volume: string; usd_pv: string | null; usd_volume: string | null; units_per_usd: string | null; venues: number; venue_min: number; venue_max: number; venue_mean: number }[]>`
          SELECT * FROM candle_page(${interval}, 'BTCZAR', '2026-01-01', '2027-01-01', 100000)`
      ).map((r) => ({ ...r, vwap: Number(r.pv) / Number(r.volume), synthetic: r.units_per_usd === null || r.usd_pv === null ? null : (Number(r.usd_pv) / Number(r.usd_volume)) * Number(r.units_per_usd) }));
      const expected = all.filter((c) => c.pair === 'BTCZAR');
      expect(rows.map((r) => r.t)).toEqual(expected.map((c) => new Date(c.bucket).toISOString().replace('.000Z', '+00:00')));
      rows.forEach((r, i) => {
        const c = expected[i]!;
        const venues = byVenue.filter((v) => v.bucket === c.bucket).map((v) => v.vwap);
        expect(ref.closeTo(r.vwap, c.vwap, 1e-12), r.t).toBe(true);
        expect(ref.closeTo(r.synthetic, ref.synthetic(all, fx, c), 1e-12), r.t).toBe(true);
        expect(r.venues, r.t).toBe(venues.length);
        expect(ref.closeTo(r.venue_min, Math.min(...venues), 1e-12) && ref.closeTo(r.venue_max, Math.max(...venues), 1e-12), r.t).toBe(true);
        expect(ref.closeTo(r.venue_mean, venues.reduce((a, b) => a + b, 0) / venues.length, 1e-12), r.t).toBe(true);
      });
    }
  });

  it('candle_page and candles_with_synthetic read at most `limit` candles from `from`: pages put together are the whole', async () => {
    for (const interval of ['5m', '15m', '1h', '1d'] as const) {
      type Row = { t: string; usd_pv: string | null; usd_volume: string | null; units_per_usd: string | null; venues: number };
      const whole = await db.sql<Row[]>`
        SELECT * FROM candle_page(${interval}, 'BTCZAR', '2026-01-01', '2027-01-01', 100000)`;
      expect(whole.length, interval).toBeGreaterThan(2);
      const size = Math.max(2, Math.floor(whole.length / 5) + 1); // the last page is short
      const pages: Row[] = [];
      let from = new Date('2026-01-01T00:00:00Z');
      for (;;) {
        const page = await db.sql<Row[]>`SELECT * FROM candle_page(${interval}, 'BTCZAR', ${from}, '2027-01-01', ${size})`;
        expect(page.length).toBeLessThanOrEqual(size);
        pages.push(...page);
        if (page.length < size) break;
        from = new Date(new Date(page[page.length - 1]!.t).getTime() + 1);
      }
      expect(pages, interval).toEqual([...whole]);
      // the other shape, cut at the same place
      const cut = await db.sql<{ bucket: Date; synthetic_price: string | null }[]>`
        SELECT bucket, synthetic_price FROM candles_with_synthetic(${interval}, 'BTCZAR', '2026-01-01', '2027-01-01', ${size})`;
      expect(cut.map((r) => r.bucket.toISOString().replace('.000Z', '+00:00'))).toEqual(whole.slice(0, size).map((r) => r.t));
      cut.forEach((r, i) => {
        const w = whole[i]!;
        const synthetic = w.units_per_usd === null || w.usd_pv === null ? null : (Number(w.usd_pv) / Number(w.usd_volume)) * Number(w.units_per_usd);
        expect(ref.closeTo(r.synthetic_price, synthetic, 1e-12), w.t).toBe(true);
      });
    }
  });

  it('candles_until is the bucket `limit` candles after `from` (else `to`), however far the traded buckets are from `from`', async () => {
    const to = new Date('2027-01-01T00:00:00Z');
    const widthMs = { '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
    // it counts a window of limit + 1 buckets first: both kinds of window are asked about below
    const windows = { everyBucketTraded: 0, someUntraded: 0 };
    for (const interval of ['5m', '15m', '1h', '1d'] as const) {
      const buckets = (await db.sql<{ t: string }[]>`SELECT t FROM candle_page(${interval}, 'BTCZAR', '2026-01-01', ${to}, NULL)`).map((r) => new Date(r.t).getTime());
      const n = buckets.length;
      // two months before the first trade, at the first candle, between two, and past the last
      const froms = [Date.parse('2026-01-01T00:00:00Z'), buckets[0]!, buckets[Math.floor(n / 2)]! + 1, buckets[n - 1]! + 1];
      for (const from of froms) {
        const after = buckets.filter((b) => b >= from);
        const limits = [...Array.from({ length: 13 }, (_, i) => i), 40, after.length - 1, after.length, after.length + 3];
        for (const limit of limits.filter((l) => l >= 0)) {
          const inWindow = after.filter((b) => b < from + (limit + 1) * widthMs[interval]).length;
          windows[inWindow === limit + 1 ? 'everyBucketTraded' : 'someUntraded']++;
          const [row] = await db.sql<{ until: Date }[]>`SELECT candles_until(${interval}, 'BTCZAR', ${new Date(from)}, ${to}, ${limit}) AS until`;
          expect(row!.until.getTime(), `${interval} from ${new Date(from).toISOString()} limit ${limit}`).toBe(after[limit] ?? to.getTime());
        }
      }
      // an open end, and a limit past any page: the whole range is read at once
      const [open] = await db.sql<{ until: string }[]>`SELECT candles_until(${interval}, 'BTCZAR', '2026-01-01', 'infinity', ${n})::text AS until`;
      expect(open!.until).toBe('infinity');
      const [huge] = await db.sql<{ until: Date }[]>`SELECT candles_until(${interval}, 'BTCZAR', '2026-01-01', ${to}, 2147483646) AS until`;
      expect(huge!.until.getTime()).toBe(to.getTime());
    }
    expect(windows.everyBucketTraded).toBeGreaterThan(10);
    expect(windows.someUntraded).toBeGreaterThan(10);
  });

  it('candles_until finds the same day where the session zone changes its clocks inside the window (a day of 25 hours)', async () => {
    // a database of its own: a day candle on each of five days around New York's autumn change
    const own = await openTestDatabase();
    try {
      await insertTrades(own.sql, generateTrades({ seed: 3, start: new Date('2026-10-30T00:00:00Z'), hours: 5 * 24, listings: { BTCZAR: ['luno'] }, tradesPerHour: 2 }));
      await refreshAggregates(own.sql);
      const from = new Date('2026-10-30T23:30:00Z');
      const until = async (zone: string) =>
        own.sql.begin(async (tx) => {
          await tx`SELECT set_config('TimeZone', ${zone}, true)`;
          // three days from half an hour before a UTC midnight, added in the zone's days
          const [w] = await tx<{ end: Date }[]>`SELECT ${from}::timestamptz + INTERVAL '1 day' * 3 AS end`;
          const [r] = await tx<{ until: Date }[]>`SELECT candles_until('1d', 'BTCZAR', ${from}, '2026-12-01', 2) AS until`;
          return { windowEnd: w!.end.toISOString(), until: r!.until.toISOString() };
        });
      // in New York the window is 73 hours and holds four UTC midnights, one more than a full window's three
      expect(await until('America/New_York')).toEqual({ windowEnd: '2026-11-03T00:30:00.000Z', until: '2026-11-02T00:00:00.000Z' });
      expect(await until('UTC')).toEqual({ windowEnd: '2026-11-02T23:30:00.000Z', until: '2026-11-02T00:00:00.000Z' });
    } finally {
      await own.close();
    }
  });

  it('premium_series builds each day from its hourly observations', async () => {
    const all = ref.candles(trades, '1h');
    const byDay = new Map<number, number[]>();
    for (const c of all.filter((x) => x.pair === 'BTCNGN')) {
      const s = ref.synthetic(all, fx, c);
      if (s === null) continue;
      const d = Math.floor(c.bucket / 86_400_000) * 86_400_000;
      byDay.set(d, [...(byDay.get(d) ?? []), ((c.vwap - s) / s) * 100]);
    }
    const rows = await db.sql`SELECT * FROM premium_series('BTCNGN', '1d', ${start}, ${new Date(start.getTime() + 86_400_000 * 3)})`;
    expect(rows.map((r) => r.bucket.getTime())).toEqual([...byDay.keys()].sort((a, b) => a - b));
    for (const r of rows) {
      const pcts = byDay.get(r.bucket.getTime())!;
      expect(Number(r.data_points)).toBe(pcts.length);
      expect(Math.abs(Number(r.avg_premium_pct) - pcts.reduce((a, b) => a + b, 0) / pcts.length)).toBeLessThan(1e-7);
    }
  });

  it('materialises the FX rate in force at each hour, and follows an observation that arrives late', async () => {
    const check = async (observations: typeof fx) => {
      const rows = await db.sql<{ currency: string; hour: Date; units_per_usd: string }[]>`SELECT currency, hour, units_per_usd FROM fx_in_force ORDER BY hour, currency`;
      expect(rows.length).toBeGreaterThan(5 * HOURS);
      for (const r of rows) expect(ref.closeTo(r.units_per_usd, ref.fxAt(observations, r.currency, r.hour.getTime())), `${r.currency} ${r.hour.toISOString()}`).toBe(true);
    };
    await check(fx);
    // a third source's observation from the first day: the median of every later hour changes
    // (GHS: no pair in this market trades in it, so the other tests' expectations stand)
    const late = { time: new Date(start.getTime() + 5 * 3_600_000 + 60_000), currency: 'GHS', unitsPerUsd: 19.5, source: 'late_source', sourceUpdatedAt: new Date(start.getTime() + 5 * 3_600_000) };
    await insertFxRates(db.sql, [late]);
    await check([...fx, late]);
  });
});

describe('a session in another time zone', () => {
  it('gets the same candles, synthetic prices and premiums as a UTC session, and writes FX hours on UTC hours', async () => {
    // A data engineer's SQL client may set its own TimeZone (JDBC tools set the machine's): at
    // +05:30 a local hour starts at hh:30 UTC. Every answer must be the same instants and values.
    const to = new Date(start.getTime() + 3 * 86_400_000);
    const read = (sql: typeof db.sql) =>
      Promise.all([
        sql`SELECT * FROM candle_page('5m', 'BTCZAR', ${start}, ${to}, 100000)`,
        sql`SELECT * FROM candle_page('1h', 'BTCNGN', ${start}, ${to}, 100000)`,
        sql`SELECT bucket, synthetic_price, premium, units_per_usd FROM candles_with_synthetic('5m', 'BTCNGN', ${start}, ${to})`,
        sql`SELECT * FROM premium_series('BTCNGN', '1d', ${start}, ${to})`,
      ]);
    const utc = await read(db.sql);
    expect(utc[0].filter((r) => r.units_per_usd !== null).length).toBeGreaterThan(100);
    const refreshed = await db.sql.begin(async (tx) => {
      await tx`SET LOCAL TimeZone = 'Asia/Kolkata'`;
      const [zone] = await tx<{ tz: string }[]>`SELECT current_setting('TimeZone') AS tz`;
      expect(zone!.tz).toBe('Asia/Kolkata');
      expect(await read(tx as unknown as typeof db.sql)).toEqual(utc);
      const [n] = await tx<{ n: number }[]>`SELECT fx_in_force_refresh(${start}, ${new Date(start.getTime() + 6 * 3_600_000)}) AS n`;
      return n!.n;
    });
    expect(refreshed).toBeGreaterThan(0);
    const hours = await db.sql<{ hour: Date }[]>`SELECT hour FROM fx_in_force`;
    expect(hours.filter((h) => h.hour.getTime() % 3_600_000 !== 0).map((h) => h.hour.toISOString())).toEqual([]);
  });
});

describe('end of day', () => {
  it('is the UTC day candle, and nothing for a day without trades', async () => {
    const days = ref.candles(trades, '1d');
    for (const d of days) {
      const date = new Date(d.bucket).toISOString().slice(0, 10);
      const [row] = await db.sql`SELECT * FROM eod(${d.pair}, ${date}::date)`;
      expect(row, `${d.pair} ${date}`).toBeDefined();
      expect(Number(row!.open)).toBe(d.open);
      expect(Number(row!.close)).toBe(d.close);
      expect(Number(row!.high)).toBe(d.high);
      expect(Number(row!.low)).toBe(d.low);
      expect(ref.closeTo(row!.vwap, d.vwap)).toBe(true);
      expect(ref.closeTo(row!.total_volume, d.volume)).toBe(true);
    }
    expect(await db.sql`SELECT * FROM eod('BTCNGN', '2026-02-27')`).toHaveLength(0);
  });
});

describe('indices', () => {
  const at = new Date(start.getTime() + 30 * 3_600_000 + 17_000);

  function latestVwap(pair: string, all: ref.RefCandle[]): number | null {
    const c = all.filter((x) => x.pair === pair && x.bucket <= at.getTime() && x.bucket > at.getTime() - 86_400_000).at(-1);
    return c ? c.vwap : null;
  }

  it('MXNCI is 0.60 BTCNGN + 0.25 ETHNGN + 0.15 USDTNGN at the newest 5-minute VWAPs', async () => {
    const all = ref.candles(trades, '5m');
    const expected = 0.6 * latestVwap('BTCNGN', all)! + 0.25 * latestVwap('ETHNGN', all)! + 0.15 * latestVwap('USDTNGN', all)!;
    const [row] = await db.sql`SELECT * FROM index_mxnci(${at})`;
    expect(ref.closeTo(row!.value, expected)).toBe(true);
    expect(Object.keys(row!.components).sort()).toEqual(['BTCNGN', 'ETHNGN', 'USDTNGN']);
    expect(Number(row!.components.BTCNGN.weight)).toBe(0.6);
  });

  it('ACLI is the 24-hour USD volume of the public pairs', async () => {
    const all = ref.candles(trades, '5m').filter((c) => !c.pair.endsWith('USDT') && c.bucket >= at.getTime() - 86_400_000 && c.bucket < at.getTime());
    const usd = new Map<string, number>();
    for (const c of all) {
      const rate = ref.fxAt(fx, ref.splitPair(c.pair).quote, at.getTime())!;
      usd.set(c.pair, (usd.get(c.pair) ?? 0) + c.pv / rate);
    }
    const total = [...usd.values()].reduce((a, b) => a + b, 0);
    const [row] = await db.sql`SELECT * FROM index_acli(${at})`;
    expect(ref.closeTo(row!.value, total)).toBe(true);
    for (const [pair, v] of usd) expect(ref.closeTo(row!.components[pair].weight, v / total, 1e-8)).toBe(true);
  });

  it('ACLI is unknown (null) where its 24 hours reach back before the first data: a part of a day is not a day', async () => {
    const [early] = await db.sql`SELECT * FROM index_acli(${new Date(start.getTime() + 23 * 3_600_000)})`;
    expect(early!.value).toBeNull();
    const [whole] = await db.sql`SELECT * FROM index_acli(${new Date(start.getTime() + 24 * 3_600_000)})`;
    expect(Number(whole!.value)).toBeGreaterThan(0);
  });
});
