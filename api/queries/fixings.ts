// Fixing and restatement queries: both are written once by the pipeline (pipeline/certify/issue.ts,
// pipeline/restate.ts) and only read here.
import type { Sql } from '../../lib/db/connect.js';
import type { RESTATEMENT_SUBJECTS } from '../../lib/intervals.js';

export interface FixingRow {
  id: string;
  kind: 'local' | 'utc';
  /** the fixing as published (JSON text, its certificate) */
  body: string;
  /** the newest restatement of it, if any */
  restated: string | null;
  restated_at: Date | null;
}

/** The fixings of the days from `start` to `end` (each dated in its zone), of one pair or all: by day, pair, local first. */
export function fixingsOf(sql: Sql, start: string, end: string, pair: string | null) {
  return sql<FixingRow[]>`
    SELECT f.id, f.kind, f.body, r.restated::text AS restated, r.restated_at
    FROM fixings f
    LEFT JOIN LATERAL (SELECT restated, restated_at FROM restatements WHERE subject = 'fixing' AND ref = f.id ORDER BY id DESC LIMIT 1) r ON true
    WHERE f.date BETWEEN ${start}::date AND ${end}::date AND (${pair}::text IS NULL OR f.pair = ${pair})
    ORDER BY f.date, f.pair, f.kind`;
}

/** The id of one fixing, or undefined. */
export async function fixingIdOf(sql: Sql, pair: string, date: string, kind: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`SELECT id FROM fixings WHERE pair = ${pair} AND date = ${date}::date AND kind = ${kind}`;
  return row?.id;
}

export interface RestatementRow {
  id: string;
  pair: string;
  subject: (typeof RESTATEMENT_SUBJECTS)[number];
  time: Date;
  ref: string | null;
  original: string;
  previous: string;
  restated: string;
  change_pct: string;
  reason: {
    late_trades: { exchange: string; trades: number }[];
    /** a rebuild of the candle aggregates (lib/db/rebuild.ts) */
    aggregate_change?: { reason: string; files: string[]; changed: Record<string, { previous: string | null; restated: string | null }> };
  };
  restated_at: Date;
}

/** Restatements recorded since `since`, of one pair or all, newest first. */
export function restatementsSince(sql: Sql, since: Date, pair: string | null, limit: number) {
  return sql<RestatementRow[]>`
    SELECT id::text, pair, subject, time, ref, original::text, previous::text, restated::text, change_pct::text, reason, restated_at
    FROM restatements
    WHERE restated_at >= ${since} AND (${pair}::text IS NULL OR pair = ${pair})
    ORDER BY id DESC
    LIMIT ${limit}`;
}

/** Restatements with an id above `after`, oldest first (the live stream's events). */
export function restatementsAfter(sql: Sql, after: string) {
  return sql<RestatementRow[]>`
    SELECT id::text, pair, subject, time, ref, original::text, previous::text, restated::text, change_pct::text, reason, restated_at
    FROM restatements WHERE id > ${after}::bigint ORDER BY id LIMIT 100`;
}
