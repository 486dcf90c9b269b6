// Keeps every continuous aggregate materialised up to its newest closed bucket. The pipeline is the
// one owner of refreshes, on the embedded database and on a server alike (no TimescaleDB refresh
// policy; docs/decisions.md), and this is the one place that calls refresh_continuous_aggregate.
//
// Why a durable frontier: TimescaleDB materialises a window and moves its watermark to the window's
// end; real-time aggregation serves only what lies past the watermark. A bucket left out of every
// window (all its trades arrived while it was open, and the cycle that closed it brought none of
// its trades) would fall behind the watermark unmaterialised, and vanish. So each aggregate keeps
// `refreshed_to` in aggregate_frontier, and every pass refreshes [frontier, newest closed bucket):
// no closed bucket is ever skipped, whatever a cycle brought. Trades stored below a frontier (late
// trades, backfills) leave a row in refresh_requests (written by pipeline/store.ts before the
// insert), and the pass starts each aggregate at the earliest such request instead. TimescaleDB
// itself only re-materialises the invalidated parts of a window, so a wide window costs little.
import type postgres from 'postgres';
import type { Sql } from './pool.js';

const MS = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
/**
 * Calls of refresh_continuous_aggregate per aggregate and pass. A hierarchical aggregate whose
 * parent re-materialised several ranges in the same pass (late trades far apart) can keep the last
 * of them in its invalidation log, not taken in (TimescaleDB 2.28 on a server: a 15-minute bucket
 * left as it was while the hour above it moved); a second call over the same window takes it.
 */
const MAX_REFRESH_CALLS = 3;
/** Waits between attempts when a refresh of the same aggregate is running elsewhere (55P03). */
const CONCURRENT_REFRESH_WAITS_MS = [250, 500, 1_000, 2_000, 4_000, 8_000, 15_000];

/** '00:05:00' or '1 day' (PostgreSQL interval output) in milliseconds. */
export function intervalMs(text: string): number {
  let ms = 0;
  const days = /(\d+) days?/.exec(text);
  if (days) ms += Number(days[1]) * MS.day;
  const hms = /(\d+):(\d+):(\d+)/.exec(text);
  if (hms) ms += Number(hms[1]) * MS.hour + Number(hms[2]) * MS.minute + Number(hms[3]) * MS.second;
  if (ms === 0) throw new Error(`unsupported bucket width ${text}`);
  return ms;
}

export interface RefreshedWindow {
  readonly view: string;
  readonly from: Date | null;
  readonly to: Date;
}

export interface RefreshOptions {
  /** The clock (tests and benchmarks drive it). */
  readonly now?: Date;
  /** Waits between attempts on 55P03 (a concurrent refresh elsewhere). */
  readonly retryWaitsMs?: readonly number[];
}

/**
 * Brings every aggregate, parents first (aggregate_refresh_plan), up to its newest closed bucket at
 * `now`: from its frontier, or from the earliest pending refresh request if that is older, or from
 * the very beginning for an aggregate that has no frontier yet (new, or just re-created). The
 * bucket still open at `now` is left to real-time aggregation, so trades arriving in it later show
 * without another refresh. Returns the windows refreshed. Requests are deleted only once every
 * aggregate has covered them; a failure leaves them, and the frontier of whatever did not finish,
 * for the next pass.
 */
export async function refreshAggregates(sql: Sql, opts: RefreshOptions = {}): Promise<RefreshedWindow[]> {
  const now = (opts.now ?? new Date()).getTime();
  // the requests read now are the ones deleted at the end, by id: not `id <= max`, since a writer
  // that took a lower id may commit after this read (its trades not covered by this pass)
  const [pending] = await sql<{ ids: string[] | null; earliest: Date | null }[]>`
    SELECT json_agg(id::text) AS ids, min(from_time) AS earliest FROM refresh_requests`;
  const plan = await sql<{ view_name: string; bucket_width: string; refreshed_to: Date | null }[]>`
    SELECT p.view_name, p.bucket_width::text, f.refreshed_to
    FROM aggregate_refresh_plan p LEFT JOIN aggregate_frontier f USING (view_name)
    ORDER BY p.depth, p.view_name`;
  const windows: RefreshedWindow[] = [];
  for (const { view_name, bucket_width, refreshed_to } of plan) {
    const width = intervalMs(bucket_width);
    const end = Math.floor(now / width) * width; // the start of the bucket still open at `now`
    let start: number | null = refreshed_to ? refreshed_to.getTime() : null;
    if (start !== null && pending?.earliest) start = Math.min(start, Math.floor(pending.earliest.getTime() / width) * width);
    if (start !== null && start >= end) continue;
    // TimescaleDB can leave part of what a refresh was to take in (below): asked again until none is left
    for (let call = 1; ; call++) {
      await refreshWindow(sql, view_name, start === null ? null : new Date(start), new Date(end), opts.retryWaitsMs);
      if (call >= MAX_REFRESH_CALLS || !(await invalidatedWithin(sql, view_name, start, end))) break;
    }
    await sql`
      INSERT INTO aggregate_frontier (view_name, refreshed_to) VALUES (${view_name}, ${new Date(end)})
      ON CONFLICT (view_name) DO UPDATE
        SET refreshed_to = GREATEST(aggregate_frontier.refreshed_to, excluded.refreshed_to), updated_at = now()`;
    windows.push({ view: view_name, from: start === null ? null : new Date(start), to: new Date(end) });
  }
  if (pending?.ids) await sql`DELETE FROM refresh_requests WHERE id IN (SELECT jsonb_array_elements_text(${sql.json(pending.ids)})::bigint)`;
  return windows;
}

/**
 * Forgets the frontier of re-created aggregates, so the next pass materialises them from the
 * beginning (lib/db/migrate.ts, after an aggregate file changed).
 */
export async function resetFrontiers(sql: Sql | postgres.TransactionSql, views: readonly string[]): Promise<void> {
  await sql`DELETE FROM aggregate_frontier WHERE view_name IN (SELECT jsonb_array_elements_text(${sql.json([...views])}))`;
}

/**
 * Whether the aggregate still has an invalidated range inside [from, to) (from null: from the
 * beginning), as TimescaleDB's catalog logs it: microseconds since the Unix epoch.
 */
async function invalidatedWithin(sql: Sql, view: string, from: number | null, to: number): Promise<boolean> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n
    FROM _timescaledb_catalog.continuous_aggs_materialization_invalidation_log l
    JOIN _timescaledb_catalog.continuous_agg ca ON ca.mat_hypertable_id = l.materialization_id
    WHERE ca.user_view_name = ${view}
      AND l.lowest_modified_value < ${String(to * 1000)}::bigint
      AND (l.greatest_modified_value >= ${from === null ? null : String(from * 1000)}::bigint) IS NOT FALSE`;
  return row!.n > 0;
}

/**
 * One refresh_continuous_aggregate call. TimescaleDB 2.27+ refuses a refresh that overlaps one
 * running elsewhere (an operator's, or another afrates process's) with SQLSTATE 55P03 instead of
 * waiting; this waits and retries, and gives up (the frontier stays, the next pass retries) after
 * about half a minute.
 */
export async function refreshWindow(sql: Sql, view: string, from: Date | null, to: Date, waits: readonly number[] = CONCURRENT_REFRESH_WAITS_MS): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await sql`CALL refresh_continuous_aggregate(${view}::regclass, ${from}::timestamptz, ${to}::timestamptz)`;
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55P03' || attempt >= waits.length) throw err;
      await new Promise((r) => setTimeout(r, waits[attempt]! * (0.75 + Math.random() / 2)));
    }
  }
}
