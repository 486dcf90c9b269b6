// The live snapshot: outliers left out with hysteresis (no flapping), and an API-only process
// picking up the pipeline's new cycles by itself.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { LiveSnapshot } from '../../lib/live/snapshot.js';
import { insertTrades } from '../../pipeline/store.js';
import { failingQueries, openTestDatabase, testLog } from '../support/db.js';

let db: Database;
let n = 0;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

async function trade(exchange: string, price: number, at = Date.now() - 1_000) {
  await insertTrades(db.sql, [{ time: new Date(at), exchange, pair: 'BTCZAR', tradeId: `t${++n}`, price, amount: 1, side: 'buy' }]);
  await refreshAggregates(db.sql);
}

describe('outliers', () => {
  it('leave a deviating venue out, and let it back only below half the limit', async () => {
    const snapshot = new LiveSnapshot(db.sql, testLog);
    // each venue's rate is the VWAP of its newest 5-minute candle: one big trade sets it
    await trade('luno', 1_000_000);
    await trade('valr', 1_001_000);
    await trade('binance', 1_100_000); // 10% off
    await snapshot.refresh();
    let e = snapshot.get('BTCZAR')!;
    expect(e.excluded.map((s) => s.exchange)).toEqual(['binance']);
    expect(e.used.map((s) => s.exchange).sort()).toEqual(['luno', 'valr']);

    // back to 4% off: under the limit, but not under half of it -> still out
    const insertBig = async (exchange: string, price: number) => {
      await insertTrades(db.sql, [{ time: new Date(Date.now() - 500), exchange, pair: 'BTCZAR', tradeId: `t${++n}`, price, amount: 1000, side: 'buy' }]);
      await refreshAggregates(db.sql);
    };
    await insertBig('binance', 1_040_000);
    await snapshot.refresh();
    e = snapshot.get('BTCZAR')!;
    expect(e.excluded.map((s) => s.exchange)).toEqual(['binance']);

    await insertBig('binance', 1_010_000); // now ~1% off: back in
    await snapshot.refresh();
    e = snapshot.get('BTCZAR')!;
    expect(e.excluded).toEqual([]);
    expect(e.used).toHaveLength(3);
  });
});

describe('a venue 100x off (a unit error) among three', () => {
  it('is left out of the live rate', async () => {
    await insertTrades(db.sql, [
      { time: new Date(Date.now() - 800), exchange: 'luno', pair: 'ETHZAR', tradeId: `t${++n}`, price: 60_000, amount: 1, side: 'buy' },
      { time: new Date(Date.now() - 700), exchange: 'valr', pair: 'ETHZAR', tradeId: `t${++n}`, price: 60_050, amount: 1, side: 'buy' },
      { time: new Date(Date.now() - 600), exchange: 'binance', pair: 'ETHZAR', tradeId: `t${++n}`, price: 6_000_000, amount: 0.01, side: 'buy' },
    ]);
    await refreshAggregates(db.sql);
    const snapshot = new LiveSnapshot(db.sql, testLog);
    await snapshot.refresh();
    const e = snapshot.get('ETHZAR')!;
    expect(e.excluded.map((s) => s.exchange)).toEqual(['binance']);
    expect(e.rate).toBeCloseTo(60_025, 6);
  });
});

describe('an API-only process', () => {
  it('rebuilds its snapshot when the pipeline records a new cycle', async () => {
    await db.sql`INSERT INTO ingest_cycles (kind, market, started_at, finished_at) VALUES ('trades', 'real', now(), now())`; // before this process started
    const snapshot = new LiveSnapshot(db.sql, testLog);
    await snapshot.refresh();
    const before = snapshot.get('BTCZAR')!.rate;
    const caughtUp = once(snapshot.events, 'refreshed'); // its first look rebuilds for the newest cycle, the one already there
    snapshot.follow(50);
    await caughtUp;
    await insertTrades(db.sql, [{ time: new Date(), exchange: 'luno', pair: 'BTCZAR', tradeId: `t${++n}`, price: 2_000_000, amount: 1000, side: 'buy' }]);
    await refreshAggregates(db.sql);
    await db.sql`INSERT INTO ingest_cycles (kind, market, started_at, finished_at) VALUES ('trades', 'real', now(), now())`;
    await expect.poll(() => snapshot.get('BTCZAR')!.rate, { timeout: 3_000 }).not.toBe(before);
    snapshot.stop();
  });

  it('rebuilds again after a rebuild for a new cycle failed, without waiting for another cycle', async () => {
    // the real connection, except that live_sources reads fail when told to, as a statement timeout would
    const flaky = failingQueries(db.sql, 'live_sources', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    const cycle = () => db.sql`INSERT INTO ingest_cycles (kind, market, started_at, finished_at) VALUES ('trades', 'real', now(), now())`;
    const xrp = (price: number, amount: number) =>
      insertTrades(db.sql, [{ time: new Date(Date.now() - 500), exchange: 'luno', pair: 'XRPKES', tradeId: `t${++n}`, price, amount, side: 'buy' }]);

    await xrp(1_000, 1);
    await refreshAggregates(db.sql);
    await cycle();
    const snapshot = new LiveSnapshot(flaky.sql, testLog);
    snapshot.follow(50);
    await expect.poll(() => snapshot.get('XRPKES')?.rate, { timeout: 3_000 }).toBe(1_000);

    // the pipeline's next cycle, with a new price; this process's first rebuild for it fails
    await xrp(1_200, 1_000);
    await refreshAggregates(db.sql);
    flaky.fail(1);
    await cycle();
    await expect.poll(() => flaky.pending, { timeout: 3_000 }).toBe(0);
    await expect.poll(() => snapshot.get('XRPKES')!.rate, { timeout: 3_000 }).toBeGreaterThan(1_100); // no new cycle needed
    snapshot.stop();
  });
});
