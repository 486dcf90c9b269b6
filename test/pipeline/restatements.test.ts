// Restatements through the real cycle: quidax lags past the settlement lag, so two BTCNGN buckets
// settle (and are certified) from luno alone; when quidax comes back, its trades arrive late. In
// one bucket they move the settled candle by 0.19% (below the 0.20% threshold: counted, not
// restated), in the other by 0.21% (restated). Each is visible where the methodology says.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../../pipeline/runner.js';
import { openStream, type SseReader } from '../api/sse-client.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { SimWorld } from '../support/pipeline.js';
import { inLog } from '../support/transparency.js';

const MIN = 60_000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-restatements-'));
const file = path.join(dir, 'market.jsonl');
const T0 = Date.UTC(2026, 10, 21, 10, 0);
const A = T0 + 20 * MIN; // moved by 0.19 %
const B = T0 + 30 * MIN; // moved by 0.21 %
const P = 100_000_000;

function writeReplay(): void {
  const lines: string[] = [];
  let id = 1;
  const trade = (venue: string, pair: string, t: number, price: number, amount: number) =>
    lines.push(JSON.stringify({ venue, pair, time: new Date(t).toISOString(), id: String(id++), price, amount, side: 'buy' }));
  // luno trades at P every minute (so the hour and the day move far less than the buckets)
  for (let t = T0 + 1_000; t < T0 + 70 * MIN; t += MIN) trade('luno', 'BTCNGN', t, P, 1);
  for (let t = T0 + 2_000; t < T0 + 70 * MIN; t += MIN) trade('binance', 'BTCUSDT', t, 65_000, 0.5);
  trade('quidax', 'BTCNGN', T0 + 3_000, P, 0.001); // quidax is known before it lags
  // in each bucket one quidax trade as large as luno's five: the candle becomes (5P + 5Q) / 10
  trade('quidax', 'BTCNGN', A + 90_000, P * (1 + 2 * 0.0019), 5);
  trade('quidax', 'BTCNGN', B + 90_000, P * (1 + 2 * 0.0021), 5);
  lines.push(JSON.stringify({ fx: 'coinbase', currency: 'NGN', rate: 1538.5, time: new Date(T0 - 3_600_000).toISOString() }));
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}
writeReplay();



const w = new SimWorld({ seed: 1, start: T0, historyMs: 0, replay: file });
let api: TestApi;
let pipeline: Pipeline;
let stream: SseReader;
const certificatesBefore = new Map<number, string>();

const cert = async (bucket: number) =>
  (await fetch(`${api.api.url}/v1/certificates/BTCNGN/${encodeURIComponent(new Date(bucket).toISOString().replace('.000Z', '+00:00'))}`, { headers: { 'X-API-Key': api.keys.enterprise } })).text();

