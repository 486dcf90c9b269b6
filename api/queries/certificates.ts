// Certificate queries: one certificate per published 5-minute VWAP of a pair.
import type { Sql } from '../../lib/db/connect.js';

export function certificateList(sql: Sql, pair: string, from: Date, to: Date, limit: number) {
  return sql<{ bucket: Date; vwap: string }[]>`
    SELECT bucket, vwap FROM candles
    WHERE interval = '5m' AND pair = ${pair} AND bucket >= ${from} AND bucket < ${to}
    ORDER BY bucket DESC
    LIMIT ${limit}`;
}

export interface CertificateRow {
  bucket: Date;
  vwap: string;
  volume: string;
  trades: string;
  synthetic_price: string | null;
  sources: string[];
  source_prices: string[];
}

export async function certificateAt(sql: Sql, pair: string, bucket: Date): Promise<CertificateRow | undefined> {
  const [row] = await sql<CertificateRow[]>`
    SELECT c.bucket, c.vwap, c.volume, c.trades, c.synthetic_price,
           array_agg(e.exchange ORDER BY e.exchange) AS sources,
           array_agg((e.pv / e.volume)::text ORDER BY e.exchange) AS source_prices
    FROM candles_with_synthetic c
    JOIN candles_5m_by_exchange e ON e.pair = c.pair AND e.bucket = c.bucket
    WHERE c.interval = '5m' AND c.pair = ${pair} AND c.bucket = ${bucket}
    GROUP BY c.bucket, c.vwap, c.volume, c.trades, c.synthetic_price`;
  return row;
}
