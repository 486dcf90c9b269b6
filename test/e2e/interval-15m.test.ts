// The 15m interval (one entry in lib/intervals.ts, one aggregate file) through the real cycle: a
// replayed market collected by the pipeline minute by minute, settled, certified and restated,
// served by the API. Its candles equal an independent computation from the stored trades; late
// trades restate it as they do the 5-minute candle; it is exported, served by tier and documented.
// Quidax lags past the settlement lag, so the 10:30 buckets settle from luno alone; its trade
// there, 1.2 % above luno's price and as large as five of luno's, then arrives late: it moves the
// 5-minute candle by 0.6 % and the 15-minute one by 0.3 % (both past the 0.20 % threshold), the
// hour by less than 0.1 % (not restated).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TradeRow } from '../../pipeline/store.js';
import type { Pipeline } from '../../pipeline/runner.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { SimWorld } from '../support/pipeline.js';
import * as ref from '../support/reference.js';

const MIN = 60_000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-15m-'));
const file = path.join(dir, 'market.jsonl');
const T0 = Date.UTC(2026, 10, 21, 10, 0);
const B = T0 + 30 * MIN; // the 10:30 buckets, which quidax's late trade moves
const P = 100_000_000;
/** (15 P + 5 x 1.012 P) / 20, the 10:30 quarter hour with the late trade */
const RESTATED = 100_300_000;
const DAY = '2026-11-21';

function writeReplay(): void {
  const lines: string[] = [];
  let id = 1;
  const trade = (venue: string, pair: string, t: number, price: number, amount: number) =>
    lines.push(JSON.stringify({ venue, pair, time: new Date(t).toISOString(), id: String(id++), price, amount, side: 'buy' }));
  for (let t = T0 + 1_000; t < T0 + 70 * MIN; t += MIN) trade('luno', 'BTCNGN', t, P, 1);
  for (let t = T0 + 2_000; t < T0 + 70 * MIN; t += MIN) trade('binance', 'BTCUSDT', t, 65_000 + (t - T0) / MIN, 0.5);
  trade('quidax', 'BTCNGN', T0 + 3_000, P, 0.001); // quidax is known before it lags
  trade('quidax', 'BTCNGN', B + 90_000, P * 1.012, 5);
  lines.push(JSON.stringify({ fx: 'coinbase', currency: 'NGN', rate: 1538.5, time: new Date(T0 - 3_600_000).toISOString() }));
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}
writeReplay();

const w = new SimWorld({ seed: 1, start: T0, historyMs: 0, replay: file });
let api: TestApi;
let pipeline: Pipeline;

beforeAll(async () => {
  api = await startTestApi({ db: w.db });
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: '600' } });
  await pipeline.runFxCycle();
  await w.minutes(pipeline, 1);
  w.sim.setFault('quidax', { kind: 'server_error' });
  while (w.clock < T0 + 50 * MIN) await w.minutes(pipeline, 1);
  w.sim.setFault('quidax', null);
  await w.minutes(pipeline, 15); // quidax is back (after its backoff pause): its 10:31:30 trade arrives late
}, 240_000);
afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const at = (t: number) => new Date(t).toISOString().replace('.000Z', '+00:00');
type Json = Record<string, unknown>;

