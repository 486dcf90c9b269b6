// What made a live rate: with include_sources, every venue that entered carries its trade count and
// volume (its newest 5-minute candle), and every venue listed for the pair that did not enter is
// named with its reason: outlier (far from the others), stale (no trade in the last hour while
// others traded), no_trades (nothing in the live window). The rate is their exact combination,
// rounded half-even to 12 significant digits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTrades } from '../../pipeline/store.js';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
const MIN = 60_000;

beforeAll(async () => {
  t = await startTestApi({ hours: 2 });
  const now = Date.now();
  // BTCZAR has luno, valr and binance trading near each other (test/support/api.ts); add:
  // - an outlier venue trading 40 % above them, now
  // - a venue whose last trade is three hours old
  // - a venue listed for the pair that never traded
  const level = Number((await t.db.sql<{ p: string }[]>`SELECT vwap(sum(pv), sum(volume))::text AS p FROM candles_5m WHERE pair = 'BTCZAR'`)[0]!.p);
  await insertTrades(t.db.sql, [
    { time: new Date(now - 2 * MIN), exchange: 'outlierx', pair: 'BTCZAR', tradeId: 'o1', price: (level * 1.4).toFixed(2), amount: '0.25', side: 'buy' },
    { time: new Date(now - 3 * 60 * MIN), exchange: 'sleepy', pair: 'BTCZAR', tradeId: 's1', price: level.toFixed(2), amount: '0.5', side: 'buy' },
  ]);
  for (const venue of ['outlierx', 'sleepy', 'neverx']) await t.db.sql`INSERT INTO venue_markets (exchange, pair, symbol) VALUES (${venue}, 'BTCZAR', 'BTC/ZAR')`;
  const { refreshAggregates } = await import('../../lib/db/refresh.js');
  await refreshAggregates(t.db.sql);
  await t.api.deps.snapshot.refresh();
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/rates/live?include_sources=true', () => {
  it('names each venue left out with its reason, and each venue that entered with its trades and volume', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCZAR&include_sources=true', t.keys.builder);
    expect(res.status).toBe(200);
    const rate = res.body.data.BTCZAR;
    expect(rate.pricing.exchange.excluded).toEqual([
      { exchange: 'neverx', reason: 'no_trades' },
      { exchange: 'outlierx', reason: 'outlier' },
      { exchange: 'sleepy', reason: 'stale' },
    ]);
    expect(rate.flags).toContain('outlier_excluded');
    const sources = rate.pricing.exchange.sources as { exchange: string; trades: number; volume: string }[];
    expect(sources.map((s) => s.exchange).sort()).toEqual(['binance', 'luno', 'valr']);
    // each venue's newest candle: its trades and exact volume as stored
    for (const s of sources) {
      const [c] = await t.db.sql<{ trades: number; volume: string }[]>`
        SELECT trades::int AS trades, volume::text AS volume FROM candles_5m_by_exchange
        WHERE pair = 'BTCZAR' AND exchange = ${s.exchange} ORDER BY bucket DESC LIMIT 1`;
      expect(s.trades, s.exchange).toBe(c!.trades);
      expect(Number(s.volume), s.exchange).toBe(Number(c!.volume));
      expect(s.volume, s.exchange).toMatch(/^\d+(\.\d+)?$/);
    }
  });

  it('is the exact combination of the venues that entered, rounded half-even to 12 significant digits', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCZAR', t.keys.builder);
    const newest = await t.db.sql<{ pv: string; volume: string }[]>`
      SELECT DISTINCT ON (exchange) pv::text, volume::text FROM candles_5m_by_exchange
      WHERE pair = 'BTCZAR' AND exchange IN ('luno', 'valr', 'binance') ORDER BY exchange, bucket DESC`;
    // independently: scaled integers, long division to 12 significant digits, ties to even
    const scale = (s: string, places: number) => BigInt(s.split('.')[0]! + (s.split('.')[1] ?? '').padEnd(places, '0').slice(0, places));
    const places = Math.max(...newest.flatMap((r) => [r.pv, r.volume].map((v) => (v.split('.')[1] ?? '').length)));
    const num = newest.reduce((s, r) => s + scale(r.pv, places), 0n);
    const den = newest.reduce((s, r) => s + scale(r.volume, places), 0n);
    const intDigits = (num / den).toString().length;
    const scaled = num * 10n ** BigInt(12 - intDigits);
    let q = scaled / den;
    const rem = scaled % den;
    if (2n * rem > den || (2n * rem === den && q % 2n === 1n)) q += 1n;
    expect(res.body.data.BTCZAR.rate).toBe(Number(`${q.toString().slice(0, intDigits)}.${q.toString().slice(intDigits)}`));
  });

  it('says the methodology version on every tier', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCZAR,BTCNGN', t.keys.free);
    for (const r of Object.values(res.body.data) as { methodology_version: string }[]) expect(r.methodology_version).toBe('1.0.0');
  });
});
