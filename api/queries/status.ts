// Status queries: how each pair stands (settlement, late trades), the collector's recent cycles and
// its uptime. A cycle "worked" by one rule, cycle_worked() (sql/functions/94_cycle_worked.sql).
import type { Sql } from '../../lib/db/connect.js';
import type { PipelineState } from './rates.js';

/** Which processes collect and which one publishes (collector_state.pipeline). */
export async function pipelineState(sql: Sql): Promise<PipelineState | undefined> {
  const [row] = await sql<{ pipeline: PipelineState }[]>`SELECT pipeline FROM collector_state`;
  return row?.pipeline;
}

/** Each public pair's settled_through and the late trades noticed in the last 24 hours. */
export function settlementByPair(sql: Sql) {
  return sql<{ pair: string; settled_through: Date | null; late: number }[]>`
    SELECT p.pair, s.settled_through,
           (SELECT coalesce(sum(l.trades), 0)::int FROM late_trades l WHERE l.pair = p.pair AND l.noticed_at > now() - INTERVAL '24 hours') AS late
    FROM public_pairs p LEFT JOIN pair_settlement s USING (pair)`;
}

export interface CycleRow {
  started_at: Date;
  finished_at: Date;
  rows_by_source: Record<string, number>;
  errors: { source: string }[];
  worked: boolean;
}

/** The newest `limit` trade cycles, newest first. */
export function recentCycles(sql: Sql, limit: number) {
  return sql<CycleRow[]>`
    SELECT started_at, finished_at, rows_by_source, errors, cycle_worked(rows_by_source, errors) AS worked
    FROM ingest_cycles
    WHERE kind = 'trades' ORDER BY id DESC LIMIT ${limit}`;
}

/**
 * The collector's uptime: completed 5-minute slots (the contract's collection interval) in which a
 * trade cycle that worked finished, over 24 hours and 7 days, counted from the window's start or
 * the first recorded cycle, whichever is later.
 */
export async function uptime(sql: Sql): Promise<{ slots_24h: number; up_24h: number; slots_7d: number; up_7d: number } | undefined> {
  const [row] = await sql<{ slots_24h: number; up_24h: number; slots_7d: number; up_7d: number }[]>`
    WITH first AS (
      SELECT greatest(date_bin(INTERVAL '5 minutes', now() - INTERVAL '7 days', TIMESTAMPTZ '2000-01-01'),
                      date_bin(INTERVAL '5 minutes', min(started_at), TIMESTAMPTZ '2000-01-01')) AS since
      FROM ingest_cycles WHERE kind = 'trades'
    ), slots AS (
      SELECT generate_series(first.since, now() - INTERVAL '5 minutes', INTERVAL '5 minutes') AS start FROM first
    ), working AS (
      SELECT DISTINCT date_bin(INTERVAL '5 minutes', c.finished_at, TIMESTAMPTZ '2000-01-01') AS start
      FROM ingest_cycles c
      WHERE c.kind = 'trades' AND c.finished_at > now() - INTERVAL '7 days 5 minutes' AND cycle_worked(c.rows_by_source, c.errors)
    )
    SELECT count(*) FILTER (WHERE s.start >= now() - INTERVAL '24 hours')::int AS slots_24h,
           count(w.start) FILTER (WHERE s.start >= now() - INTERVAL '24 hours')::int AS up_24h,
           count(*)::int AS slots_7d,
           count(w.start)::int AS up_7d
    FROM slots s LEFT JOIN working w ON w.start = s.start`;
  return row;
}
