// What the webhook alert detectors (pipeline/webhooks/detect.ts) read after a cycle: each public
// pair's live rate, synthetic price, divergence and age as the live snapshot has them (the same
// rules as GET /v1/rates/live), and its failing venues as GET /v1/status has them. Without a
// snapshot (no endpoint watches a pair's rate) only the failing venues are observed.
// pipeline/process.ts calls this after each cycle and hands the result to detectAlerts.
import type { Sql } from '../../lib/db/connect.js';
import type { PairObservation } from '../../lib/webhooks/observation.js';
import { assess } from '../../lib/live/assess.js';
import { publicPairs } from '../../lib/live/queries.js';
import type { LiveSnapshot } from '../../lib/live/snapshot.js';
import { sourcesByPair } from '../../lib/live/sources.js';
import { percent } from '../../lib/methodology/rules.js';

export async function observePairs(sql: Sql, snapshot: LiveSnapshot | null, now = new Date()): Promise<PairObservation[]> {
  const pairs = await publicPairs(sql);
  const sources = await sourcesByPair(sql, now.getTime());
  const out: PairObservation[] = [];
  for (const { pair } of pairs) {
    const entry = snapshot?.get(pair);
    const a = entry ? assess(entry, now) : null;
    out.push({
      pair,
      rate: entry?.rate ?? null,
      synthetic: entry?.synthetic?.price ?? null,
      divergencePct: a?.divergence == null ? null : percent(a.divergence),
      ageSeconds: a?.ageSeconds ?? null,
      sourcesFailing: sources.get(pair)?.failing ?? [],
      at: now,
    });
  }
  return out;
}
