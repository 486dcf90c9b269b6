// A known market played through the whole system: a replay file -> simulated venues -> ccxt ->
// pipeline -> TimescaleDB aggregates -> HTTP API, checked against a computation on the file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { venues } from '../../pipeline/venues/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { openTestDatabase, testLog } from '../support/db.js';
import { rng } from '../support/market.js';
import * as ref from '../support/reference.js';
import type { TradeRow } from '../../pipeline/store.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-replay-'));
const file = path.join(dir, 'market.jsonl');
const now = Date.now();
const start = now - 40 * 60_000; // within every venue's reach, and few enough for Quidax's ~100
let sim: SimMarket;
let db: Database;
let api: TestApi;
const trades: TradeRow[] = [];

function writeReplay() {
  const random = rng(5);
  const lines: string[] = [];
  const spec = [
    ['luno', 'BTCNGN', 143_000_000],
    ['quidax', 'BTCNGN', 143_400_000],
    ['binance', 'BTCUSDT', 90_000],
  ] as const;
  let id = 1;
  for (const [offset, [venue, pair, level]] of spec.entries()) {
    // distinct milliseconds per pair, so open and close are well defined
    for (let t = start + offset * 7; t < now - 5_000; t += 20_000 + Math.floor(random() * 20_000)) {
      const price = Number((level * (1 + (random() - 0.5) * 0.004)).toFixed(2));
      const amount = Number((0.001 + random() * 0.2).toFixed(6));
      const side = random() < 0.5 ? 'buy' : 'sell';
      lines.push(JSON.stringify({ venue, pair, time: new Date(t).toISOString(), id: String(id), price, amount, side }));
      trades.push({ time: new Date(t), exchange: venue, pair, tradeId: String(id++), price, amount, side });
    }
  }
  for (const [source, rate] of [['coinbase', 1532], ['exchangerate-api', 1528]] as const) {
    lines.push(JSON.stringify({ fx: source, currency: 'NGN', rate, time: new Date(start - 3_600_000).toISOString() }));
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

beforeAll(async () => {
  writeReplay();
  sim = await startSimMarket({ replay: file });
  db = await openTestDatabase();
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, AFRATES_VAR_DIR: dir });
  const pipeline = new Pipeline({ config, log: testLog, sql: db.sql, venues, unpaced: true, initialLookbackMs: 3_600_000 });
  const cycle = await pipeline.runTradeCycle();
  expect(cycle.errors).toEqual([]);
  const fx = await pipeline.runFxCycle();
  // the file quotes NGN only: the other currencies are reported missing, NGN is stored
  expect(fx.errors.map((e) => e.error)).toEqual(['no rate for ZAR, KES, GHS, UGX', 'no rate for ZAR, KES, GHS, UGX']);
  await pipeline.stop();
  api = await startTestApi({ db, env: { MARKET: 'simulated', SIM_URL: sim.url } });
});

afterAll(async () => {
  await api?.close();
  await sim?.stop();
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function get(p: string) {
  const res = await fetch(`${api.api.url}${p}`, { headers: { 'X-API-Key': api.keys.enterprise } });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

describe('a replayed market', () => {
  it('stores every trade of the file once', async () => {
    const [row] = await db.sql`SELECT count(*)::int AS n FROM trades`;
    expect(row!.n).toBe(trades.length);
  });

  it('serves 5-minute candles equal to a computation on the file', async () => {
    const day = new Date(start).toISOString().slice(0, 10);
    const end = new Date(now).toISOString().slice(0, 10);
    const res = await get(`/v1/rates/historical?pair=BTCNGN&interval=5m&start=${day}&end=${end}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-afrates-data')).toBe('simulated');
    const expected = ref.candles(trades.filter((t) => t.pair === 'BTCNGN'), '5m');
    expect(res.body.data.map((c: { time: string }) => Date.parse(c.time))).toEqual(expected.map((c) => c.bucket));
    res.body.data.forEach((c: Record<string, number>, i: number) => {
      expect(c.open).toBe(expected[i]!.open);
      expect(c.close).toBe(expected[i]!.close);
      expect(ref.closeTo(c.vwap!, expected[i]!.vwap, 1e-11)).toBe(true);
      expect(ref.closeTo(c.total_volume!, expected[i]!.volume, 1e-11)).toBe(true);
    });
  });

  it('publishes the live rate and its synthetic check from the file’s trades and FX', async () => {
    const res = await get('/v1/rates/live?pairs=BTCNGN&include_sources=true&include_synthetic=true');
    expect(res.status).toBe(200);
    const live = res.body.data.BTCNGN;
    const byVenue = ref.candles(trades.filter((t) => t.pair === 'BTCNGN'), '5m', true);
    const newest = ['luno', 'quidax'].map((v) => byVenue.filter((c) => c.exchange === v).at(-1)!);
    const expected = newest.reduce((s, c) => s + c.pv, 0) / newest.reduce((s, c) => s + c.volume, 0);
    expect(ref.closeTo(live.rate, expected, 1e-11)).toBe(true);
    const usdt = ref.candles(trades.filter((t) => t.pair === 'BTCUSDT'), '5m').at(-1)!;
    expect(ref.closeTo(live.pricing.synthetic.price, usdt.vwap * 1530, 1e-11)).toBe(true); // median of 1532 and 1528
    expect(live.sources.map((s: { exchange: string }) => s.exchange).sort()).toEqual(['luno', 'quidax']);
  });
});
