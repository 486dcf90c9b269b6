// GET /v1/status: data freshness per pair and which venues are delivering (api/status.ts: the rule
// the status page's GET /v1/status/public shares).
// Beyond the contract, per pair: how far buckets are settled (certificates exist up to there) and
// how many trades arrived in the last 24 hours for buckets already settled; and how each venue's
// trades arrive (its stream, or REST alone).
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { timestamp } from '../../lib/format.js';
import { type Operation } from '../operation.js';
import { STATUS_RESPONSE, type StatusResponse } from '../schemas.js';
import { NO_QUERY, parseQuery } from '../validate.js';
import { pipelineState, settlementByPair } from '../queries/status.js';
import { presentTransport, venueTransports } from '../queries/venues.js';
import { pairStatuses, presentPipeline } from '../status.js';

export const operations: Operation[] = [
  { method: 'get', path: '/v1/status', summary: 'Data freshness and failing sources per pair', tier: 'free', query: NO_QUERY, response: STATUS_RESPONSE },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/status', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const [status, settled, transports, pipeline] = await deps.read.run(async (sql) => [await pairStatuses(deps, sql), await settlementByPair(sql), await venueTransports(sql), await pipelineState(sql)] as const);
    const settlement = new Map(settled.map((r) => [r.pair, r]));
    const pairs: StatusResponse['pairs'] = {};
    for (const [pair, { fresh: _fresh, ...p }] of status.pairs) {
      const s = settlement.get(pair);
      pairs[pair] = { ...p, settled_through: s?.settled_through ? timestamp(s.settled_through) : null, late_trades_24h: s?.late ?? 0 };
    }
    const now = Date.now();
    ctx.body = { overall_status: status.overall, venues: transports.map((t) => presentTransport(t, now)), ...(pipeline ? { pipeline: presentPipeline(pipeline, now) } : {}), pairs } satisfies StatusResponse;
  });
}
