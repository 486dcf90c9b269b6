// Request metrics queries: every API process's requests, errors and latency by minute
// (api_request_minutes), summed over the last 24 hours for GET /v1/health.
import type { Sql } from '../../lib/db/connect.js';

export interface MinuteCounts {
  /** The minute's start, ISO 8601. */
  readonly minute: string;
  readonly requests: number;
  readonly errors: number;
  readonly latency_ms: number;
}

/** Adds each minute's counts to the table's. */
export async function addRequestMinutes(sql: Sql, rows: readonly MinuteCounts[]): Promise<void> {
  // as JSON, not arrays: see lib/db/pool.ts (a connection that could not read the array types)
  await sql`
    INSERT INTO api_request_minutes (minute, requests, errors, latency_ms)
    SELECT minute, requests, errors, latency_ms
    FROM jsonb_to_recordset(${sql.json(rows as never)}) AS r(minute timestamptz, requests bigint, errors bigint, latency_ms float8)
    ON CONFLICT (minute) DO UPDATE SET requests = api_request_minutes.requests + excluded.requests,
      errors = api_request_minutes.errors + excluded.errors, latency_ms = api_request_minutes.latency_ms + excluded.latency_ms`;
}

/** Drops the minutes before `before`. */
export async function dropRequestMinutes(sql: Sql, before: Date): Promise<void> {
  await sql`DELETE FROM api_request_minutes WHERE minute < ${before}`;
}

/** The sums over the minutes after `after`. */
export async function requestTotals(sql: Sql, after: Date): Promise<{ requests: number; errors: number; latencyMs: number }> {
  const [row] = await sql<{ requests: string | null; errors: string | null; latency_ms: number | null }[]>`
    SELECT sum(requests)::text AS requests, sum(errors)::text AS errors, sum(latency_ms) AS latency_ms
    FROM api_request_minutes WHERE minute > ${after}`;
  return { requests: Number(row?.requests ?? 0), errors: Number(row?.errors ?? 0), latencyMs: Number(row?.latency_ms ?? 0) };
}
