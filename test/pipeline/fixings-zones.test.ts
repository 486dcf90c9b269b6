// Fixings in two zones without daylight saving and across a day boundary, through the real cycle:
// Nairobi (UTC+3: 16:00 EAT is 13:00 UTC) for BTCKES, traded on luno, and Accra (UTC+0) for BTCGHS,
// which no venue lists: its fixing window has no trade, so its fixings say so and carry no rate.
// The 00:00 UTC fixing of 23 November is the hour 23:00-24:00 of the 22nd, dated the 23rd.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../../pipeline/runner.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { SimWorld } from '../support/pipeline.js';
import { rng } from '../support/market.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-fixings-zones-'));
const file = path.join(dir, 'market.jsonl');
const T0 = Date.UTC(2026, 10, 22, 11, 50);
const END = Date.UTC(2026, 10, 23, 0, 40);
const trades: { venue: string; pair: string; time: number; price: string; amount: string }[] = [];

function writeReplay(): void {
  const random = rng(31);
  const lines: string[] = [];
  let id = 1;
  // two stretches of trading: around Nairobi's 16:00 and around midnight UTC
  for (const [from, to] of [[T0 + 5 * MIN, T0 + 90 * MIN], [Date.UTC(2026, 10, 22, 22, 45), Date.UTC(2026, 10, 23, 0, 20)]]) {
    for (const [n, [venue, pair, level]] of ([['luno', 'BTCKES', 11_900_000], ['binance', 'BTCUSDT', 92_000]] as const).entries()) {
      for (let t = from! + n * 13; t < to!; t += 50_000 + Math.floor(random() * 60_000)) {
        const price = (level * (1 + (random() - 0.5) * 0.003)).toFixed(2);
        const amount = (0.001 + random() * 0.2).toFixed(6);
        trades.push({ venue, pair, time: t, price, amount });
        lines.push(JSON.stringify({ venue, pair, time: new Date(t).toISOString(), id: String(id++), price: Number(price), amount: Number(amount), side: 'sell' }));
      }
    }
  }
  for (const [currency, rate] of [['KES', 129.3], ['GHS', 15.4]] as const) lines.push(JSON.stringify({ fx: 'coinbase', currency, rate, time: new Date(T0 - HOUR).toISOString() }));
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}
writeReplay();

/** VWAP over [from, to) of a pair's trades, exactly, 12 significant digits half-even. */
function expectedVwap(pair: string, from: number, to: number): string {
  const inWindow = trades.filter((t) => t.pair === pair && t.time >= from && t.time < to);
  const num = inWindow.reduce((s, t) => s + BigInt(t.price.replace('.', '')) * BigInt(t.amount.replace('.', '')), 0n);
  const den = inWindow.reduce((s, t) => s + BigInt(t.amount.replace('.', '')), 0n) * 100n;
  const intDigits = (num / den).toString().length;
  const scaled = num * 10n ** BigInt(12 - intDigits);
  let q = scaled / den;
  const r = scaled % den;
  if (2n * r > den || (2n * r === den && q % 2n === 1n)) q += 1n;
  const text = q.toString();
  return `${text.slice(0, intDigits)}.${text.slice(intDigits)}`.replace(/\.?0+$/, '');
}

const w = new SimWorld({ seed: 1, start: T0, historyMs: 0, replay: file });
let api: TestApi;
let pipeline: Pipeline;

beforeAll(async () => {
  api = await startTestApi({ db: w.db });
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: '600' } });
  await pipeline.runFxCycle();
  // five minutes at a time through twelve hours: the collector catches up within each step
  while (w.clock < END) {
    w.clock += 5 * MIN;
    await pipeline.runTradeCycle();
  }
}, 300_000);
afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const fixing = async (pair: string, date: string, kind: string) => {
  const res = await api.get(`/v1/fixings/${pair}/${date}`, api.keys.builder);
  expect(res.status, `${pair} ${date}`).toBe(200);
  return res.body.fixings.find((f: { kind: string }) => f.kind === kind);
};

describe('fixings on Nairobi and Accra time, across midnight UTC', () => {
  it("takes BTCKES's local fixing at 16:00 EAT (13:00 UTC) over the hour before", async () => {
    const f = await fixing('BTCKES', '2026-11-22', 'local');
    expect(f).toMatchObject({ zone: 'Africa/Nairobi', time: '2026-11-22T13:00:00+00:00', local_time: '2026-11-22T16:00:00+03:00', window: { start: '2026-11-22T12:00:00+00:00', end: '2026-11-22T13:00:00+00:00' } });
    expect(f.rate).toBe(Number(expectedVwap('BTCKES', Date.UTC(2026, 10, 22, 12), Date.UTC(2026, 10, 22, 13))));
    expect(f.sources.map((s: { exchange: string }) => s.exchange)).toEqual(['luno']);
  });

  it('dates the 00:00 UTC fixing by its own day, over the last hour of the day before', async () => {
    const f = await fixing('BTCKES', '2026-11-23', 'utc');
    expect(f).toMatchObject({ date: '2026-11-23', zone: 'UTC', time: '2026-11-23T00:00:00+00:00', window: { start: '2026-11-22T23:00:00+00:00', end: '2026-11-23T00:00:00+00:00' } });
    expect(f.rate).toBe(Number(expectedVwap('BTCKES', Date.UTC(2026, 10, 22, 23), Date.UTC(2026, 10, 23))));
    // Nairobi's own fixing of the 25th is 13:00 UTC: not yet
    expect(await api.get('/v1/fixings/BTCKES/2026-11-23', api.keys.free).then((r) => r.body.fixings.map((x: { kind: string }) => x.kind))).toEqual(['utc']);
  });

  it("publishes Accra's 16:00 GMT fixing of a pair nobody traded as saying so, with no rate and never a synthetic one", async () => {
    const f = await fixing('BTCGHS', '2026-11-22', 'local');
    expect(f).toMatchObject({ zone: 'Africa/Accra', time: '2026-11-22T16:00:00+00:00', local_time: '2026-11-22T16:00:00+00:00', rate: null, status: 'unverified', data_quality: 'low', sources: [] });
    expect(f.notes).toMatch(/no trade/i);
    const midnight = await fixing('BTCGHS', '2026-11-23', 'utc');
    expect(midnight.rate).toBeNull();
  });

  it('lists every fixing of a day, each pair once per kind', async () => {
    const res = await api.get('/v1/fixings?date=2026-11-22', api.keys.free);
    expect(res.status).toBe(200);
    const keys = res.body.fixings.map((f: { pair: string; kind: string }) => `${f.pair} ${f.kind}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(expect.arrayContaining(['BTCKES local', 'BTCGHS local']));
    expect(res.body.count).toBe(keys.length);
  });

  it('lists a range of days for one pair, by day and local first, bounded to 31 days', async () => {
    const res = await api.get('/v1/fixings?pair=BTCKES&start=2026-11-22&end=2026-11-23', api.keys.free);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ start: '2026-11-22', end: '2026-11-23' });
    expect(res.body.fixings.map((f: { date: string; kind: string }) => `${f.date} ${f.kind}`)).toEqual(['2026-11-22 local', '2026-11-23 utc']);
    for (const bad of ['start=2026-11-23&end=2026-11-22', 'start=2026-10-01&end=2026-11-23', 'start=2026-11-22', 'date=2026-11-22&start=2026-11-22&end=2026-11-23']) {
      const r = await api.get(`/v1/fixings?pair=BTCKES&${bad}`, api.keys.free);
      expect([r.status, r.body.error], bad).toEqual([400, 'validation_error']);
    }
  });
});
