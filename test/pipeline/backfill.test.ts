// Backfill: fetches a past range from the venues that keep history, idempotently, reports
// progress, and leaves the aggregates refreshed for the range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { backfill } from '../../pipeline/backfill.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { venues } from '../../pipeline/venues/index.js';
import { openTestDatabase, testLog } from '../support/db.js';

const clock = Date.UTC(2026, 10, 20, 12, 0, 0);
const now = () => clock;
let sim: SimMarket;
let db: Database;
let pipeline: Pipeline;

beforeAll(async () => {
  db = await openTestDatabase();
  sim = await startSimMarket({ seed: 9, now, historyStart: clock - 6 * 3_600_000 });
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url });
  pipeline = new Pipeline({ config, log: testLog, sql: db.sql, venues, now, unpaced: true, retryDelaysMs: [5] });
});
afterAll(async () => {
  await pipeline?.stop();
  await sim?.stop();
  await db?.close();
});

describe('backfill', () => {
  const from = new Date(clock - 3 * 3_600_000);
  const to = new Date(clock - 3_600_000);

  it('stores exactly the venues’ trades in the range, once, with progress, and refreshes candles', async () => {
    const seen = new Map<string, { total: number; last: number; inserted: number }>();
    const progress = {
      start: (task: string, total: number) => seen.set(task, { total, last: 0, inserted: -1 }),
      update: (task: string, done: number) => (seen.get(task)!.last = done),
      finish: (task: string, inserted: number) => (seen.get(task)!.inserted = inserted),
    };
    const report = await backfill(pipeline, db.sql, testLog, { pairs: ['BTCZAR', 'BTCUSDT'], from, to }, progress, now);
    expect(report.errors).toEqual([]);
    expect([...seen.keys()].sort()).toEqual(['binance BTCUSDT', 'luno BTCZAR', 'valr BTCZAR']);
    for (const [task, s] of seen) expect(s.inserted, task).toBeGreaterThan(0);

    for (const [venue, pair] of [['luno', 'BTCZAR'], ['valr', 'BTCZAR'], ['binance', 'BTCUSDT']] as const) {
      const expected = sim.served(venue, pair).filter((t) => t.time >= from.getTime() && t.time <= to.getTime()).map((t) => t.id).sort();
      const stored = await db.sql<{ trade_id: string }[]>`SELECT trade_id FROM trades WHERE exchange = ${venue} AND pair = ${pair}`;
      expect(stored.map((r) => r.trade_id).sort(), `${venue} ${pair}`).toEqual(expected);
    }
    const [c] = await db.sql`SELECT count(*)::int AS n FROM candles_1h WHERE pair = 'BTCZAR'`;
    expect(c!.n).toBeGreaterThanOrEqual(2); // materialized, not only real-time
    const watermarks = await db.sql`SELECT * FROM ingest_watermarks`;
    expect(watermarks).toHaveLength(0); // live collection's resume point is not touched
  });

  it('changes nothing when run again', async () => {
    const before = await db.sql`SELECT count(*)::int AS n FROM trades`;
    const report = await backfill(pipeline, db.sql, testLog, { pairs: ['BTCZAR', 'BTCUSDT'], from, to }, undefined, now);
    expect(Object.values(report.rowsBySource).reduce((a, b) => a + b, 0)).toBe(0);
    const after = await db.sql`SELECT count(*)::int AS n FROM trades`;
    expect(after[0]!.n).toBe(before[0]!.n);
    const [cycle] = await db.sql`SELECT count(*)::int AS n FROM ingest_cycles WHERE kind = 'backfill'`;
    expect(cycle!.n).toBe(2);
  });
});
