// The real collection cycle across bucket edges with sparse trades: every trade of a bucket arrives
// while the bucket is open, and the cycle that closes it brings none of its trades (a quiet spell
// over each edge), some buckets and hours have no trade at all, and the run crosses a UTC day.
// Nothing may be lost: every 5m, 1h and 1d candle must equal an independent computation from the
// trades served. (Refreshing only the range a cycle touched lost such buckets for good.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import type { TradeRow } from '../../pipeline/store.js';
import { venues } from '../../pipeline/venues/index.js';
import { openTestDatabase, testLog } from '../support/db.js';
import { rng } from '../support/market.js';
import * as ref from '../support/reference.js';

const MIN = 60_000;
const BUCKET = 5 * MIN;
const T0 = Date.UTC(2026, 10, 19, 22, 50); // ten minutes before a UTC midnight
const HOURS = 2.5;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-frontier-'));
const file = path.join(dir, 'sparse.jsonl');
let clock = T0 - MIN;
let sim: SimMarket;
let db: Database;
const trades: TradeRow[] = [];

/**
 * 1-3 trades in the first minute of most buckets; every seventh bucket and one whole hour silent;
 * every third bucket also trades half a second before its end, so the cycle that closes it brings
 * that trade: refreshes do happen, and move TimescaleDB's watermark past the buckets before.
 */
function writeSparseMarket() {
  const random = rng(17);
  const spec = [
    ['luno', 'BTCNGN', 143_000_000],
    ['quidax', 'BTCNGN', 143_300_000],
    ['binance', 'BTCUSDT', 90_000],
  ] as const;
  const lines: string[] = [];
  let id = 1;
  for (const [v, [venue, pair, level]] of spec.entries()) {
    for (let b = T0, i = 0; b < T0 + HOURS * 3_600_000; b += BUCKET, i++) {
      const silentHour = b >= T0 + 70 * MIN && b < T0 + 130 * MIN && venue !== 'binance';
      if (i % 7 === 3 || silentHour) continue;
      const n = 1 + Math.floor(random() * 3);
      for (let k = 0; k < n; k++) {
        // early in the bucket, one exactly on its edge now and then; distinct ms per venue
        const t = b + (k === 0 && i % 4 === 0 ? 0 : 1_000 + Math.floor(random() * 50_000)) + v;
        const price = Number((level * (1 + (random() - 0.5) * 0.01)).toFixed(2));
        const amount = Number((0.001 + random() * 0.3).toFixed(6));
        const side = random() < 0.5 ? 'buy' : 'sell';
        lines.push(JSON.stringify({ venue, pair, time: new Date(t).toISOString(), id: String(id), price, amount, side }));
        trades.push({ time: new Date(t), exchange: venue, pair, tradeId: String(id++), price, amount, side });
      }
      if (i % 3 === 1) {
        const t = b + BUCKET - 500 - v;
        const price = Number((level * (1 + (random() - 0.5) * 0.01)).toFixed(2));
        lines.push(JSON.stringify({ venue, pair, time: new Date(t).toISOString(), id: String(id), price, amount: 0.05, side: 'buy' }));
        trades.push({ time: new Date(t), exchange: venue, pair, tradeId: String(id++), price, amount: 0.05, side: 'buy' });
      }
    }
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

beforeAll(async () => {
  writeSparseMarket();
  sim = await startSimMarket({ replay: file, now: () => clock });
  db = await openTestDatabase();
});
afterAll(async () => {
  await sim?.stop();
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function expectCandlesMatch(upTo: number) {
  const seen = trades.filter((t) => t.time.getTime() <= upTo);
  for (const interval of ['5m', '15m', '1h', '1d'] as const) {
    const expected = ref.candles(seen, interval);
    const rows = await db.sql<{ bucket: Date; pair: string; open: string; high: string; low: string; close: string; volume: string; vwap: string; trades: string }[]>`
      SELECT bucket, pair, open, high, low, close, volume, vwap, trades FROM candles WHERE interval = ${interval} ORDER BY bucket, pair`;
    expect(rows.map((r) => `${r.bucket.toISOString()} ${r.pair}`), interval).toEqual(expected.map((c) => `${new Date(c.bucket).toISOString()} ${c.pair}`));
    rows.forEach((r, i) => {
      const c = expected[i]!;
      const where = `${interval} ${r.pair} ${r.bucket.toISOString()}`;
      expect(Number(r.trades), where).toBe(c.trades);
      expect(ref.closeTo(r.volume, c.volume), `${where} volume ${r.volume} vs ${c.volume}`).toBe(true);
      expect(ref.closeTo(r.vwap, c.vwap), `${where} vwap ${r.vwap} vs ${c.vwap}`).toBe(true);
      expect([Number(r.open), Number(r.high), Number(r.low), Number(r.close)], where).toEqual([c.open, c.high, c.low, c.close]);
    });
  }
  const byVenue = ref.candles(seen, '5m', true);
  const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM candles_5m_by_exchange`;
  expect(row!.n).toBe(byVenue.length);
}

describe('the collection cycle across bucket edges', () => {
  it('loses no bucket whose trades all arrived while it was open', async () => {
    const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, AFRATES_VAR_DIR: dir });
    const pipeline = new Pipeline({ config, log: testLog, sql: db.sql, venues, unpaced: true, now: () => clock, initialLookbackMs: 10 * MIN });
    // one cycle a minute, as CYCLE_SECONDS=60 runs it: a bucket's trades come in at +1 min, and the
    // cycles at +2 ... +5 min (the one that closes it) bring none of its trades
    for (; clock <= T0 + HOURS * 3_600_000 + 2 * MIN; clock += MIN) {
      const report = await pipeline.runTradeCycle();
      expect(report.errors).toEqual([]);
      // mid-run too: what a customer sees at any moment is complete, not only at the end
      if (clock === T0 + 72 * MIN || clock === T0 + 11 * MIN) await expectCandlesMatch(clock);
    }
    const last = clock - MIN;
    await expectCandlesMatch(last);
    // and it is materialised, not only served by real-time aggregation: the frontier is past it all
    const frontier = await db.sql<{ view_name: string; refreshed_to: Date }[]>`SELECT view_name, refreshed_to FROM aggregate_frontier ORDER BY view_name`;
    expect(frontier.find((f) => f.view_name === 'candles_5m')!.refreshed_to.getTime()).toBe(Math.floor(last / BUCKET) * BUCKET);
    await pipeline.stop();
  });
});
