// GET /v1/status: data freshness per pair and which venues are delivering (failing: the rule in
// api/queries/sources.ts).
// Beyond the contract, per pair: how far buckets are settled (certificates exist up to there) and
// how many trades arrived in the last 24 hours for buckets already settled.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { timestamp } from '../../lib/format.js';
import { type Operation } from '../operation.js';
import { STATUS_RESPONSE, type StatusResponse } from '../schemas.js';
import { parseQuery } from '../validate.js';
import { FRESH_SECONDS } from '../../lib/methodology/rules.js';
import { LiveJsonCache } from '../live/cache.js';
import { sourcesByPair } from '../queries/sources.js';

const query = { type: 'object', additionalProperties: false, properties: {} } as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/status', summary: 'Data freshness and failing sources per pair', tier: 'free', query, response: STATUS_RESPONSE },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/status', async (ctx: AppContext) => {
    parseQuery(query, ctx);
    const now = LiveJsonCache.moment(Date.now()).getTime(); // ages as live and markets count them
    const [settled, sources] = await deps.read.run(async (sql) => [
      await sql<{ pair: string; settled_through: Date | null; late: number }[]>`
        SELECT p.pair, s.settled_through,
               (SELECT coalesce(sum(l.trades), 0)::int FROM late_trades l WHERE l.pair = p.pair AND l.noticed_at > now() - INTERVAL '24 hours') AS late
        FROM pairs p LEFT JOIN pair_settlement s USING (pair)
        WHERE p.visibility = 'public'`,
      await sourcesByPair(sql, now),
    ]);
    const settlement = new Map(settled.map((r) => [r.pair, r]));
    const pairs: StatusResponse['pairs'] = {};
    let fresh = 0;
    let anyFailing = false;
    for (const pair of deps.pairs.keys()) {
      const entry = deps.snapshot.get(pair);
      const age = entry ? Math.max(0, Math.floor((now - entry.time.getTime()) / 1000)) : null;
      if (age !== null && age <= FRESH_SECONDS) fresh++;
      const { active, failing } = sources.get(pair) ?? { active: [], failing: [] };
      if (failing.length) anyFailing = true;
      pairs[pair] = {
        last_update: entry ? timestamp(entry.time) : null,
        age_seconds: age,
        sources_active: active,
        sources_failing: failing,
        settled_through: settlement.get(pair)?.settled_through ? timestamp(settlement.get(pair)!.settled_through!) : null,
        late_trades_24h: settlement.get(pair)?.late ?? 0,
      };
    }
    const overall = fresh === 0 ? 'outage' : fresh === deps.pairs.size && !anyFailing ? 'healthy' : 'degraded';
    ctx.body = { overall_status: overall, pairs } satisfies StatusResponse;
  });
}
