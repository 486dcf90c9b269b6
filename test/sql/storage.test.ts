// Storage of raw trades: compression (the policy, run in-process as the pipeline runs it on the
// embedded database) and retention (TRADES_RETENTION_DAYS). Candles must stay exact through both:
// built from compressed chunks, corrected by late trades that land in compressed chunks (each
// stored once), and never lost when raw trades are dropped; an aggregate rebuild that would lose
// them is refused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { INTERVAL_NAMES } from '../../lib/intervals.js';
import { createPool, openDatabase, type Database } from '../../lib/db/connect.js';
import { migrate, SQL_DIR } from '../../lib/db/migrate.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { configureRetention, runStorageJobs } from '../../pipeline/maintenance.js';
import { insertTrades, type TradeRow } from '../../pipeline/store.js';
import { openTestDatabase, testLog } from '../support/db.js';
import { generateTrades } from '../support/market.js';
import * as ref from '../support/reference.js';

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const start = new Date(today - 6 * DAY);
const listings = { BTCNGN: ['luno', 'quidax'], BTCUSDT: ['binance'] };
let db: Database;
let trades: TradeRow[];

type CandleRow = { interval: string; bucket: Date; pair: string; open: string; high: string; low: string; close: string; volume: string; vwap: string; trades: string };
const readCandles = () =>
  db.sql<CandleRow[]>`SELECT interval, bucket, pair, open, high, low, close, volume, vwap, trades FROM candles WHERE bucket < ${new Date(today)} ORDER BY interval, bucket, pair`;

async function expectCandlesMatch(all: readonly TradeRow[]) {
  const rows = await readCandles();
  const expected = [...INTERVAL_NAMES].sort().flatMap((i) => ref.candles(all.filter((t) => t.time.getTime() < today), i).map((c) => ({ ...c, interval: i })));
  expect(rows.length).toBe(expected.length);
  rows.forEach((r, i) => {
    const c = expected[i]!;
    expect(`${r.interval} ${r.bucket.getTime()} ${r.pair}`).toBe(`${c.interval} ${c.bucket} ${c.pair}`);
    expect(Number(r.trades)).toBe(c.trades);
    expect(ref.closeTo(r.vwap, c.vwap) && ref.closeTo(r.volume, c.volume)).toBe(true);
    expect([Number(r.open), Number(r.high), Number(r.low), Number(r.close)]).toEqual([c.open, c.high, c.low, c.close]);
  });
}

const chunks = () =>
  db.sql<{ range_start: Date; is_compressed: boolean }[]>`
    SELECT range_start, is_compressed FROM timescaledb_information.chunks WHERE hypertable_name = 'trades' ORDER BY range_start`;

beforeAll(async () => {
  db = await openTestDatabase();
  trades = generateTrades({ seed: 23, start, hours: 5 * 24, listings, tradesPerHour: 30 });
  await insertTrades(db.sql, trades);
  await refreshAggregates(db.sql);
});
afterAll(async () => {
  await db?.close();
});

describe('compression', () => {
  it('compresses chunks older than two days, candles unchanged and exact', async () => {
    const before = await readCandles();
    const ran = await runStorageJobs(db.sql);
    expect(ran.map((r) => r.job)).toEqual(['policy_compression', 'vacuum_analyze', 'checkpoint']);
    const all = await chunks();
    for (const c of all) expect(c.is_compressed, c.range_start.toISOString()).toBe(c.range_start.getTime() + DAY <= Date.now() - 2 * DAY);
    expect(all.filter((c) => c.is_compressed).length).toBeGreaterThanOrEqual(3);
    expect(await readCandles()).toEqual(before);
    await expectCandlesMatch(trades);
  });

  it('takes late trades into compressed chunks, once each, and the candles follow', async () => {
    const late: TradeRow[] = [
      { time: new Date(start.getTime() + 3_600_000 + 17), exchange: 'quidax', pair: 'BTCNGN', tradeId: 'late-1', price: '150000000', amount: '2.5', side: 'buy' },
      { time: new Date(start.getTime() + DAY + 5), exchange: 'binance', pair: 'BTCUSDT', tradeId: 'late-2', price: '95000', amount: '1', side: 'sell' },
    ];
    const repeat = trades.slice(10, 15); // already stored, in a compressed chunk
    const stored = await insertTrades(db.sql, [...late, ...repeat]);
    expect(stored.inserted).toBe(2);
    trades = [...trades, ...late];
    await refreshAggregates(db.sql);
    await expectCandlesMatch(trades);
  });
});

