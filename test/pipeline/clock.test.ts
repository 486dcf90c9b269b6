// Our host's clock running fast (an NTP failure, a VM resumed with a stale offset) while the
// venues and the database keep true time. Settlement moves only forward and certificates are
// issued once: settled on the fast clock, buckets whose trades were still to come were certified
// without them, for good. Settlement never runs ahead of the database's clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { venues } from '../../pipeline/venues/index.js';
import { openTestDatabase, testLog } from '../support/db.js';

const MIN = 60_000;
let sim: SimMarket;
let db: Database;

beforeAll(async () => {
  sim = await startSimMarket({ seed: 21, historyStart: Date.now() - 20 * MIN }); // the venues: true time
  db = await openTestDatabase();
});
afterAll(async () => {
  await sim?.stop();
  await db?.close();
});

describe('a pipeline host whose clock runs 4 minutes fast', () => {
  it('settles nothing past the database clock, and claims no collection past it', async () => {
    const fast = () => Date.now() + 4 * MIN;
    const p = new Pipeline({ config: loadConfig({ MARKET: 'simulated', SIM_URL: sim.url }), log: testLog, sql: db.sql, venues, unpaced: true, now: fast, initialLookbackMs: 15 * MIN, requestTimeoutMs: 2_000, retryDelaysMs: [5] });
    try {
      expect((await p.runTradeCycle()).errors).toEqual([]);
    } finally {
      await p.stop();
    }
    const [row] = await db.sql<{ settled: Date | null; collected: Date | null; db_now: Date }[]>`
      SELECT (SELECT max(settled_through) FROM pair_settlement) AS settled,
             (SELECT max(collected_through) FROM venue_health) AS collected, now() AS db_now`;
    expect(row!.settled).not.toBeNull();
    expect(row!.settled!.getTime()).toBeLessThanOrEqual(row!.db_now.getTime());
    expect(row!.collected!.getTime()).toBeLessThanOrEqual(row!.db_now.getTime());
  });
});
