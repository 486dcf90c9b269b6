// A restart after downtime longer than the settlement lag. Every venue's collected_through is from
// before the stop, so the lag rule lets the outage's buckets settle: had the pipeline settled (and
// certified, for good) at once on start, while the venues were still fetching the outage's trades,
// those certificates would lack them. Here luno's first collection after the restart is slowed
// (its first requests time out), and every certificate must still equal its bucket's
// candle from all trades.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { startSimMarket, type SimMarket } from '../../pipeline/sim/index.js';
import { openTestDatabase } from '../support/db.js';
import { certifyingSimPipeline } from '../support/pipeline.js';

const MIN = 60_000;
const LAG_SECONDS = 600;
let clock = Date.UTC(2026, 10, 20, 9, 0, 0);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-restart-'));
let sim: SimMarket;
let db: Database;

/** One run of the pipeline; a cycle every 5 minutes of real time: after start(), each venue collects once. */
const pipeline = () =>
  certifyingSimPipeline({ sim, db, now: () => clock, dir, env: { SETTLE_AFTER_SECONDS: String(LAG_SECONDS), CYCLE_SECONDS: '300' }, retryDelaysMs: [5, 5] });

beforeAll(async () => {
  sim = await startSimMarket({ seed: 11, now: () => clock, historyStart: clock - 20 * MIN });
  db = await openTestDatabase();
});
afterAll(async () => {
  await sim?.stop();
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a restart after downtime longer than the settlement lag', () => {
  it("certifies the outage's buckets only from every venue's trades", async () => {
    const before = pipeline();
    for (let i = 0; i < 3; i++) {
      clock += MIN;
      await before.runTradeCycle();
    }
    await before.stop();
    clock += 30 * MIN; // down for half an hour: the lag (10 min) has passed for most of it

    const after = pipeline();
    sim.setFault('luno', { kind: 'timeout', times: 2 }); // its first collection takes a while
    after.start();
    try {
      const settledThrough = clock - LAG_SECONDS * 1000 - 5 * MIN;
      await expect
        .poll(async () => (await db.sql<{ t: Date }[]>`SELECT settled_through AS t FROM pair_settlement WHERE pair = 'BTCNGN'`)[0]?.t?.getTime() ?? 0, { timeout: 60_000, interval: 250 })
        .toBeGreaterThanOrEqual(settledThrough);
      // every venue's first collection done too (luno's may end after the settlement without the fix)
      const venuesOf = async (from: number, to: number) =>
        (await db.sql<{ n: number }[]>`SELECT count(DISTINCT exchange)::int AS n FROM trades WHERE pair = 'BTCNGN' AND time >= ${new Date(from)} AND time < ${new Date(to)}`)[0]!.n;
      const venuesBefore = await venuesOf(clock - 40 * MIN, clock - 30 * MIN);
      expect(venuesBefore).toBeGreaterThan(1);
      await expect.poll(() => venuesOf(clock - 30 * MIN, settledThrough), { timeout: 60_000, interval: 250 }).toBe(venuesBefore);
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      await after.stop();
      sim.setFault('luno', null);
    }
    // every certificate of the outage against its candle now, from all trades (no outliers here)
    const rows = await db.sql<{ bucket: Date; certified: string; candle: string | null }[]>`
      SELECT c.bucket, c.rate::text AS certified, k.vwap::text AS candle
      FROM certificates c LEFT JOIN candles k ON k.pair = c.pair AND k.interval = '5m' AND k.bucket = c.bucket
      WHERE c.pair = 'BTCNGN' AND c.bucket >= ${new Date(clock - 31 * MIN)}`;
    expect(rows.length).toBeGreaterThan(3);
    const wrong = rows.filter((r) => r.candle === null || Math.abs(Number(r.certified) / Number(r.candle) - 1) > 1e-9);
    expect(wrong.map((r) => `${r.bucket.toISOString()} certified ${r.certified}, candle ${r.candle}`)).toEqual([]);
  }, 120_000);
});
