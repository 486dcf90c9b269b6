// Certificate queries: one certificate per published 5-minute VWAP of a pair, for closed buckets
// only (a bucket still open would change under its signature).
import type { Sql } from '../../lib/db/connect.js';

export interface VenueBucketRow {
  bucket: Date;
  exchange: string;
  pv: string;
  volume: string;
  trades: string;
}

/** Each venue's 5-minute candle for the newest `limit` closed buckets in [from, to), newest first. */
export function venueBuckets(sql: Sql, pair: string, from: Date, to: Date, limit: number) {
  return sql<VenueBucketRow[]>`
    WITH buckets AS (
      SELECT DISTINCT bucket FROM candles_5m_by_exchange
      WHERE pair = ${pair} AND bucket >= ${from} AND bucket < ${to} AND bucket <= now() - INTERVAL '5 minutes'
      ORDER BY bucket DESC
      LIMIT ${limit}
    )
    SELECT e.bucket, e.exchange, e.pv, e.volume, e.trades
    FROM candles_5m_by_exchange e JOIN buckets USING (bucket)
    WHERE e.pair = ${pair}
    ORDER BY e.bucket DESC, e.exchange`;
}

/** One closed bucket: each venue's candle and the pair's synthetic price then. */
export async function certificateAt(sql: Sql, pair: string, bucket: Date) {
  const venues = await sql<VenueBucketRow[]>`
    SELECT bucket, exchange, pv, volume, trades FROM candles_5m_by_exchange
    WHERE pair = ${pair} AND bucket = ${bucket} AND bucket <= now() - INTERVAL '5 minutes'
    ORDER BY exchange`;
  if (venues.length === 0) return undefined;
  const [s] = await sql<{ synthetic_price: string | null }[]>`
    SELECT synthetic_price FROM candles_with_synthetic('5m', ${pair}, ${bucket}, ${new Date(bucket.getTime() + 300_000)})`;
  return { venues, syntheticPrice: s?.synthetic_price ?? null };
}
