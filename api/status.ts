// How every public pair stands now, the one rule behind GET /v1/status and the status page's
// GET /v1/status/public: its newest data and age as the live rates count them (the same whole
// second, api/live/cache.ts), fresh within fresh_seconds, its venues active or failing
// (lib/live/sources.ts), and the overall status: healthy (every pair fresh, no venue failing),
// degraded (some), outage (no pair fresh).
import type { Sql } from '../lib/db/connect.js';
import { timestamp } from '../lib/format.js';
import { FRESH_SECONDS } from '../lib/methodology/rules.js';
import type { AppDeps } from './context.js';
import { LiveJsonCache } from './live/cache.js';
import type { PipelineState } from './queries/rates.js';
import { sourcesByPair } from '../lib/live/sources.js';

export interface PairStatus {
  readonly last_update: string | null;
  readonly age_seconds: number | null;
  readonly fresh: boolean;
  readonly sources_active: string[];
  /** Listed and answering, but no trade in the pair for 15 minutes (lib/live/sources.ts): not a fault. */
  readonly sources_quiet: string[];
  readonly sources_failing: string[];
}

export async function pairStatuses(deps: Pick<AppDeps, 'pairs' | 'snapshot'>, sql: Sql, nowMs = Date.now()) {
  const now = LiveJsonCache.moment(nowMs).getTime();
  const sources = await sourcesByPair(sql, now);
  const pairs = new Map<string, PairStatus>();
  let fresh = 0;
  let anyFailing = false;
  for (const pair of deps.pairs.keys()) {
    const entry = deps.snapshot.get(pair);
    const age = entry ? Math.max(0, Math.floor((now - entry.time.getTime()) / 1000)) : null;
    const isFresh = age !== null && age <= FRESH_SECONDS;
    if (isFresh) fresh++;
    const { active, quiet, failing } = sources.get(pair) ?? { active: [], quiet: [], failing: [] };
    if (failing.length) anyFailing = true;
    pairs.set(pair, { last_update: entry ? timestamp(entry.time) : null, age_seconds: age, fresh: isFresh, sources_active: active, sources_quiet: quiet, sources_failing: failing });
  }
  const overall = fresh === 0 ? 'outage' : fresh === deps.pairs.size && !anyFailing ? ('healthy' as const) : ('degraded' as const);
  return { overall: overall as 'healthy' | 'degraded' | 'outage', pairs, now };
}

/**
 * Which processes collect and which one publishes, as health and GET /v1/status show it: the
 * pipeline processes seen in the last 30 seconds (each writes its row every few seconds,
 * pipeline/lease.ts) with their venues, and the holder of the publisher lease (null: none now,
 * e.g. for up to 15 s after the publisher died, until another takes over).
 */
export function presentPipeline(state: PipelineState, nowMs = Date.now()) {
  return {
    publisher: state.publisher ? { host: state.publisher.host, pid: state.publisher.pid, since: timestamp(new Date(state.publisher.since)) } : null,
    processes: state.processes.map((p) => ({
      host: p.host,
      pid: p.pid,
      role: p.role,
      venues: p.venues,
      publisher: p.publisher,
      last_seen_seconds: Math.max(0, Math.floor((nowMs - new Date(p.last_seen).getTime()) / 1000)),
    })),
  };
}
