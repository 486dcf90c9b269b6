// Refreshes every continuous aggregate over a time range, parents first (aggregate_refresh_plan).
// The embedded database has no background workers, so the pipeline calls this after every ingest;
// on a real server the refresh policies do it too, and this makes fresh data visible at once.
import type { Sql } from './connect.js';

const MS = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

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

/**
 * Refresh [from, to] in every aggregate; from = null means from the beginning. TimescaleDB only
 * refreshes whole buckets inside the window, so each level's window is widened to its own bucket
 * edges, but never into the bucket still open at `now`: that one is served by real-time
 * aggregation, so trades arriving later in it are seen without another refresh.
 */
export async function refreshAggregates(sql: Sql, from: Date | null, to: Date | null, now = new Date()): Promise<void> {
  const plan = await sql<{ view_name: string; bucket_width: string }[]>`
    SELECT view_name, bucket_width::text FROM aggregate_refresh_plan`;
  for (const { view_name, bucket_width } of plan) {
    const width = intervalMs(bucket_width);
    const openBucket = Math.floor(now.getTime() / width) * width;
    const start = from && Math.floor(from.getTime() / width) * width;
    const end = Math.min(openBucket, to ? (Math.floor(to.getTime() / width) + 1) * width : openBucket);
    if (start !== null && start >= end) continue;
    await sql`CALL refresh_continuous_aggregate(${view_name}::regclass, ${start === null ? null : new Date(start)}::timestamptz, ${new Date(end)}::timestamptz)`;
  }
}
