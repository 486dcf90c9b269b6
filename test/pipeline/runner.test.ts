// The collector end to end: real ccxt against the simulated market, the embedded database, the
// aggregates. Compares what is stored with what the simulator served, trade for trade.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { collect, readWatermark } from '../../pipeline/collect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { venueById, venues } from '../../pipeline/venues/index.js';
import { failingQueries, openTestDatabase, testLog } from '../support/db.js';

// short enough that Quidax (latest ~100 trades only, no paging) can still serve all of it
const LOOKBACK = 5 * 60_000;
let clock = Date.UTC(2026, 10, 20, 12, 0, 0);
const now = () => clock;
let sim: SimMarket;
let db: Database;
let cycleStart: number;

/** paced: honour each venue's published limits (slow: VALR allows one call every 2.5 s). */
function pipeline(paced = false, log = testLog) {
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, CYCLE_SECONDS: '60' });
  return new Pipeline({ config, log, sql: db.sql, venues, now, initialLookbackMs: LOOKBACK, retryDelaysMs: [5, 10], requestTimeoutMs: 400, unpaced: !paced });
}

interface VenueCycleLine {
  level: number;
  venue: string;
  failures: number;
  errors?: { pair: string; error: string }[];
}

/** A logger that keeps each venue's 'venue cycle' line, as an operator reads it. */
function venueCycleLines(lines: VenueCycleLine[]) {
  return pino({ level: 'info' }, {
    write: (line: string) => {
      const entry = JSON.parse(line) as VenueCycleLine & { msg: string };
      if (entry.msg === 'venue cycle') lines.push(entry);
    },
  });
}

/** Every stored trade of a venue+pair equals what the simulator served since collection began. */
async function expectExactly(venue: string, pair: string) {
  const served = sim.served(venue, pair).filter((t) => t.time >= cycleStart - LOOKBACK);
  const stored = await db.sql<{ trade_id: string; time: Date; price: string; amount: string }[]>`
    SELECT trade_id, time, price, amount FROM trades WHERE exchange = ${venue} AND pair = ${pair} ORDER BY time, trade_id`;
  expect(stored.map((s) => s.trade_id).sort(), `${venue} ${pair}`).toEqual(served.map((t) => t.id).sort());
  const byId = new Map(served.map((t) => [t.id, t]));
  for (const s of stored) {
    const t = byId.get(s.trade_id)!;
    expect(s.time.getTime()).toBe(t.time);
    expect(Number(s.price)).toBe(t.price);
    expect(Number(s.amount)).toBe(t.amount);
  }
}

async function expectAllExact() {
  for (const [venue, pairs] of Object.entries(sim.listings())) {
    for (const pair of pairs) await expectExactly(venue, pair);
  }
}

beforeAll(async () => {
  db = await openTestDatabase();
  sim = await startSimMarket({ seed: 3, now, historyStart: clock - 2 * 3_600_000 });
});
afterAll(async () => {
  await sim?.stop();
  await db?.close();
});

describe('collection cycle', () => {
  it('stores exactly the trades served, builds candles and advances watermarks', async () => {
    cycleStart = clock;
    const p = pipeline(true);
    const report = await p.runTradeCycle();
    expect(report.errors).toEqual([]);
    expect(Object.keys(report.rowsBySource).sort()).toEqual(['binance', 'luno', 'quidax', 'valr']);
    await expectAllExact();
    const listed = await db.sql`SELECT exchange, pair FROM venue_markets ORDER BY exchange, pair`;
    expect(listed.length).toBe(Object.values(sim.listings()).flat().length);
    const candles = await db.sql`SELECT count(*)::int AS n FROM candles WHERE interval = '5m' AND pair = 'BTCNGN'`;
    expect(candles[0]!.n).toBeGreaterThan(0);
    const [w] = await db.sql`SELECT last_time FROM ingest_watermarks WHERE exchange = 'luno' AND pair = 'BTCNGN'`;
    expect(w!.last_time.getTime()).toBe(sim.served('luno', 'BTCNGN').at(-1)!.time);

    clock += 3 * 60_000;
    await p.runTradeCycle();
    await expectAllExact();
    const [cycles] = await db.sql`SELECT count(*)::int AS n FROM ingest_cycles WHERE kind = 'trades' AND market = 'simulated'`;
    expect(cycles!.n).toBe(2);
    await p.stop();
  });

  it('resumes after a crash mid-cycle with no gap and no duplicate', async () => {
    clock += 10 * 60_000;
    const venue = venueById('luno')!;
    const exchange = venue.create({ simUrl: sim.url });
    let calls = 0;
    const dying = async <T>(work: () => Promise<T>): Promise<T> => {
      if (++calls > 1) throw new Error('killed');
      return work();
    };
    // a page size of 5 makes several pages; the "process" dies after the first
    await db.sql`DELETE FROM refresh_requests`;
    const before = await readWatermark(db.sql, 'luno', 'BTCNGN');
    const died = collect(db.sql, { venue: { ...venue, pageSize: 5 }, exchange, symbol: 'BTC/NGN', pair: 'BTCNGN' }, dying, { startAt: 0 });
    await expect(died).rejects.toThrow('killed');
    // what the first page stored is on record for the next refresh, though this process is gone
    const requests = await db.sql<{ from_time: Date }[]>`SELECT from_time FROM refresh_requests`;
    expect(requests).toHaveLength(1);
    expect(requests[0]!.from_time.getTime()).toBeGreaterThanOrEqual(before!.time.getTime()); // the page began at the watermark
    const p = pipeline(); // a fresh process: everything it knows comes from the database
    const report = await p.runTradeCycle();
    expect(report.errors).toEqual([]);
    await expectAllExact();
    await p.stop();
  });

  it('collects FX from both sources with their own update times', async () => {
    const p = pipeline();
    const report = await p.runFxCycle();
    expect(report.errors).toEqual([]);
    const rows = await db.sql<{ source: string; n: number }[]>`SELECT source, count(*)::int AS n FROM fx_rates GROUP BY source ORDER BY source`;
    expect(rows).toEqual([{ source: 'coinbase', n: 5 }, { source: 'exchangerate_api', n: 5 }]);
    const [erApi] = await db.sql`SELECT source_updated_at, time FROM fx_rates WHERE source = 'exchangerate_api' LIMIT 1`;
    expect(erApi!.source_updated_at.getTime()).toBeLessThan(erApi!.time.getTime());
    await p.stop();
  });
});

