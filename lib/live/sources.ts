// Which venues deliver each pair, which are quiet and which are failing: one rule, read by
// GET /v1/status and by the webhook alerts (pipeline/webhooks/observations.ts). A venue is failing for
// a pair when its last fetch failed, or when no fetch of it has succeeded for three of the
// contract's 5-minute collection intervals (15 minutes) of being asked. One that answers every
// fetch but has had no trade in the pair for that long is quiet: listed, answering, simply not
// trading (a thin pair at night); it is no fault of the service, so it neither degrades the status
// nor raises source.failing, and the pair's own freshness says when no venue trades it at all.
// Both counted from when the running collector began asking (venue_health.watched_since), not from
// the last trade or answer alone: right after a start nothing is quiet or silent yet.
import type { Sql } from '../db/connect.js';

const SILENT_AFTER_MS = 3 * 5 * 60_000;

export interface PairSources {
  readonly active: string[];
  readonly quiet: string[];
  readonly failing: string[];
}

/** Each listed pair's venues, active or failing at `now` (ms). */
export async function sourcesByPair(sql: Sql, now: number): Promise<Map<string, PairSources>> {
  const venues = await sql<{ pair: string; exchange: string; consecutive_failures: number | null; last_success_at: Date | null; last_trade_at: Date | null; watched_since: Date | null }[]>`
    SELECT m.pair, m.exchange, h.consecutive_failures, h.last_success_at, h.last_trade_at, h.watched_since
    FROM venue_markets m
    LEFT JOIN venue_health h USING (exchange, pair)
    ORDER BY m.pair, m.exchange`;
  const out = new Map<string, PairSources>();
  for (const v of venues) {
    let s = out.get(v.pair);
    if (!s) out.set(v.pair, (s = { active: [], quiet: [], failing: [] }));
    const watched = v.watched_since?.getTime() ?? -Infinity;
    const since = (t: Date | null) => now - Math.max(t?.getTime() ?? -Infinity, watched);
    if ((v.consecutive_failures ?? 0) > 0 || since(v.last_success_at) > SILENT_AFTER_MS) s.failing.push(v.exchange);
    else if (since(v.last_trade_at) > SILENT_AFTER_MS) s.quiet.push(v.exchange);
    else s.active.push(v.exchange);
  }
  return out;
}
