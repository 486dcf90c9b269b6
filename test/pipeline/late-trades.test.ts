// Late trades are counted against the settlement as it stands when they are stored. Venues collect
// independently, and another venue's publish can settle (and certify) buckets while one venue is
// still in its run; the trades that venue then stores for those buckets are late (its certificate
// lacks them), and GET /v1/status must say so. A count taken against the settlement as it stood
// when the run began missed them.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../../pipeline/runner.js';
import { SimWorld } from '../support/pipeline.js';

const MIN = 60_000;
const LAG_SECONDS = 600;
const w = new SimWorld({ seed: 13, start: Date.UTC(2026, 10, 20, 9, 0, 0), historyMs: 20 * MIN });
let pipeline: Pipeline;

beforeAll(() => {
  // quidax's requests are retried for up to ~8 s (400 ms timeouts), long enough for a publish
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: String(LAG_SECONDS) }, retryDelaysMs: Array(20).fill(5) });
});

describe('late trades', () => {
  it('counts every trade stored after its bucket was certified, when the settlement came during the venue\'s run', async () => {
    await w.minutes(pipeline, 3);
    const caughtUpAt = w.clock;
    const before = await w.db.sql<{ pair: string; newest: Date }[]>`SELECT pair, max(time) AS newest FROM trades WHERE exchange = 'quidax' GROUP BY pair`;
    w.clock += 20 * MIN; // a pause: quidax will be behind by more than the lag

    w.sim.setFault('quidax', { kind: 'timeout' }); // quidax's run hangs in its first request ...
    const cycle = pipeline.runTradeCycle();
    await pipeline.publish(); // ... while a publish (another venue's run ending) settles by the lag
    const settledAtPublish = await w.db.sql<{ pair: string; t: Date }[]>`SELECT pair, settled_through AS t FROM pair_settlement`;
    expect(settledAtPublish.find((s) => s.pair === 'BTCNGN')!.t.getTime()).toBeGreaterThan(caughtUpAt);
    w.sim.setFault('quidax', null); // ... then its retry goes through, with trades for those buckets
    const report = await cycle;
    expect(report.errors).toEqual([]);

    // late: the trades quidax stored in this run for buckets settled by then
    const newestBefore = new Map(before.map((b) => [b.pair, b.newest.getTime()]));
    const settledAt = new Map(settledAtPublish.map((s) => [s.pair, s.t.getTime()]));
    const stored = await w.db.sql<{ pair: string; time: Date }[]>`SELECT pair, time FROM trades WHERE exchange = 'quidax'`;
    const expected = { n: stored.filter((t) => t.time.getTime() > (newestBefore.get(t.pair) ?? -Infinity) && t.time.getTime() < (settledAt.get(t.pair) ?? -Infinity)).length };
    expect(expected.n).toBeGreaterThan(0);
    const [counted] = await w.db.sql<{ n: number }[]>`SELECT coalesce(sum(trades), 0)::int AS n FROM late_trades WHERE exchange = 'quidax'`;
    expect(counted!.n).toBe(expected!.n);
  }, 60_000);
});
