// Queries of the rate routes that read one function each: end-of-day snapshots, premium series,
// composite indices, the spread's inputs, the pairs and their history, the collector's state.
import type { Sql } from '../../lib/db/connect.js';

/** A UTC day's snapshot (sql/functions/60_eod.sql) and whether its last bucket has settled. */
export async function eodOf(sql: Sql, pair: string, day: string) {
  const [row] = await sql<{ date: Date; pair: string; open: string; high: string; low: string; close: string; total_volume: string; pv: string; settled: boolean }[]>`
    SELECT e.*, s.settled_through >= (${day}::date + 1)::timestamp AT TIME ZONE 'UTC' AS settled
    FROM eod(${pair}, ${day}::date) e LEFT JOIN pair_settlement s ON s.pair = e.pair`;
  return row;
}

export interface SeriesRow {
  bucket: Date;
  avg_premium_pct: string;
  max_premium_pct: string;
  min_premium_pct: string;
  avg_vwap: string;
  avg_synthetic: string;
  data_points: string;
}

/** The premium of a pair over [from, to) per interval (sql/functions/50_premium_series.sql). */
export function premiumSeries(sql: Sql, pair: string, interval: string, from: Date, to: Date) {
  return sql<SeriesRow[]>`SELECT * FROM premium_series(${pair}, ${interval}, ${from}, ${to})`;
}

export interface IndexRow {
  value: string | null;
  components: Record<string, { price: number | string; weight: number | string }> | null;
}

/** An index's value at `at` (sql/functions/90_indices.sql). */
export async function indexAt(sql: Sql, name: 'MXNCI' | 'ACLI', at: Date): Promise<IndexRow | undefined> {
  const [row] = name === 'MXNCI' ? await sql<IndexRow[]>`SELECT * FROM index_mxnci(${at})` : await sql<IndexRow[]>`SELECT * FROM index_acli(${at})`;
  return row;
}

/** The spread's inputs (sql/functions/70_spread_inputs.sql) and the synthetic price of their bucket. */
export async function spreadNow(sql: Sql, pair: string) {
  const rows = await sql<{ exchange: string | null; bucket: Date; bid: string; ask: string }[]>`
    SELECT exchange, bucket, bid, ask FROM spread_inputs(${pair}, now())`;
  const overall = rows.find((r) => r.exchange === null);
  if (!overall) return null;
  // the synthetic price of that same bucket, as historical and certificates have it: the one of
  // now would set an hours-old local price of an illiquid pair against today's market
  const [syn] = await sql<{ synthetic_price: string | null }[]>`
    SELECT synthetic_price FROM candles_with_synthetic('5m', ${pair}, ${overall.bucket}, ${new Date(overall.bucket.getTime() + 300_000)})`;
  return { rows, overall, synthetic: syn?.synthetic_price ?? null };
}

/**
 * Every public pair with its venues and history. The venues as JSON, not a SQL array (lib/db/pool.ts
 * says why).
 */
export function pairsWithHistory(sql: Sql) {
  return sql<{ pair: string; exchanges: string[] | null; first_day: Date | null; last_trade_at: Date | null }[]>`
    SELECT p.pair,
           (SELECT json_agg(DISTINCT m.exchange ORDER BY m.exchange) FROM venue_markets m WHERE m.pair = p.pair) AS exchanges,
           h.first_day, h.last_trade_at
    FROM public_pairs p
    LEFT JOIN LATERAL (
      SELECT min(bucket) AS first_day, max(last_trade_at) AS last_trade_at
      FROM candles WHERE interval = '1d' AND pair = p.pair
    ) h ON true
    ORDER BY p.pair`;
}

export interface CollectorState {
  trades_at: Date | null;
  fx_at: Date | null;
  market: 'real' | 'simulated' | null;
  newest_trade: Date | null;
  newest_fx: Date | null;
  /** Which processes collect and which one publishes (api/status.ts presentPipeline). */
  pipeline: PipelineState;
}

/** collector_state.pipeline: the processes seen in the last 30 seconds and the publisher's lease (times as JSON text). */
export interface PipelineState {
  publisher: { host: string; pid: number; since: string } | null;
  processes: { host: string; pid: number; role: 'all' | 'pipeline'; venues: string[]; last_seen: string; publisher: boolean }[];
}

/** What health reports of collection (sql/views/95_collector_state.sql). */
export async function collectorState(sql: Sql): Promise<CollectorState | undefined> {
  const [row] = await sql<CollectorState[]>`SELECT * FROM collector_state`;
  return row;
}
