// How much webhook work is waiting, service-wide, for the service's metrics: one statement, read at
// most every few seconds (at a scrape), so counted in the database rather than kept in memory.
import type { Sql } from '../db/connect.js';

export interface WebhookBacklog {
  /** events written to the outbox and not yet fanned out into deliveries */
  readonly eventsWaiting: number;
  /** deliveries not yet delivered nor given up (due, leased, or waiting for a retry) */
  readonly deliveriesPending: number;
  /** enabled endpoints whose deliveries have been failing since their last success */
  readonly endpointsFailing: number;
  readonly endpointsEnabled: number;
  readonly endpointsDisabled: number;
}

export async function webhookBacklog(sql: Sql): Promise<WebhookBacklog> {
  const [row] = await sql<{ events_waiting: number; deliveries_pending: number; failing: number; enabled: number; disabled: number }[]>`
    SELECT (SELECT count(*) FROM webhook_events WHERE fanned_out_at IS NULL)::int AS events_waiting,
           (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending')::int AS deliveries_pending,
           count(*) FILTER (WHERE enabled AND failing_since IS NOT NULL)::int AS failing,
           count(*) FILTER (WHERE enabled)::int AS enabled,
           count(*) FILTER (WHERE NOT enabled)::int AS disabled
    FROM webhook_endpoints`;
  return {
    eventsWaiting: row?.events_waiting ?? 0,
    deliveriesPending: row?.deliveries_pending ?? 0,
    endpointsFailing: row?.failing ?? 0,
    endpointsEnabled: row?.enabled ?? 0,
    endpointsDisabled: row?.disabled ?? 0,
  };
}