describe('retention', () => {
  it('drops raw trades older than the setting and keeps every candle', async () => {
    const before = await readCandles();
    await configureRetention(db.sql, 4);
    const ran = await runStorageJobs(db.sql);
    expect(ran.map((r) => r.job)).toEqual(['policy_retention', 'policy_compression', 'vacuum_analyze', 'checkpoint']);
    const [oldest] = await db.sql<{ t: Date }[]>`SELECT min(time) AS t FROM trades`;
    expect(oldest!.t.getTime()).toBeGreaterThanOrEqual(today - 5 * DAY);
    // a refresh pass after the drop must not touch what the raw trades no longer back
    await refreshAggregates(db.sql);
    expect(await readCandles()).toEqual(before);
    await configureRetention(db.sql, null);
    expect(await db.sql`SELECT 1 FROM timescaledb_information.jobs WHERE proc_name = 'policy_retention'`).toHaveLength(0);
  });

  it('refuses to rebuild an aggregate from raw trades that are gone', async () => {
    const sqlDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-sql-'));
    try {
      fs.cpSync(SQL_DIR, sqlDir, { recursive: true });
      // an edit of substance (a comment is none): 5-minute candles carry their buy volume
      const file = path.join(sqlDir, 'aggregates', '20_candles_5m.sql');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('count(*)             AS trades,', "count(*)             AS trades,\n       sum(amount) FILTER (WHERE side = 'buy') AS buy_volume,"));
      const before = await readCandles();
      await db.sql.end(); // the embedded database admits one connection: migrate opens its own
      await expect(migrate(db.url, testLog, sqlDir)).rejects.toThrow(/would be lost/);
      const sql = createPool(db.url, 1);
      try {
        expect(await sql`SELECT interval, bucket, pair, open, high, low, close, volume, vwap, trades FROM candles WHERE bucket < ${new Date(today)} ORDER BY interval, bucket, pair`).toEqual(before);
        // and when the records of the files are gone: those aggregates still exist, with candles to lose
        await sql`DELETE FROM sql_objects WHERE file >= 'aggregates/20'`;
      } finally {
        await sql.end();
      }
      await expect(migrate(db.url, testLog, sqlDir)).rejects.toThrow(/would be lost/);
      const after = createPool(db.url, 1);
      try {
        expect(await after`SELECT interval, bucket, pair, open, high, low, close, volume, vwap, trades FROM candles WHERE bucket < ${new Date(today)} ORDER BY interval, bucket, pair`).toEqual(before);
      } finally {
        await after.end();
      }
    } finally {
      fs.rmSync(sqlDir, { recursive: true, force: true });
    }
  });
});

// The embedded database has no checkpointer: unless the storage jobs checkpoint, every write stays
// in pg_wal for good (30 real-volume days left 6.3 GB of it beside 1 GB of data).
describe.runIf(!process.env.TEST_DATABASE_URL)('the embedded database on disk', () => {
  it('keeps its write-ahead log from growing with every write, once the storage jobs have run', async () => {
    const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-wal-'));
    const config = loadConfig({ AFRATES_VAR_DIR: varDir });
    const disk = await openDatabase(config, testLog);
    const walMb = () => fs.readdirSync(path.join(config.dataDir, 'pg_wal')).filter((f) => /^[0-9A-F]{24}$/.test(f)).length * 16;
    try {
      const sizes: number[] = [];
      for (let round = 0; round < 3; round++) {
        const batch = generateTrades({ seed: 100 + round, start: new Date(today - (10 + round) * DAY), hours: 24, listings: { BTCNGN: ['luno', 'quidax'], BTCUSDT: ['binance'] }, tradesPerHour: 300 });
        await insertTrades(disk.sql, batch);
        await runStorageJobs(disk.sql);
        sizes.push(walMb());
      }
      // each round writes well over 64 MB of WAL; recycled segments take the next round's
      expect(sizes[0]).toBeGreaterThanOrEqual(64);
      expect(sizes[2]).toBeLessThanOrEqual(sizes[0]! + 32);
    } finally {
      await disk.close();
      fs.rmSync(varDir, { recursive: true, force: true });
    }
  }, 180_000);
});