describe('the 15m interval', () => {
  it('serves candles equal to an independent computation from the stored trades', async () => {
    const stored = await w.db.sql<TradeRow[]>`
      SELECT time, exchange, pair, trade_id AS "tradeId", price::text AS price, amount::text AS amount, side FROM trades WHERE pair = 'BTCNGN'`;
    const expected = ref.candles(stored, '15m');
    expect(expected.length).toBeGreaterThanOrEqual(4);
    const res = await api.get(`/v1/rates/historical?pair=BTCNGN&interval=15m&start=${DAY}&end=${DAY}`, api.keys.builder);
    expect(res.status).toBe(200);
    expect(res.body.interval).toBe('15m');
    expect(res.body.data.map((c: Json) => c.time)).toEqual(expected.map((c) => at(c.bucket)));
    res.body.data.forEach((c: Record<string, number>, i: number) => {
      const e = expected[i]!;
      expect([c.open, c.high, c.low, c.close], String(c.time)).toEqual([e.open, e.high, e.low, e.close]);
      expect(ref.closeTo(c.vwap!, e.vwap, 1e-11), String(c.time)).toBe(true);
      expect(ref.closeTo(c.total_volume!, e.volume, 1e-11), String(c.time)).toBe(true);
    });
    // the 10:30 quarter hour as it stands, late trade and all: (15 P + 5 x 1.012 P) / 20
    expect(res.body.data.find((c: Json) => c.time === at(B)).vwap).toBe(RESTATED);
  });

  it('is restated like the other intervals: the quarter hour late trades moved by 0.3 %, the original kept', async () => {
    const [settled] = await w.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM settled_values WHERE interval = '15m' AND pair = 'BTCNGN'`;
    expect(settled!.n).toBeGreaterThan(0);
    const res = await api.get(`/v1/restatements?pair=BTCNGN&since=${DAY}`, api.keys.free);
    expect(res.status).toBe(200);
    const subjects = res.body.restatements.map((r: Json) => r.subject).sort();
    expect(subjects).toEqual(['candle_15m', 'candle_5m']); // the hour and the day moved far less
    const quarter = res.body.restatements.find((r: Json) => r.subject === 'candle_15m');
    expect(quarter).toMatchObject({ pair: 'BTCNGN', time: at(B), original: P, previous: P, restated: RESTATED, change_pct: 0.3, reason: { late_trades: [{ exchange: 'quidax', trades: 1 }] } });
    const status = await api.get('/v1/status/public');
    expect(status.body.restatements.some((r: Json) => r.subject === 'candle_15m' && r.change_pct === 0.3)).toBe(true);
  });

  it('is exported: the month file holds the candles the API serves', async () => {
    const month = DAY.slice(0, 7);
    const res = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
      http
        .get(`${api.api.url}/v1/exports/candles?pair=BTCNGN&month=${month}&interval=15m&format=csv`, { headers: { 'X-API-Key': api.keys.builder } }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers, bytes: Buffer.concat(chunks) }));
          r.on('error', reject);
        })
        .on('error', reject);
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="BTCNGN-15m-${month}(-partial)?\\.csv\\.gz"$`));
    const rows: Record<string, string>[] = parse(zlib.gunzipSync(res.bytes), { columns: true });
    const page = await api.get(`/v1/rates/historical?pair=BTCNGN&interval=15m&start=${month}-01&end=${DAY}&format=csv&limit=2500`, api.keys.builder);
    expect(page.status).toBe(200);
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(rows).toEqual(parse(page.body as string, { columns: true }));
  });

  it('is served by tier: Builder and up, not Free', async () => {
    const free = await api.get(`/v1/rates/historical?pair=BTCNGN&interval=15m&start=${DAY}&end=${DAY}`, api.keys.free);
    expect(free.status).toBe(403);
    expect(free.body).toMatchObject({ error: 'interval_not_available', message: 'The 15m interval is not available on the Free tier (1h, 1d).' });
    for (const tier of ['builder', 'professional', 'enterprise'] as const) {
      expect((await api.get(`/v1/rates/historical?pair=BTCNGN&interval=15m&start=${DAY}&end=${DAY}`, api.keys[tier])).status, tier).toBe(200);
      expect((await api.get('/v1/account', api.keys[tier])).body.limits.intervals, tier).toEqual(['5m', '15m', '1h', '1d']);
    }
    expect((await api.get('/v1/account', api.keys.free)).body.limits.intervals).toEqual(['1h', '1d']);
    // premium at 15m: each quarter hour from its 5-minute observations
    const premium = await api.get(`/v1/premium?pair=BTCNGN&interval=15m&start=${DAY}&end=${DAY}`, api.keys.builder);
    expect(premium.status).toBe(200);
    expect(premium.body.data.length).toBeGreaterThan(0);
    for (const p of premium.body.data) {
      expect(Date.parse(p.timestamp) % (15 * MIN)).toBe(0);
      expect(p.data_points).toBeLessThanOrEqual(3);
    }
  });

  it('is in the OpenAPI document wherever an interval is taken or answered', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    const param = (p: string) => doc.paths[p].get.parameters.find((x: Json) => x.name === 'interval').schema.enum;
    for (const p of ['/v1/rates/historical', '/v1/premium', '/v1/exports/candles']) expect(param(p), p).toEqual(['5m', '15m', '1h', '1d']);
    expect(JSON.stringify(doc)).toContain('candle_15m');
  });
});
