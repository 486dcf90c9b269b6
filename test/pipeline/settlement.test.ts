// Settlement and certificates through the real pipeline (ccxt against the simulated market) and the
// real API over HTTP: certificates are issued once their bucket settles and never change; when a
// venue falls behind, buckets settle after the lag without it, and its trades that arrive later
// correct the candles, are counted (late_trades, GET /v1/status), and leave the certificates alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../../pipeline/runner.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { SimWorld } from '../support/pipeline.js';
import * as ref from '../support/reference.js';

const MIN = 60_000;
const BUCKET = 5 * MIN;
const LAG_SECONDS = 600;
const w = new SimWorld({ seed: 9, start: Date.UTC(2026, 10, 20, 9, 0, 0), historyMs: 20 * MIN });
let api: TestApi;
let pipeline: Pipeline;

beforeAll(async () => {
  api = await startTestApi({ db: w.db });
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: String(LAG_SECONDS) } });
});
afterAll(async () => {
  await api?.close();
});

const minutes = (n: number) => w.minutes(pipeline, n);

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The list, and every listed certificate's bytes as served. */
async function certificates(pair: string): Promise<Map<string, string>> {
  const list = await api.get(`/v1/certificates/${pair}?start=${day(w.clock - 86_400_000)}&end=${day(w.clock)}&limit=1000`, api.keys.enterprise);
  expect(list.status).toBe(200);
  const out = new Map<string, string>();
  for (const c of list.body.certificates as { timestamp: string; certificate_url: string }[]) {
    const res = await fetch(`${api.api.url}${c.certificate_url}`, { headers: { 'X-API-Key': api.keys.enterprise } });
    expect(res.status).toBe(200);
    out.set(c.timestamp, await res.text());
  }
  return out;
}

/** The BTCNGN 5-minute candle now in the database, beside what the venues have served. */
async function candleVsServed(bucket: number) {
  const served = ['luno', 'quidax'].flatMap((v) =>
    w.sim.served(v, 'BTCNGN').map((t) => ({ time: new Date(t.time), exchange: v, pair: 'BTCNGN', tradeId: t.id, price: t.price, amount: t.amount, side: t.side })),
  );
  const expected = ref.candles(served, '5m').find((c) => c.bucket === bucket)!;
  const [row] = await w.db.sql<{ vwap: string; trades: string }[]>`SELECT vwap, trades FROM candles WHERE interval = '5m' AND pair = 'BTCNGN' AND bucket = ${new Date(bucket)}`;
  return { row: row!, expected };
}

