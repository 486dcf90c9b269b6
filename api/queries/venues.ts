// How each venue's trades arrive: by its stream (and REST behind it) or by REST alone, as the
// pipeline processes report it (pipeline/streams/state.ts). A report older than three of its
// 30-second beats is a process gone, and counts for nothing.
import type { Sql } from '../../lib/db/connect.js';

export interface VenueTransportRow {
  readonly exchange: string;
  /** The best stream state any live process reports (open before reconnecting before connecting), or null: REST alone. */
  readonly state: 'open' | 'reconnecting' | 'connecting' | null;
  readonly last_message_at: Date | null;
  readonly last_error: string | null;
}

export async function venueTransports(sql: Sql): Promise<VenueTransportRow[]> {
  return sql<VenueTransportRow[]>`
    SELECT m.exchange, s.state, s.last_message_at, s.last_error
    FROM (SELECT DISTINCT exchange FROM venue_markets) m
    LEFT JOIN LATERAL (
      SELECT v.state, v.last_message_at, v.last_error FROM venue_streams v
      WHERE v.exchange = m.exchange AND v.updated_at > now() - interval '90 seconds' AND v.state <> 'stopped'
      ORDER BY array_position(ARRAY['open', 'reconnecting', 'connecting'], v.state), v.updated_at DESC
      LIMIT 1
    ) s ON true
    ORDER BY m.exchange`;
}

/** The shape health and status answer: a venue's transport and, where it streams, the stream's state. */
export function presentTransport(r: VenueTransportRow, now: number) {
  return {
    exchange: r.exchange,
    transport: r.state === null ? ('rest' as const) : ('stream' as const),
    stream: r.state === null ? null : { state: r.state, last_message_age_seconds: r.last_message_at ? Math.max(0, Math.floor((now - r.last_message_at.getTime()) / 1000)) : null },
  };
}
