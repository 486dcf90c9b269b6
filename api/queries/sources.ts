// Which venues deliver each pair and which are failing: one rule, read by GET /v1/status and by the
// webhook alerts (api/webhooks/observations.ts). A venue is failing for a pair when its last fetch
// failed, or when it has delivered no trade for three of the contract's 5-minute collection
// intervals (15 minutes) of being asked although it lists the pair. Counted from when the running
// collector began asking (venue_health.watched_since), not from its last trade alone: right after
// a start a venue whose pair has had no trade yet, or none since before a downtime, is not silent.
import type { Sql } from '../../lib/db/connect.js';

const SILENT_AFTER_MS = 3 * 5 * 60_000;

export interface PairSources {
  readonly active: string[];
  readonly failing: string[];
}

/** Each listed pair's venues, active or failing at `now` (ms). */
export async function sourcesByPair(sql: Sql, now: number): Promise<Map<string, PairSources>> {
  const venues = await sql<{ pair: string; exchange: string; consecutive_failures: number | null; last_trade_at: Date | null; watched_since: Date | null }[]>`
    SELECT m.pair, m.exchange, h.consecutive_failures, h.last_trade_at, h.watched_since
    FROM venue_markets m
    LEFT JOIN venue_health h USING (exchange, pair)
    ORDER BY m.pair, m.exchange`;
  const out = new Map<string, PairSources>();
  for (const v of venues) {
    let s = out.get(v.pair);
    if (!s) out.set(v.pair, (s = { active: [], failing: [] }));
    const heard = Math.max(v.last_trade_at?.getTime() ?? -Infinity, v.watched_since?.getTime() ?? -Infinity);
    const silent = now - heard > SILENT_AFTER_MS;
    if ((v.consecutive_failures ?? 0) > 0 || silent) s.failing.push(v.exchange);
    else s.active.push(v.exchange);
  }
  return out;
}
