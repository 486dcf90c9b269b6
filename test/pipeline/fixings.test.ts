// Daily fixings through the real cycle: a replayed market (sim/) collected by the real pipeline
// over real ccxt, settled and certified on the test's clock, served by the real API over HTTP.
// The 16:00 WAT fixing of BTCNGN is the VWAP of the trades of 15:00-16:00 WAT (14:00-15:00 UTC),
// computed independently here from the replay file, and it is published only once that hour has
// settled: while a venue lags, it waits for it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../../pipeline/runner.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { SimWorld } from '../support/pipeline.js';
import { rng } from '../support/market.js';
import { inLog } from '../support/transparency.js';
import { canonical } from '../verify/support.js';

const MIN = 60_000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-fixings-'));
const file = path.join(dir, 'market.jsonl');
const T0 = Date.UTC(2026, 10, 20, 13, 40);
const FIXING = Date.UTC(2026, 10, 20, 15, 0); // 16:00 in Lagos (UTC+1)
const LAG_SECONDS = 1200;

interface Trade {
  venue: string;
  pair: string;
  time: number;
  id: string;
  price: string;
  amount: string;
}
const trades: Trade[] = [];

/** Trades from 13:45 to 15:25 UTC on luno and quidax (BTCNGN) and binance (BTCUSDT), NGN FX. */
function writeReplay(): void {
  const random = rng(23);
  const spec = [
    ['luno', 'BTCNGN', 143_000_000],
    ['quidax', 'BTCNGN', 143_300_000],
    ['binance', 'BTCUSDT', 92_000],
  ] as const;
  let id = 1;
  for (const [n, [venue, pair, level]] of spec.entries()) {
    for (let t = T0 + 5 * MIN + n * 11; t < T0 + 105 * MIN; t += 40_000 + Math.floor(random() * 50_000)) {
      trades.push({ venue, pair, time: t, id: String(id++), price: (level * (1 + (random() - 0.5) * 0.003)).toFixed(2), amount: (0.0005 + random() * 0.3).toFixed(6) });
    }
  }
  const lines = trades.map((t) => JSON.stringify({ venue: t.venue, pair: t.pair, time: new Date(t.time).toISOString(), id: t.id, price: Number(t.price), amount: Number(t.amount), side: 'buy' }));
  lines.push(JSON.stringify({ fx: 'coinbase', currency: 'NGN', rate: 1530.5, time: new Date(T0 - 3_600_000).toISOString() }));
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}
writeReplay();