describe('settlement', () => {
  it('certifies each bucket once every venue has collected past its end, and never before', async () => {
    await minutes(12);
    const [settled] = await w.db.sql<{ settled_through: Date }[]>`SELECT settled_through FROM pair_settlement WHERE pair = 'BTCNGN'`;
    // every venue is caught up: the bucket that ended before the last cycle is settled, not the open one
    expect(settled!.settled_through.getTime()).toBe(Math.floor((w.clock - 5_000) / BUCKET) * BUCKET);
    const certs = await certificates('BTCNGN');
    expect(certs.size).toBeGreaterThan(0);
    for (const [time, text] of certs) {
      expect(Date.parse(time.replace('+00:00', 'Z')) + BUCKET).toBeLessThanOrEqual(settled!.settled_through.getTime());
      const body = JSON.parse(text);
      expect(body.audit.signed_payload).toContain('"market":"simulated"');
      expect(body.data.sources.sort()).toEqual(['luno', 'quidax']);
    }
  });

  it('settles by the lag when a venue falls behind, and keeps certificates byte for byte when its trades arrive late', async () => {
    const before = await certificates('BTCNGN');
    w.sim.setFault('quidax', { kind: 'server_error' });
    const outageStart = w.clock;
    await minutes(LAG_SECONDS / 60 + 12);
    // buckets in the outage settled after the lag, certified from luno alone
    const during = await certificates('BTCNGN');
    const lagOnly = [...during.entries()].filter(([t]) => Date.parse(t.replace('+00:00', 'Z')) >= outageStart);
    expect(lagOnly.length).toBeGreaterThan(0);
    for (const [, text] of lagOnly) expect(JSON.parse(text).data.sources).toEqual(['luno']);
    for (const [t, text] of before) expect(during.get(t), t).toBe(text);

    // quidax is back (after its backoff pause): its trades for those settled buckets arrive now
    w.sim.setFault('quidax', null);
    for (let i = 0; i < 12; i++) {
      await minutes(1);
      const [h] = await w.db.sql<{ failures: number }[]>`SELECT max(consecutive_failures) AS failures FROM venue_health WHERE exchange = 'quidax'`;
      if (h!.failures === 0) break;
    }
    const after = await certificates('BTCNGN');
    for (const [t, text] of during) expect(after.get(t), `certificate ${t} changed`).toBe(text);

    // ... correcting the candles (now luno + quidax, as served), not the certificates (luno only)
    let corrected = 0;
    for (const [t, text] of lagOnly) {
      const bucket = Date.parse(t.replace('+00:00', 'Z'));
      const { row, expected } = await candleVsServed(bucket);
      expect(Number(row.trades)).toBe(expected.trades);
      expect(ref.closeTo(row.vwap, expected.vwap)).toBe(true);
      if (!ref.closeTo(row.vwap, JSON.parse(text).data.rate, 1e-9)) corrected++;
    }
    expect(corrected).toBeGreaterThan(0);

    // ... and counted, for operators
    const [late] = await w.db.sql<{ n: number }[]>`SELECT coalesce(sum(trades), 0)::int AS n FROM late_trades WHERE exchange = 'quidax' AND pair = 'BTCNGN'`;
    expect(late!.n).toBeGreaterThan(0);
    const status = await api.get('/v1/status', api.keys.free);
    expect(status.body.pairs.BTCNGN.late_trades_24h).toBe(late!.n);
    expect(status.body.pairs.BTCNGN.settled_through).toMatch(/\+00:00$/);
  });

  it('marks a candle settled only once every venue has reported past it: the one served before is the one that changes', async () => {
    const candleAt = async (bucket: number) => {
      const res = await api.get(`/v1/rates/historical?pair=BTCNGN&interval=5m&start=${day(bucket)}&end=${day(bucket)}&limit=500`, api.keys.builder);
      expect(res.status).toBe(200);
      return (res.body.data as { time: string; vwap: number; total_volume: number; settled: boolean }[]).find((c) => Date.parse(c.time.replace('+00:00', 'Z')) === bucket);
    };
    // quidax fails from a bucket's start until luno has reported past its end
    while (w.clock % BUCKET !== 0) await minutes(1);
    const bucket = w.clock;
    w.sim.setFault('quidax', { kind: 'server_error' });
    await minutes(6);
    const early = await candleAt(bucket);
    expect(early, 'served once luno reported past its end').toBeDefined();
    expect(early!.settled).toBe(false);
    w.sim.setFault('quidax', null);
    for (let i = 0; i < 12 && !(await candleAt(bucket))!.settled; i++) await minutes(1); // past quidax's backoff
    const settled = (await candleAt(bucket))!;
    expect(settled.settled).toBe(true);
    expect(settled.total_volume).toBeGreaterThan(early!.total_volume); // quidax's trades came in after
    // certified as settled: the certificate and the settled candle agree
    const certs = await certificates('BTCNGN');
    const cert = JSON.parse(certs.get(new Date(bucket).toISOString().replace('.000Z', '+00:00'))!);
    expect(ref.closeTo(cert.data.rate, settled.vwap, 1e-9)).toBe(true);
    // every candle of the day says so the same way: settled exactly up to settled_through
    const [{ t } = { t: new Date(0) }] = await w.db.sql<{ t: Date }[]>`SELECT settled_through AS t FROM pair_settlement WHERE pair = 'BTCNGN'`;
    for (const interval of ['5m', '1h'] as const) {
      const width = interval === '5m' ? BUCKET : 60 * MIN;
      const res = await api.get(`/v1/rates/historical?pair=BTCNGN&interval=${interval}&start=${day(w.clock)}&end=${day(w.clock)}&limit=500`, api.keys.builder);
      const data = res.body.data as { time: string; settled: boolean }[];
      expect(data.some((c) => !c.settled), interval).toBe(true); // the open bucket at least
      for (const c of data) expect(c.settled, `${interval} ${c.time}`).toBe(Date.parse(c.time.replace('+00:00', 'Z')) + width <= t.getTime());
    }
  });

  it('refuses to change or delete an issued certificate, even from SQL', async () => {
    await expect(w.db.sql`UPDATE certificates SET rate = rate * 2`).rejects.toThrow(/append-only/);
    await expect(w.db.sql`DELETE FROM certificates`).rejects.toThrow(/append-only/);
  });
});
