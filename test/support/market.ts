// Seeded trades and FX observations for SQL and API tests: several venues, pairs and days, some
// trades exactly on bucket edges. Trade times are unique per pair, so open/close are well defined.
import { prng } from '../../sim/rng.js';
import type { FxRow, TradeRow } from '../../pipeline/store.js';

/** The simulator's seeded PRNG (mulberry32): reproducible test data. */
export const rng = prng;

export const USD_LEVEL: Record<string, number> = { BTC: 90_000, ETH: 3_200, XRP: 2.2, SOL: 180, USDT: 1, USDC: 1 };
export const FX_LEVEL: Record<string, number> = { NGN: 1530, ZAR: 18.2, KES: 129.3, GHS: 15.4, UGX: 3650 };

export interface MarketSpec {
  readonly seed: number;
  readonly start: Date;
  readonly hours: number;
  /** pair -> venues trading it */
  readonly listings: Record<string, readonly string[]>;
  /** average trades per venue, pair and hour */
  readonly tradesPerHour?: number;
}

function round(v: number, digits: number): string {
  return v.toFixed(digits);
}

export function generateTrades(spec: MarketSpec): TradeRow[] {
  const random = rng(spec.seed);
  const trades: TradeRow[] = [];
  const usedTimes = new Set<string>();
  const perHour = spec.tradesPerHour ?? 12;
  const span = spec.hours * 3_600_000;
  for (const [pair, venues] of Object.entries(spec.listings)) {
    const quote = pair.endsWith('USDT') ? 'USDT' : pair.slice(-3);
    const base = pair.slice(0, pair.length - quote.length);
    const level = USD_LEVEL[base]! * (quote === 'USDT' ? 1 : FX_LEVEL[quote]! * 1.03);
    for (const venue of venues) {
      let id = 1000;
      const n = Math.round(perHour * spec.hours);
      for (let i = 0; i < n; i++) {
        let offset = Math.floor(random() * span);
        // every tenth trade sits exactly on a 5-minute edge (and so on hour and day edges too)
        if (i % 10 === 0) offset = Math.floor(offset / 300_000) * 300_000;
        while (usedTimes.has(`${pair}|${offset}`)) offset += 1;
        usedTimes.add(`${pair}|${offset}`);
        const price = level * (1 + (random() - 0.5) * 0.02);
        trades.push({
          time: new Date(spec.start.getTime() + offset),
          exchange: venue,
          pair,
          tradeId: String(id++),
          price: round(price, level > 1000 ? 2 : 6),
          amount: round(0.0001 + random() * (base === 'BTC' ? 0.5 : 500), 8),
          side: random() < 0.5 ? 'buy' : 'sell',
        });
      }
    }
  }
  return trades.sort((a, b) => a.time.getTime() - b.time.getTime());
}

/** Hourly coinbase observations and daily exchangerate_api ones, slightly apart. */
export function generateFx(start: Date, hours: number, seed = 7): FxRow[] {
  const random = rng(seed);
  const rows: FxRow[] = [];
  for (let h = -2; h <= hours; h++) {
    const time = new Date(start.getTime() + h * 3_600_000);
    for (const [currency, level] of Object.entries(FX_LEVEL)) {
      rows.push({ time, currency, unitsPerUsd: Number((level * (1 + (random() - 0.5) * 0.004)).toFixed(4)), source: 'coinbase', sourceUpdatedAt: time });
      if (h % 24 === -2 || h % 24 === 0) {
        const day = new Date(Math.floor(time.getTime() / 86_400_000) * 86_400_000);
        rows.push({ time, currency, unitsPerUsd: Number((level * 1.001).toFixed(4)), source: 'exchangerate_api', sourceUpdatedAt: day });
      }
    }
  }
  return rows;
}
