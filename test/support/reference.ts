// An independent computation, in plain TypeScript, of what the SQL aggregates must give for the
// same trades: the yardstick the SQL tests compare against. Deliberately naive (group, sort, sum).
import type { FxRow, TradeRow } from '../../pipeline/store.js';

export const WIDTH = { '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type Interval = keyof typeof WIDTH;

export interface RefCandle {
  bucket: number;
  pair: string;
  exchange?: string;
  open: number;
  high: number;
  low: number;
  close: number;
  pv: number;
  volume: number;
  trades: number;
  vwap: number;
}

const num = (v: string | number) => Number(v);

export function candles(trades: readonly TradeRow[], interval: Interval, byExchange = false): RefCandle[] {
  const width = WIDTH[interval];
  const groups = new Map<string, TradeRow[]>();
  for (const t of trades) {
    const bucket = Math.floor(t.time.getTime() / width) * width;
    const key = `${bucket}|${t.pair}|${byExchange ? t.exchange : ''}`;
    const list = groups.get(key) ?? [];
    list.push(t);
    groups.set(key, list);
  }
  const out: RefCandle[] = [];
  for (const [key, list] of groups) {
    const [bucket, pair, exchange] = key.split('|') as [string, string, string];
    list.sort((a, b) => a.time.getTime() - b.time.getTime());
    const prices = list.map((t) => num(t.price));
    const pv = list.reduce((s, t) => s + num(t.price) * num(t.amount), 0);
    const volume = list.reduce((s, t) => s + num(t.amount), 0);
    out.push({
      bucket: Number(bucket),
      pair,
      ...(byExchange ? { exchange } : {}),
      open: prices[0]!,
      high: Math.max(...prices),
      low: Math.min(...prices),
      close: prices[prices.length - 1]!,
      pv,
      volume,
      trades: list.length,
      vwap: pv / volume,
    });
  }
  return out.sort((a, b) => a.bucket - b.bucket || a.pair.localeCompare(b.pair) || (a.exchange ?? '').localeCompare(b.exchange ?? ''));
}

/** USD/currency at `at`: median of each source's newest observation, if updated within 36 h. */
export function fxAt(fx: readonly FxRow[], currency: string, at: number): number | null {
  const newest = new Map<string, FxRow>();
  let latest: FxRow | undefined;
  for (const r of fx) {
    if (r.currency !== currency || r.time.getTime() > at || r.time.getTime() <= at - 30 * WIDTH['1d']) continue;
    const seen = newest.get(r.source);
    if (!seen || r.time > seen.time) newest.set(r.source, r);
    if (!latest || r.time > latest.time) latest = r;
  }
  const fresh = [...newest.values()].filter((r) => r.sourceUpdatedAt.getTime() >= at - 36 * WIDTH['1h']).map((r) => Number(r.unitsPerUsd));
  if (fresh.length === 0) return latest ? Number(latest.unitsPerUsd) : null;
  fresh.sort((a, b) => a - b);
  const mid = Math.floor(fresh.length / 2);
  return fresh.length % 2 ? fresh[mid]! : (fresh[mid - 1]! + fresh[mid]!) / 2;
}

export function splitPair(pair: string): { base: string; quote: string } {
  const quote = pair.endsWith('USDT') ? 'USDT' : pair.slice(-3);
  return { base: pair.slice(0, pair.length - quote.length), quote };
}

/** Synthetic price of a candle: VWAP(BASE/USDT, same bucket) x USD/QUOTE at the start of its hour. */
export function synthetic(all: readonly RefCandle[], fx: readonly FxRow[], c: RefCandle): number | null {
  const { base, quote } = splitPair(c.pair);
  const rate = fxAt(fx, quote, Math.floor(c.bucket / WIDTH['1h']) * WIDTH['1h']);
  if (rate === null) return null;
  if (base === 'USDT' || base === 'USDC') return rate;
  const usdt = all.find((u) => u.pair === `${base}USDT` && u.bucket === c.bucket);
  return usdt ? usdt.vwap * rate : null;
}

export function closeTo(actual: number | string | null, expected: number | null, rel = 1e-9): boolean {
  if (actual === null || expected === null) return actual === expected;
  const a = Number(actual);
  return Math.abs(a - expected) <= rel * Math.max(Math.abs(expected), 1e-12);
}
