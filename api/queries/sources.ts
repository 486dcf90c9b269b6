// Which venues deliver each pair and which are failing: one rule, read by GET /v1/status and by the
// webhook alerts (api/webhooks/observations.ts). A venue is failing for a pair when its last fetch
// failed, or when it has delivered no trade for three of the contract's 5-minute collection
// intervals (15 minutes) although it lists the pair.
import type { Sql } from '../../lib/db/connect.js';

const SILENT_AFTER_MS = 3 * 5 * 60_000;

export interface PairSources {
  readonly active: string[];
  readonly failing: string[];
}

/** Each listed pair's venues, active or failing at `now` (ms). */
export async function sourcesByPair(sql: Sql, now: number): Promise<Map<string, PairSources>> {
  const venues = await sql<{ pair: string; exchange: string; consecutive_failures: number | null; last_trade_at: Date | null }[]>`
    SELECT m.pair, m.exchange, h.consecutive_failures, h.last_trade_at
    FROM venue_markets m
    LEFT JOIN venue_health h USING (exchange, pair)
    ORDER BY m.pair, m.exchange`;
  const out = new Map<string, PairSources>();
  for (const v of venues) {
    let s = out.get(v.pair);
    if (!s) out.set(v.pair, (s = { active: [], failing: [] }));
    const silent = !v.last_trade_at || now - v.last_trade_at.getTime() > SILENT_AFTER_MS;
    if ((v.consecutive_failures ?? 0) > 0 || silent) s.failing.push(v.exchange);
    else s.active.push(v.exchange);
  }
  return out;
}
