// The end-of-day snapshot across midnight, through the real pipeline (ccxt against the simulated
// market) and the API over HTTP: a day's snapshot is served only once its last bucket has settled,
// and then it is the whole day. Served at 00:00:30, before the venues had reported 23:59, it was
// missing the day's last trades and changed minutes later.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { Pipeline } from '../../pipeline/runner.js';
import type { TradeRow } from '../../pipeline/store.js';
import { venues } from '../../pipeline/venues/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testLog } from '../support/db.js';
import { SimWorld } from '../support/pipeline.js';
import * as ref from '../support/reference.js';

const MIN = 60_000;
const MIDNIGHT = Date.UTC(2026, 10, 20);
const w = new SimWorld({ seed: 13, start: MIDNIGHT - 15 * MIN, historyMs: 0 });
let api: TestApi;
let pipeline: Pipeline;

beforeAll(async () => {
  api = await startTestApi({ db: w.db });
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: w.sim.url, SETTLE_AFTER_SECONDS: '600' });
  pipeline = new Pipeline({ config, log: testLog, sql: w.db.sql, venues, unpaced: true, now: w.now, initialLookbackMs: 15 * MIN, requestTimeoutMs: 400, retryDelaysMs: [5] });
});
afterAll(async () => {
  await pipeline?.stop();
  await api?.close();
});

async function cycleAt(ms: number) {
  w.clock = ms;
  const report = await pipeline.runTradeCycle();
  expect(report.errors).toEqual([]);
}

describe('the end-of-day snapshot', () => {
  it('is served once the day has settled, and is then the whole day', async () => {
    const day = new Date(MIDNIGHT - 1).toISOString().slice(0, 10);
    const eod = () => api.get(`/v1/rates/eod?pair=BTCNGN&date=${day}`, api.keys.free);
    // a cycle a minute, as the service runs (Quidax serves only its latest trades)
    for (let at = MIDNIGHT - 14 * MIN; at < MIDNIGHT; at += MIN) await cycleAt(at);
    await cycleAt(MIDNIGHT - 30_000);
    // the day is over by the API's w.clock, but its last minutes are not collected yet
    const early = await eod();
    expect(early.status).toBe(404);
    expect(early.body.error).toBe('not_found');
    expect(early.body.message).toMatch(/not settled yet/);
    await cycleAt(MIDNIGHT + 30_000); // every venue has collected past midnight: the day settles
    const res = await eod();
    expect(res.status).toBe(200);
    const served: TradeRow[] = Object.entries(w.sim.listings()).flatMap(([venue, pairs]) =>
      pairs.filter((p) => p === 'BTCNGN').flatMap((pair) => w.sim.served(venue, pair).map((t) => ({ time: new Date(t.time), exchange: venue, pair, tradeId: t.id, price: t.price, amount: t.amount, side: null }))),
    );
    const whole = ref.candles(served, '1d').find((c) => c.bucket === MIDNIGHT - 86_400_000)!;
    expect(whole.trades).toBeGreaterThan(20);
    expect(res.body).toMatchObject({ date: day, pair: 'BTCNGN', open: whole.open, high: whole.high, low: whole.low, close: whole.close });
    expect(res.body.total_volume).toBeCloseTo(whole.volume, 6);
  });
});