describe('faults', () => {
  const failing = async (venue: string) =>
    db.sql<{ pair: string; consecutive_failures: number; last_error: string | null }[]>`
      SELECT pair, consecutive_failures, last_error FROM venue_health WHERE exchange = ${venue} ORDER BY pair`;

  it('retries a 429 and a timeout, losing nothing', async () => {
    const p = pipeline();
    clock += 2 * 60_000;
    sim.setFault('luno', { kind: 'rate_limit', times: 1 });
    sim.setFault('valr', { kind: 'timeout', times: 1 });
    const report = await p.runTradeCycle();
    expect(report.errors).toEqual([]);
    await expectAllExact();
    await p.stop();
  });

  for (const kind of ['server_error', 'malformed', 'timeout'] as const) {
    it(`marks a venue failing on persistent ${kind}, says which pairs and why in its log line, keeps the others going, and recovers without a gap`, async () => {
      const lines: VenueCycleLine[] = [];
      const p = pipeline(false, venueCycleLines(lines));
      clock += 2 * 60_000;
      sim.setFault('quidax', { kind });
      const report = await p.runTradeCycle();
      const quidaxErrors = report.errors.filter((e) => e.source === 'quidax');
      expect(quidaxErrors.length).toBeGreaterThan(0);
      expect(report.errors.every((e) => e.source === 'quidax')).toBe(true);
      // the operator's line names each failed pair with its error; the healthy venues' lines name none
      const quidaxLine = lines.find((l) => l.venue === 'quidax')!;
      expect(quidaxLine.level).toBe(40);
      expect(quidaxLine.errors?.map((e) => e.pair).sort()).toEqual(quidaxErrors.map((e) => e.pair).sort());
      expect(quidaxLine.errors?.map((e) => e.error)).toEqual(quidaxErrors.map((e) => e.error));
      expect(lines.filter((l) => l.venue !== 'quidax').every((l) => l.level === 30 && l.errors === undefined)).toBe(true);
      const health = await failing('quidax');
      expect(health.every((h) => h.consecutive_failures >= 1 && h.last_error)).toBe(true);
      await expectExactly('luno', 'BTCNGN');

      sim.setFault('quidax', null);
      clock += 60_000;
      const after = await p.runTradeCycle();
      expect(after.errors).toEqual([]);
      expect((await failing('quidax')).every((h) => h.consecutive_failures === 0)).toBe(true);
      await expectAllExact();
      await p.stop();
    });
  }

  it("names the one pair that failed in its venue line, and stores the venue's other pairs", async () => {
    const lines: VenueCycleLine[] = [];
    const p = pipeline(false, venueCycleLines(lines));
    clock += 60_000;
    expect((await p.runTradeCycle()).errors).toEqual([]); // its markets loaded: from here on one request per pair
    lines.length = 0;
    clock += 60_000;
    // every attempt at the next request fails (the first try and both retries), and nothing after it
    sim.setFault('quidax', { kind: 'server_error', times: 3 });
    const report = await p.runTradeCycle();
    expect(report.errors.map((e) => e.source)).toEqual(['quidax']);
    const failed = report.errors[0]!.pair;
    const quidaxLine = lines.find((l) => l.venue === 'quidax')!;
    expect(quidaxLine.level).toBe(40);
    expect(quidaxLine.failures).toBe(1);
    expect(quidaxLine.errors).toEqual([expect.objectContaining({ pair: failed, error: report.errors[0]!.error })]);
    for (const pair of sim.listings().quidax!.filter((x) => x !== failed)) await expectExactly('quidax', pair);

    clock += 60_000;
    expect((await p.runTradeCycle()).errors).toEqual([]);
    await expectAllExact(); // the failed pair's trades too, once it answered again
    await p.stop();
  });

  it('does not pause a venue for cycles the database failed: the first cycle after the outage collects every venue, losing nothing', async () => {
    // the database unreachable (down, failing over) for more runs in a row than a venue may fail before it pauses
    const down = failingQueries(db.sql, 'FROM ingest_watermarks WHERE', Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }));
    const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, CYCLE_SECONDS: '10' });
    const p = new Pipeline({ config, log: testLog, sql: down.sql, venues, now, initialLookbackMs: LOOKBACK, retryDelaysMs: [5], requestTimeoutMs: 400, unpaced: true });
    clock += 60_000;
    expect((await p.runTradeCycle()).errors).toEqual([]);
    down.fail(1_000_000);
    for (let i = 0; i < 4; i++) {
      clock += 10_000;
      const report = await p.runTradeCycle();
      expect(new Set(report.errors.map((e) => e.source))).toEqual(new Set(Object.keys(sim.listings())));
    }
    down.fail(0);
    clock += 10_000;
    expect((await p.runTradeCycle()).errors).toEqual([]);
    await expectAllExact();
    await p.stop();
  });

  it('stores repeated and shuffled trades once each', async () => {
    const p = pipeline();
    clock += 4 * 60_000;
    sim.setFault('luno', { kind: 'duplicates' });
    sim.setFault('valr', { kind: 'out_of_order' });
    const report = await p.runTradeCycle();
    expect(report.errors).toEqual([]);
    await expectAllExact();
    sim.setFault('luno', null);
    sim.setFault('valr', null);
    await p.stop();
  });

  it('holds back a trade stamped a day ahead, and loses nothing after it', async () => {
    // A venue's clock or data gone wrong: its newest trade says tomorrow. Taken as it is, the
    // watermark would jump a day ahead and every trade until then would never be asked for.
    const p = pipeline();
    clock += 3 * 60_000;
    sim.setFault('valr', { kind: 'future' }); // every trades response of this cycle
    const first = await p.runTradeCycle();
    sim.setFault('valr', null);
    expect(first.errors).toEqual([]);
    const [ahead] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades WHERE time > ${new Date(clock + 60_000)}`;
    expect(ahead!.n).toBe(0);
    clock += 3 * 60_000;
    await p.runTradeCycle();
    await expectAllExact();
    await p.stop();
  });

  it('loses nothing from a venue that went silent for a while', async () => {
    const p = pipeline();
    sim.setFault('valr', { kind: 'silent' });
    clock += 3 * 60_000;
    await p.runTradeCycle();
    const stored = await db.sql`SELECT max(time) AS t FROM trades WHERE exchange = 'valr'`;
    expect(stored[0]!.t.getTime()).toBeLessThan(sim.served('valr', 'BTCZAR').at(-1)!.time);
    sim.setFault('valr', null);
    clock += 60_000;
    await p.runTradeCycle();
    await expectAllExact();
    await p.stop();
  });
});

describe('storage jobs', () => {
  it('run (retention, compression, vacuum, then a checkpoint) on the first cycle and then once an hour, when the database has no scheduler', async () => {
    const ran: string[][] = [];
    const log = pino({ level: 'info' }, {
      write: (line: string) => {
        const entry = JSON.parse(line) as { msg: string; jobs?: { job: string }[] };
        if (entry.msg === 'storage jobs ran') ran.push(entry.jobs!.map((j) => j.job));
      },
    });
    const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, CYCLE_SECONDS: '60' });
    const p = new Pipeline({ config, log, sql: db.sql, venues, now, initialLookbackMs: LOOKBACK, retryDelaysMs: [5], requestTimeoutMs: 400, unpaced: true, runStorageJobs: true });
    const cycleAt = async (minutes: number) => {
      clock += minutes * 60_000;
      expect((await p.runTradeCycle()).errors).toEqual([]);
      return ran.length;
    };
    expect(await cycleAt(1)).toBe(1); // at once: a process that restarts often still gets them
    expect(ran[0]).toContain('policy_compression');
    expect(ran[0]!.slice(-2)).toEqual(['vacuum_analyze', 'checkpoint']); // the embedded database has no checkpointer: without it pg_wal grows for good
    expect(await cycleAt(30)).toBe(1);
    expect(await cycleAt(29)).toBe(1);
    expect(await cycleAt(2)).toBe(2); // over an hour since the first
    expect(await cycleAt(1)).toBe(2);
    await p.stop();
  });
});
