// A trade that arrives for a time raw-trade retention no longer keeps (TRADES_RETENTION_DAYS) is
// not stored: its chunk's other trades are gone, and the candles refreshed over it would be rebuilt
// from it alone, losing what they were built from. It is counted and said; the candle stands.
import type { Exchange, Trade } from 'ccxt';
import { describe, expect, it } from 'vitest';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { collect } from '../../pipeline/collect.js';
import { insertTrades } from '../../pipeline/store.js';
import { venueById } from '../../pipeline/venues/index.js';
import { openTestDatabase } from '../support/db.js';

const DAY = 86_400_000;

describe('trades older than retention keeps', () => {
  it('are not stored, and the candles built before stay as they were', async () => {
    const db = await openTestDatabase();
    try {
      const now = Date.now();
      const old = Math.floor((now - 10 * DAY) / 300_000) * 300_000; // a bucket ten days back
      await insertTrades(db.sql, [1, 2, 3].map((i) => ({ time: new Date(old + i * 1000), exchange: 'luno', pair: 'BTCNGN', tradeId: `k${i}`, price: '100000000', amount: '1', side: 'buy' as const })));
      await refreshAggregates(db.sql);
      const candle = async () => (await db.sql<{ trades: number; vwap: string }[]>`SELECT trades::int, vwap::text FROM candles WHERE interval = '5m' AND pair = 'BTCNGN' AND bucket = ${new Date(old)}`)[0];
      const before = await candle();
      expect(before!.trades).toBe(3);
      // the venue now serves a trade of that bucket (a late one), and one of today
      const served: Partial<Trade>[] = [
        { id: 'late', timestamp: old + 4000, price: '200000000' as never, amount: '1' as never, side: 'buy' },
        { id: 'today', timestamp: now - 60_000, price: '100000000' as never, amount: '1' as never, side: 'buy' },
      ];
      const exchange = { fetchTrades: async () => served } as unknown as Exchange;
      const venue = venueById('luno')!;
      const result = await collect(db.sql, { venue, exchange, symbol: 'BTC/NGN', pair: 'BTCNGN' }, (w) => w(), {
        startAt: old,
        keepFrom: () => new Date(now - 7 * DAY), // TRADES_RETENTION_DAYS=7
        trackWatermark: false,
      });
      expect(result.expired).toBe(1);
      expect(result.inserted).toBe(1);
      const stored = await db.sql<{ trade_id: string }[]>`SELECT trade_id FROM trades WHERE pair = 'BTCNGN' ORDER BY time`;
      expect(stored.map((r) => r.trade_id)).toEqual(['k1', 'k2', 'k3', 'today']);
      await refreshAggregates(db.sql);
      expect(await candle()).toEqual(before);
    } finally {
      await db.close();
    }
  });
});