/** The VWAP of the trades in [from, to), exactly (scaled integers), rounded half-even to 12 significant digits. */
function expectedVwap(pair: string, from: number, to: number): string {
  const inWindow = trades.filter((t) => t.pair === pair && t.time >= from && t.time < to);
  // price has 2 decimals, amount 6: pv is scaled by 10^8, volume by 10^6
  const pv = inWindow.reduce((s, t) => s + BigInt(t.price.replace('.', '')) * BigInt(t.amount.replace('.', '')), 0n);
  const volume = inWindow.reduce((s, t) => s + BigInt(t.amount.replace('.', '')), 0n);
  // rate = pv / 10^8 / (volume / 10^6) = pv / (volume x 100); 12 significant digits of it
  const num = pv;
  const den = volume * 100n;
  const intDigits = (num / den).toString().length;
  const places = 12 - intDigits;
  const scaled = num * 10n ** BigInt(places);
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
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: String(LAG_SECONDS) } });
  await pipeline.runFxCycle();
});
afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the 16:00 WAT fixing', () => {
  it('is published once its hour has settled, waiting for a venue that lags, and equals the VWAP of that hour', async () => {
    const published: { at: number; settledThrough: number }[] = [];
    while (w.clock < FIXING + 35 * MIN) {
      // quidax fails from 14:50 to 15:08 UTC: the hour cannot settle before it has caught up
      if (w.clock === FIXING - 10 * MIN) w.sim.setFault('quidax', { kind: 'server_error' });
      if (w.clock === FIXING + 8 * MIN) w.sim.setFault('quidax', null);
      await w.minutes(pipeline, 1);
      const [f] = await w.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM fixings WHERE pair = 'BTCNGN' AND kind = 'local'`;
      const [s] = await w.db.sql<{ t: Date }[]>`SELECT settled_through AS t FROM pair_settlement WHERE pair = 'BTCNGN'`;
      if (f!.n > 0 && published.length === 0) published.push({ at: w.clock, settledThrough: s!.t.getTime() });
    }
    expect(published, 'the fixing was published').toHaveLength(1);
    // published once settled, and not before quidax was back (the lag would have allowed 15:20)
    expect(published[0]!.settledThrough).toBeGreaterThanOrEqual(FIXING);
    expect(published[0]!.at).toBeGreaterThan(FIXING + 8 * MIN);

    const day = await api.get('/v1/fixings/BTCNGN/2026-11-20', api.keys.enterprise);
    expect(day.status).toBe(200);
    const local = day.body.fixings.find((f: { kind: string }) => f.kind === 'local');
    expect(local).toMatchObject({
      pair: 'BTCNGN',
      date: '2026-11-20',
      zone: 'Africa/Lagos',
      time: '2026-11-20T15:00:00+00:00',
      local_time: '2026-11-20T16:00:00+01:00',
      window: { start: '2026-11-20T14:00:00+00:00', end: '2026-11-20T15:00:00+00:00' },
    });
    // trades before 14:00 and after 15:00 are out; both venues' trades of the hour are in
    const expected = expectedVwap('BTCNGN', FIXING - 60 * MIN, FIXING);
    expect(JSON.parse(local.certificate.audit.signed_payload).rate).toBe(expected);
    expect(local.rate).toBe(Number(expected));
    expect(local.sources.map((s: { exchange: string }) => s.exchange)).toEqual(['luno', 'quidax']);
    const counted = (venue: string) => trades.filter((t) => t.venue === venue && t.pair === 'BTCNGN' && t.time >= FIXING - 60 * MIN && t.time < FIXING).length;
    expect(local.sources.map((s: { trades: number }) => s.trades)).toEqual([counted('luno'), counted('quidax')]);
    // the bundle holds exactly the hour's trades
    const bundle = await fetch(`${api.api.url}${local.bundle_url}`, { headers: { 'X-API-Key': api.keys.enterprise } });
    expect(bundle.status).toBe(200);
    const b = await bundle.json();
    expect(b.trades).toHaveLength(counted('luno') + counted('quidax'));
    expect(b.window).toEqual({ start: '2026-11-20T14:00:00+00:00', end: '2026-11-20T15:00:00+00:00' });
    // in the transparency log under a signed head, committing to the record and its bundle
    const { entry } = await inLog(api, local.fixing_id);
    const { customer: _customer, ...stored } = local.certificate;
    expect(entry).toMatchObject({ id: local.fixing_id, kind: 'fixing', pair: 'BTCNGN', time: local.time, rate: expected, bundle_sha256: local.certificate.bundle.sha256 });
    expect(entry.bundle_sha256).toBe(crypto.createHash('sha256').update(canonical(b)).digest('hex'));
    expect(entry.certificate_sha256).toBe(crypto.createHash('sha256').update(canonical(stored)).digest('hex'));
  });

  it('shows each tier its fields: rate, status and quality to all; verification to Builder; the signed record to Enterprise', async () => {
    const free = (await api.get('/v1/fixings?pair=BTCNGN&date=2026-11-20', api.keys.free)).body.fixings[0];
    expect(Object.keys(free).sort()).toEqual(['data_quality', 'date', 'fixing_id', 'kind', 'local_time', 'methodology_version', 'pair', 'published_at', 'rate', 'restated', 'status', 'time', 'window', 'zone']);
    const builder = (await api.get('/v1/fixings?pair=BTCNGN&date=2026-11-20', api.keys.builder)).body.fixings[0];
    expect(builder).toHaveProperty('confidence');
    expect(builder).toHaveProperty('sources');
    expect(builder).not.toHaveProperty('certificate');
    const refused = await api.get('/v1/fixings/BTCNGN/2026-11-20/local/bundle', api.keys.professional);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('tier_restricted');
  });

  it('never publishes a fixing twice, and answers bad input in the error shape', async () => {
    await w.minutes(pipeline, 3);
    const [n] = await w.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM fixings WHERE pair = 'BTCNGN' AND date = '2026-11-20' AND kind = 'local'`;
    expect(n!.n).toBe(1);
    await expect(w.db.sql`UPDATE fixings SET rate = rate * 2`).rejects.toThrow(/append-only/);
    for (const bad of ['/v1/fixings/BTCNGN/2026-13-01', '/v1/fixings/NOPE/2026-11-20', '/v1/fixings?date=yesterday', '/v1/fixings/BTCNGN/2026-11-20/noon/bundle']) {
      const res = await api.get(bad, api.keys.enterprise);
      expect(res.status, bad).toBe(400);
      expect(res.body.error, bad).toBe('validation_error');
    }
    const none = await api.get('/v1/fixings/BTCNGN/2026-11-10', api.keys.free);
    expect([none.status, none.body.error]).toEqual([404, 'not_found']);
  });
});
