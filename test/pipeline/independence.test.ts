// Venues collect independently: with one venue hanging on every request (each call times out and is
// retried), the others keep their cadence, on the real clock with the pipeline's own loops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { venues } from '../../pipeline/venues/index.js';
import { openTestDatabase, testLog } from '../support/db.js';
import { until } from '../support/wait.js';

let sim: SimMarket;
let db: Database;

beforeAll(async () => {
  sim = await startSimMarket({ seed: 4, historyStart: Date.now() - 10 * 60_000 });
  db = await openTestDatabase();
});
afterAll(async () => {
  await sim?.stop();
  await db?.close();
});

describe('venues', () => {
  it('keep their cadence while another venue hangs', async () => {
    const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, CYCLE_SECONDS: '1' });
    const pipeline = new Pipeline({ config, log: testLog, sql: db.sql, venues, unpaced: true, initialLookbackMs: 60_000, requestTimeoutMs: 500, retryDelaysMs: [100, 100] });
    // one full cycle first, so every venue has discovered its markets
    await pipeline.runTradeCycle();
    sim.setFault('luno', { kind: 'timeout' }); // luno: 12 pairs x 3 attempts x 0.5 s = 18 s a cycle
    const since = new Date();
    const attemptsSince = () => db.sql<{ exchange: string; n: number }[]>`
      SELECT c.key AS exchange, count(*)::int AS n
      FROM ingest_cycles i, jsonb_each(i.rows_by_source) c
      WHERE i.kind = 'trades' AND i.finished_at > ${since}
      GROUP BY c.key`;
    let attempts: { exchange: string; n: number }[] = [];
    const count = (venue: string) => attempts.find((a) => a.exchange === venue)?.n ?? 0;
    const healthy = ['binance', 'valr', 'quidax'];
    pipeline.start();
    // 8 s of it, or less once every healthy venue has been attempted five times
    const deadline = Date.now() + 8_000;
    const enough = async () => {
      attempts = await attemptsSince();
      return healthy.every((v) => count(v) >= 5) || Date.now() > deadline;
    };
    await until('five attempts of each healthy venue, or 8 s', enough, 20_000, 250);
    await pipeline.stop();
    sim.setFault('luno', null);

    // each healthy venue was attempted about once a second (1 s cycles), luno hardly at all
    attempts = await attemptsSince();
    for (const venue of healthy) expect(count(venue), `${venue}: ${JSON.stringify(attempts)}`).toBeGreaterThanOrEqual(5);
    expect(count('luno')).toBeLessThanOrEqual(1);
    // and what they collected is current: their newest trades are seconds old, not a cycle of luno's
    const [fresh] = await db.sql<{ age: number }[]>`
      SELECT extract(epoch FROM now() - max(last_success_at))::float8 AS age FROM venue_health WHERE exchange = 'binance'`;
    expect(fresh!.age).toBeLessThan(3);
  });
});
