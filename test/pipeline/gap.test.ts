// Quidax serves only its latest ~100 trades. When more than that happen between two polls (an
// outage of the venue, our backoff, a restart), the older ones cannot be fetched by anyone: the
// collector must say so, naming the span, instead of carrying on as if nothing were missing.
import type { Exchange } from 'ccxt';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { collect } from '../../pipeline/collect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { venueById, venues } from '../../pipeline/venues/index.js';
import { SimWorld } from '../support/pipeline.js';

const MIN = 60_000;
const w = new SimWorld({ seed: 5, start: Date.UTC(2026, 10, 20, 9, 0, 0), historyMs: 10 * MIN });

describe('trades a venue no longer serves', () => {
  it('are reported in the log with the span lost, and only then', async () => {
    const lines: { msg: string; venue?: string; pair?: string; from?: string; to?: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const p = new Pipeline({ config: loadConfig({ MARKET: 'simulated', SIM_URL: w.sim.url }), log, sql: w.db.sql, venues: [venueById('quidax')!], unpaced: true, now: w.now, initialLookbackMs: 5 * MIN, retryDelaysMs: [5], requestTimeoutMs: 400 });
    const lost = () => lines.filter((l) => l.msg.startsWith('trades lost') && l.pair === 'USDTNGN');
    try {
      await w.minutes(p, 3);
      expect(lost()).toEqual([]); // polled every minute: every trade still in the venue's window
      w.sim.setFault('quidax', { kind: 'server_error' });
      const outage = w.clock;
      await w.minutes(p, 45);
      w.sim.setFault('quidax', null);
      await w.minutes(p, 12);
      const stored = new Set((await w.db.sql<{ trade_id: string }[]>`SELECT trade_id FROM trades WHERE exchange = 'quidax' AND pair = 'USDTNGN'`).map((r) => r.trade_id));
      const missing = w.sim.served('quidax', 'USDTNGN').filter((t) => t.time >= outage && !stored.has(t.id));
      expect(missing.length).toBeGreaterThan(0); // the venue's window is shorter than the outage
      const [report] = lost();
      expect(lost()).toHaveLength(1);
      // the span reported holds every trade that is missing
      for (const t of missing) {
        expect(t.time).toBeGreaterThan(new Date(report!.from!).getTime());
        expect(t.time).toBeLessThan(new Date(report!.to!).getTime());
      }
    } finally {
      await p.stop();
    }
  });

  it('are never reported for venues polled as usual', async () => {
    const lines: { msg: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const p = new Pipeline({ config: loadConfig({ MARKET: 'simulated', SIM_URL: w.sim.url }), log, sql: w.db.sql, venues, unpaced: true, now: w.now, initialLookbackMs: 5 * MIN, retryDelaysMs: [5], requestTimeoutMs: 400 });
    try {
      for (let i = 0; i < 5; i++) {
        w.clock += MIN;
        expect((await p.runTradeCycle()).errors).toEqual([]);
      }
    } finally {
      await p.stop();
    }
    expect(lines.filter((l) => l.msg.startsWith('trades lost'))).toEqual([]);
  });
});

describe('a venue whose pages do not advance', () => {
  it('ends a backfill with an error naming it, instead of asking a millisecond further forever', async () => {
    // it ignores `since` and always answers the same full page, from before the day asked for
    const day = Date.UTC(2026, 10, 18);
    const page = Array.from({ length: 100 }, (_, i) => ({ id: String(5_000 + i), timestamp: day - 86_400_000 + i * 1_000, price: 100, amount: 1, side: 'buy' }));
    let calls = 0;
    const exchange = { fetchTrades: async () => (calls++, page) } as unknown as Exchange;
    const venue = { ...venueById('luno')!, pageSize: 100 };
    const walk = collect(w.db.sql, { venue, exchange, symbol: 'BTC/NGN', pair: 'BTCNGN' }, (work) => work(), { startAt: day, until: day + 86_399_999, maxPages: Number.POSITIVE_INFINITY, trackWatermark: false });
    await expect(walk).rejects.toThrow(/luno BTCNGN: 20 full pages in a row .* do not advance/);
    expect(calls).toBe(20);
  });
});
