// A venue's run that ends while a publish is under way: it stores a closing bucket's trades and
// then says it has collected past the bucket. If the publish refreshed the candles before that and
// read what may settle after it, the bucket settled (every venue past it) and was certified from
// candles without those trades: a certificate off from the candle for good, and none of the trades
// counted late. What may settle is read before the refresh, so every trade that let the bucket
// settle is in the candles its certificate is made from.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../lib/db/connect.js';
import type { Pipeline } from '../../pipeline/runner.js';
import { certifyingSimPipeline, SimWorld } from '../support/pipeline.js';
import { until } from '../support/wait.js';

const MIN = 60_000;
const BUCKET = 5 * MIN;
const w = new SimWorld({ seed: 9, start: Date.UTC(2026, 10, 20, 9, 0, 0), historyMs: 20 * MIN });
let pipeline: Pipeline;
let beforeSettlementRead: (() => Promise<void>) | null = null;

/** The pipeline's sql, running a hook just before it reads what may settle. */
function hooked(sql: Sql): Sql {
  return new Proxy(sql, {
    apply(target, thisArg, args) {
      const strings = args[0] as unknown;
      const hook = beforeSettlementRead;
      if (hook && Array.isArray(strings) && strings.join('?').includes('settlement_candidates')) {
        beforeSettlementRead = null;
        return hook().then(() => Reflect.apply(target as never, thisArg, args));
      }
      return Reflect.apply(target as never, thisArg, args);
    },
  }) as Sql;
}

beforeAll(() => {
  pipeline = certifyingSimPipeline({
    sim: w.sim,
    db: { ...w.db, sql: hooked(w.db.sql) },
    now: w.now,
    dir: w.dir,
    env: { SETTLE_AFTER_SECONDS: '900' },
    retryDelaysMs: Array(60).fill(5),
  });
});

async function collectedThrough(exchange: string, pair: string): Promise<number> {
  const [r] = await w.db.sql<{ t: Date | null }[]>`SELECT collected_through AS t FROM venue_health WHERE exchange = ${exchange} AND pair = ${pair}`;
  return r?.t?.getTime() ?? -Infinity;
}
/** Until `exchange` has collected `pair` through `edge` (its trades before it stored). */
const collectedPast = (exchange: string, pair: string, edge: number) => until(`${exchange} collected ${pair} through ${new Date(edge).toISOString()}`, async () => (await collectedThrough(exchange, pair)) >= edge, 20_000, 50);

describe('a venue run ending during a publish', () => {
  it('gets every trade that let a bucket settle into its certificate', async () => {
    await w.minutes(pipeline, 6); // caught up
    const edge = Math.ceil(w.clock / BUCKET) * BUCKET;
    const bucket = edge - BUCKET; // not settled yet: quidax has not collected past it
    w.clock = edge + 30_000;

    w.sim.setFault('quidax', { kind: 'timeout' }); // quidax's run hangs in a request ...
    const cycle = pipeline.runTradeCycle();
    await collectedPast('luno', 'BTCNGN', edge);
    // ... a publish (another venue's run ending) starts; quidax's run ends before it reads what may settle
    beforeSettlementRead = async () => {
      w.sim.setFault('quidax', null);
      await collectedPast('quidax', 'BTCNGN', edge);
    };
    await pipeline.publish();
    await cycle;

    const [quidax] = await w.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM trades WHERE exchange = 'quidax' AND pair = 'BTCNGN' AND time >= ${new Date(bucket)} AND time < ${new Date(edge)}`;
    expect(quidax!.n).toBeGreaterThan(0); // the run stored trades of the bucket
    const [settled] = await w.db.sql<{ t: Date }[]>`SELECT settled_through AS t FROM pair_settlement WHERE pair = 'BTCNGN'`;
    expect(settled!.t.getTime()).toBeGreaterThanOrEqual(edge); // and the bucket settled in that publish
    const [late] = await w.db.sql<{ n: number }[]>`SELECT coalesce(sum(trades), 0)::int AS n FROM late_trades`;
    expect(late!.n).toBe(0); // none of them after it
    const [cert] = await w.db.sql<{ body: string }[]>`SELECT body FROM certificates WHERE pair = 'BTCNGN' AND bucket = ${new Date(bucket)}`;
    const [candle] = await w.db.sql<{ vwap: string }[]>`SELECT vwap FROM candles WHERE interval = '5m' AND pair = 'BTCNGN' AND bucket = ${new Date(bucket)}`;
    const certified = (JSON.parse(cert!.body) as { data: { rate: number } }).data.rate;
    expect(Math.abs(certified - Number(candle!.vwap)) / Number(candle!.vwap)).toBeLessThan(1e-9); // the certificate holds them
  }, 60_000);
});
