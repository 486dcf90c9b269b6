// Candle queries for GET /v1/rates/historical: one query a page (sql/views/40_candles_with_synthetic.sql: candle_page).
// Keyset pagination on the bucket: a page is the first `limit` buckets strictly after the cursor;
// never OFFSET.
import type { Sql } from '../../lib/db/connect.js';

/**
 * A candle as the page query returns it: wire-ready timestamp, numbers as PostgreSQL's numeric text
 * (exact; the route rounds them to what the contract shows), its venues' spread.
 */
export interface PageRow {
  /** The bucket start, formatted as the contract writes timestamps. */
  t: string;
  open: string;
  high: string;
  low: string;
  close: string;
  /** sum(price x amount) and sum(amount): VWAP = pv / volume, computed exactly by the route */
  pv: string;
  volume: string;
  /** the USDT leg's sums in the bucket (1 and 1 for a USD coin) and USD/QUOTE in force: synthetic = usd_pv / usd_volume x units_per_usd */
  usd_pv: string | null;
  usd_volume: string | null;
  units_per_usd: string | null;
  /** How many venues traded in the bucket, and their VWAPs' lowest, highest and mean. */
  venues: number;
  venue_min: string | null;
  venue_max: string | null;
  venue_mean: string | null;
  /** The whole bucket is settled (certified; it changes only by late trades). */
  settled: boolean;
}

export interface CandlePageQuery {
  readonly pair: string;
  readonly interval: '5m' | '1h' | '1d';
  readonly from: Date; // inclusive
  readonly to: Date; // exclusive
  readonly after: Date | null;
  readonly limit: number;
}

/** Up to limit + 1 candles, so the caller knows whether there is another page. */
export function candlePage(sql: Sql, q: CandlePageQuery) {
  // strictly after the cursor: buckets start on whole minutes, so one millisecond later will do
  const from = q.after ? new Date(Math.max(q.after.getTime() + 1, q.from.getTime())) : q.from;
  return sql<PageRow[]>`SELECT * FROM candle_page(${q.interval}, ${q.pair}, ${from}, ${q.to}, ${q.limit + 1})`;
}
