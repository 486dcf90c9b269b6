// Against the REAL venues and FX APIs: off by default (vitest.config.ts excludes *.live.test.ts;
// this machine has no internet). Run where there is: LIVE_TESTS=1 npx vitest run venues.live
// It checks that each adapter still speaks its venue's current API: markets load, the pairs
// afrates needs are found, and recent trades parse.
import { describe, expect, it } from 'vitest';
import { fxSources } from '../../../pipeline/fx/index.js';
import { venues } from '../../../pipeline/venues/index.js';

const WANTED: Record<string, string> = { luno: 'BTC/NGN', binance: 'BTC/USDT', valr: 'BTC/ZAR', quidax: 'BTC/NGN' };

describe.each(venues.map((v) => [v.id, v] as const))('%s (live)', (id, venue) => {
  it('loads markets and parses recent trades', async () => {
    const exchange = venue.create({ timeoutMs: 15_000 });
    await exchange.loadMarkets();
    const symbol = WANTED[id]!;
    expect(exchange.markets?.[symbol], `${id} lists ${symbol}`).toBeDefined();
    const trades = await exchange.fetchTrades(symbol, Date.now() - 3_600_000, venue.pageSize);
    for (const t of trades) {
      expect(t.id).toBeTruthy();
      expect(t.price).toBeGreaterThan(0);
      expect(t.amount).toBeGreaterThan(0);
      expect(['buy', 'sell']).toContain(t.side);
    }
  }, 60_000);
});

describe.each(fxSources.map((s) => [s.id, s] as const))('%s (live)', (_, source) => {
  it('quotes the five currencies per USD', async () => {
    const obs = await source.fetch({ timeoutMs: 15_000 });
    expect(obs.missing).toEqual([]);
    const ngn = obs.rates.find((r) => r.currency === 'NGN')!;
    expect(Number(ngn.unitsPerUsd)).toBeGreaterThan(100);
  }, 60_000);
});
