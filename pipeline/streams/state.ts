// Where a pipeline process writes the state of its venue streams, for health and status in every
// process (sql/migrations/*_venue_streams.sql).
import type { Sql } from '../../lib/db/connect.js';
import type { StreamReport } from './index.js';

/** How often a report is written again while nothing changes: readers drop rows older than three of these. */
export const REPORT_EVERY_MS = 30_000;

export async function recordStreams(sql: Sql, process: string, reports: readonly StreamReport[]): Promise<void> {
  if (reports.length === 0) return;
  const rows = reports.map((r) => ({
    exchange: r.exchange,
    process,
    state: r.state,
    connections: r.connections,
    open: r.open,
    reconnects: r.reconnects,
    last_error: r.lastError,
    last_message_at: r.lastMessageAt,
  }));
  await sql`
    INSERT INTO venue_streams ${sql(rows)}
    ON CONFLICT (exchange, process) DO UPDATE SET
      state = excluded.state, connections = excluded.connections, open = excluded.open, reconnects = excluded.reconnects,
      last_error = excluded.last_error, last_message_at = excluded.last_message_at, updated_at = now()`;
  // processes gone for a day leave no rows behind
  await sql`DELETE FROM venue_streams WHERE updated_at < now() - interval '1 day'`;
}
