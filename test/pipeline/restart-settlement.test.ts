// A restart after downtime longer than the settlement lag. Every venue's collected_through is from
// before the stop, so the lag rule lets the outage's buckets settle: had the pipeline settled (and
// certified, for good) at once on start, while the venues were still fetching the outage's trades,
// those certificates would lack them. Here luno's first collection after the restart is slowed
// (its first requests time out), and every certificate must still equal its bucket's
// candle from all trades.
import { describe, expect, it } from 'vitest';
import { SimWorld } from '../support/pipeline.js';
import { until } from '../support/wait.js';

const MIN = 60_000;
const LAG_SECONDS = 600;
const w = new SimWorld({ seed: 11, start: Date.UTC(2026, 10, 20, 9, 0, 0), historyMs: 20 * MIN });

/** One run of the pipeline; a cycle every 5 minutes of real time: after start(), each venue collects once. */
const pipeline = () => w.pipeline({ env: { SETTLE_AFTER_SECONDS: String(LAG_SECONDS), CYCLE_SECONDS: '300' }, retryDelaysMs: [5, 5] });

describe('a restart after downtime longer than the settlement lag', () => {
  it("certifies the outage's buckets only from every venue's trades", async () => {
    const before = pipeline();
    await w.minutes(before, 3);
    await before.stop();
    w.clock += 30 * MIN; // down for half an hour: the lag (10 min) has passed for most of it

    const after = pipeline();
    w.sim.setFault('luno', { kind: 'timeout', times: 2 }); // its first collection takes a while
    const [{ lastCycle } = { lastCycle: 0 }] = await w.db.sql<{ lastCycle: number }[]>`SELECT coalesce(max(id), 0)::int AS "lastCycle" FROM ingest_cycles`;
    after.start();
    try {
      const settledThrough = w.clock - LAG_SECONDS * 1000 - 5 * MIN;
      await expect
        .poll(async () => (await w.db.sql<{ t: Date }[]>`SELECT settled_through AS t FROM pair_settlement WHERE pair = 'BTCNGN'`)[0]?.t?.getTime() ?? 0, { timeout: 60_000, interval: 250 })
        .toBeGreaterThanOrEqual(settledThrough);
      // every venue's first collection done too (luno's may end after the settlement without the fix)
      const venuesOf = async (from: number, to: number) =>
        (await w.db.sql<{ n: number }[]>`SELECT count(DISTINCT exchange)::int AS n FROM trades WHERE pair = 'BTCNGN' AND time >= ${new Date(from)} AND time < ${new Date(to)}`)[0]!.n;
      const venuesBefore = await venuesOf(w.clock - 40 * MIN, w.clock - 30 * MIN);
      expect(venuesBefore).toBeGreaterThan(1);
      await expect.poll(() => venuesOf(w.clock - 30 * MIN, settledThrough), { timeout: 60_000, interval: 250 }).toBe(venuesBefore);
      // and the publish after it recorded (a cycle naming luno): its candles hold luno's trades
      const published = async () => (await w.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM ingest_cycles WHERE id > ${lastCycle} AND kind = 'trades' AND rows_by_source -> 'luno' IS NOT NULL`)[0]!.n;
      await until("the publish after luno's collection", async () => (await published()) > 0, 60_000, 250);
    } finally {
      await after.stop();
      w.sim.setFault('luno', null);
    }
    // every certificate of the outage against its candle now, from all trades (no outliers here)
    const rows = await w.db.sql<{ bucket: Date; certified: string; candle: string | null }[]>`
      SELECT c.bucket, c.rate::text AS certified, k.vwap::text AS candle
      FROM certificates c LEFT JOIN candles k ON k.pair = c.pair AND k.interval = '5m' AND k.bucket = c.bucket
      WHERE c.pair = 'BTCNGN' AND c.bucket >= ${new Date(w.clock - 31 * MIN)}`;
    expect(rows.length).toBeGreaterThan(3);
    const wrong = rows.filter((r) => r.candle === null || Math.abs(Number(r.certified) / Number(r.candle) - 1) > 1e-9);
    expect(wrong.map((r) => `${r.bucket.toISOString()} certified ${r.certified}, candle ${r.candle}`)).toEqual([]);
  }, 120_000);
});
