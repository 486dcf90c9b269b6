// Candle queries for GET /v1/rates/historical (and certificates). Keyset pagination on the
// bucket: a page is the first `limit` buckets strictly after the cursor; never OFFSET.
import type { Sql } from '../../lib/db/connect.js';

export interface CandleRow {
  bucket: Date;
  pair: string;
  quote: string;
  open: string;
  high: string;
  low: string;
  close: string;
  vwap: string | null;
  volume: string;
  synthetic_price: string | null;
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
  return sql<CandleRow[]>`
    SELECT bucket, pair, quote, open, high, low, close, vwap, volume, synthetic_price
    FROM candles_with_synthetic(${q.interval}, ${q.pair}, ${from}, ${q.to}, ${q.limit + 1})`;
}

export interface VenuePriceRow {
  bucket: Date;
  exchange: string;
  vwap: string;
}

/** Each venue's VWAP per bucket of `width` within [from, to]: sources_count and dispersion. */
export function venuePrices(sql: Sql, pair: string, width: string, from: Date, to: Date) {
  return sql<VenuePriceRow[]>`
    SELECT time_bucket(${width}::interval, bucket) AS bucket, exchange, sum(pv) / sum(volume) AS vwap
    FROM candles_5m_by_exchange
    WHERE pair = ${pair} AND bucket >= ${from} AND bucket < ${to}
    GROUP BY 1, exchange`;
}