beforeAll(async () => {
  api = await startTestApi({ db: w.db });
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: '600' } });
  await pipeline.runFxCycle();
  const step = async () => {
    await w.minutes(pipeline, 1);
    await api.api.deps.snapshot.refresh(); // what the pipeline's part of a process does after each cycle
  };
  // quidax fails from 10:15 to 10:50: buckets A and B settle by the lag without its trades
  await step();
  w.sim.setFault('quidax', { kind: 'server_error' });
  while (w.clock < T0 + 50 * MIN) await step();
  for (const bucket of [A, B]) certificatesBefore.set(bucket, await cert(bucket));
  stream = await openStream(`${api.api.url}/v1/rates/stream?pairs=BTCNGN`, { 'X-API-Key': api.keys.builder });
  w.sim.setFault('quidax', null);
  // quidax is back (after its backoff pause): its trades for A and B arrive late
  for (let i = 0; i < 15; i++) await step();
}, 240_000);
afterAll(async () => {
  stream?.close();
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('restatements', () => {
  it('restate the candle late trades moved by 0.21 %, not the one moved by 0.19 %, keeping the original', async () => {
    const res = await api.get('/v1/restatements?pair=BTCNGN&since=2026-11-21', api.keys.free);
    expect(res.status).toBe(200);
    const fiveMinute = res.body.restatements.filter((r: { subject: string }) => r.subject === 'candle_5m');
    expect(fiveMinute).toHaveLength(1);
    expect(fiveMinute[0]).toMatchObject({
      pair: 'BTCNGN',
      time: new Date(B).toISOString().replace('.000Z', '+00:00'),
      original: P,
      previous: P,
      restated: P * 1.0021,
      change_pct: 0.21,
      reason: { late_trades: [{ exchange: 'quidax', trades: 1 }] },
    });
    // the hour and the day moved far less: not restated
    expect(res.body.restatements.map((r: { subject: string }) => r.subject)).toEqual(['candle_5m']);
  });

  it('count both buckets\' late trades, and correct both candles', async () => {
    const [late] = await w.db.sql<{ n: number }[]>`SELECT coalesce(sum(trades), 0)::int AS n FROM late_trades WHERE exchange = 'quidax' AND pair = 'BTCNGN'`;
    expect(late!.n).toBeGreaterThanOrEqual(2);
    const candles = await api.get('/v1/rates/historical?pair=BTCNGN&interval=5m&start=2026-11-21&end=2026-11-21&limit=500', api.keys.builder);
    const at = (t: number) => candles.body.data.find((c: { time: string }) => Date.parse(c.time.replace('+00:00', 'Z')) === t);
    expect(at(A).vwap).toBe(P * 1.0019);
    expect(at(B).vwap).toBe(P * 1.0021);
  });

  it('never change a certificate: the list marks the restated bucket and links its restatement', async () => {
    for (const bucket of [A, B]) expect(await cert(bucket)).toBe(certificatesBefore.get(bucket));
    const list = await api.get('/v1/certificates/BTCNGN?start=2026-11-21&end=2026-11-21&limit=1000', api.keys.enterprise);
    const entry = (t: number) => list.body.certificates.find((c: { timestamp: string }) => Date.parse(c.timestamp.replace('+00:00', 'Z')) === t);
    expect(entry(A)).toMatchObject({ rate: P, restated: false });
    expect(entry(B)).toMatchObject({ rate: P, restated: true });
    const linked = await api.get(entry(B).restatements_url, api.keys.enterprise);
    expect(linked.body.restatements.some((r: { time: string }) => Date.parse(r.time.replace('+00:00', 'Z')) === B)).toBe(true);
  });

  it('are announced on the live stream and listed on the status page', async () => {
    let event = await stream.next(5_000);
    while (event && event.event !== 'restatement') event = await stream.next(5_000);
    expect(event, 'a restatement event').not.toBeNull();
    expect(JSON.parse(event!.data)).toMatchObject({ pair: 'BTCNGN', subject: 'candle_5m', change_pct: 0.21 });
    const status = await api.get('/v1/status/public');
    expect(status.body.restatements.some((r: { pair: string; change_pct: number }) => r.pair === 'BTCNGN' && r.change_pct === 0.21)).toBe(true);
    expect(status.body.transparency.tree_size).toBe((await api.get('/v1/transparency/head')).body.tree_size);
  });

  it('are entered in the transparency log', async () => {
    const res = await api.get('/v1/restatements?pair=BTCNGN&since=2026-11-21', api.keys.free);
    const r = res.body.restatements.find((x: { subject: string }) => x.subject === 'candle_5m');
    expect(r.id).toMatch(/^RST-\d+$/); // the log entry's id: one id for the record, its webhook event and its entry
    const { entry } = await inLog(api, r.id);
    expect(entry).toMatchObject({ kind: 'restatement', pair: 'BTCNGN', subject: 'candle_5m', time: r.time, original: String(P), restated: String(P * 1.0021), change_pct: '0.21' });
  });

  it('are announced to webhooks with the id and the values the API lists', async () => {
    const res = await api.get('/v1/restatements?pair=BTCNGN&since=2026-11-21', api.keys.free);
    const [event] = await w.db.sql<{ data: Record<string, unknown> }[]>`SELECT data FROM webhook_events WHERE type = 'restatement' AND data->>'id' = ${res.body.restatements[0].id}`;
    const listed = res.body.restatements[0];
    expect(event?.data).toMatchObject({ id: listed.id, pair: listed.pair, subject: listed.subject, time: listed.time, previous: listed.previous, restated: listed.restated, change_pct: listed.change_pct });
  });

  it('are kept for good: the database refuses to change or delete one', async () => {
    await expect(w.db.sql`UPDATE restatements SET restated = 1`).rejects.toThrow(/append-only/);
    await expect(w.db.sql`DELETE FROM restatements`).rejects.toThrow(/append-only/);
  });
});
