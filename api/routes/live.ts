// GET /v1/rates/live and GET /v1/rates/markets: served from the in-memory snapshot, no database.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { unavailable, validationError } from '../errors.js';
import { HeadAndSharedTail } from '../middleware/compress.js';
import { knownPair, meta, requireTier, type Operation } from '../operation.js';
import { LIVE_RESPONSE, MARKETS_RESPONSE } from '../schemas.js';
import { BOOL, NO_QUERY, parseQuery } from '../validate.js';
import { isLive } from '../../lib/methodology/rules.js';

const MAX_PAIRS = 50;

const liveQuery = {
  type: 'object',
  required: ['pairs'],
  additionalProperties: false,
  properties: {
    pairs: { type: 'string', minLength: 1, maxLength: 500, description: 'comma-separated pair identifiers' },
    min_confidence: { type: 'number', minimum: 0, maximum: 1, description: 'Builder+: leave out pairs below this confidence' },
    include_synthetic: { ...BOOL, description: 'Builder+: add pricing.synthetic' },
    include_sources: { ...BOOL, description: 'Builder+: add pricing.exchange with per-exchange weights' },
    include_audit: { ...BOOL, description: 'Enterprise: add audit.signature' },
  },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/rates/live', summary: 'Live VWAP rates for one or more pairs', tier: 'free', query: liveQuery, response: LIVE_RESPONSE, errors: ['tier_restricted'] },
  { method: 'get', path: '/v1/rates/markets', summary: 'Live rates of every active pair', tier: 'builder', query: NO_QUERY, response: MARKETS_RESPONSE },
];

/** The flags a live request's key must allow, and the pairs it names (GET /v1/rates/live and /v1/rates/stream). */
export function livePairs(ctx: AppContext, deps: AppDeps, q: { pairs: string; include_synthetic?: boolean; include_sources?: boolean; include_audit?: boolean }): string[] {
  if (q.include_synthetic) requireTier(ctx, 'builder', 'include_synthetic');
  if (q.include_sources) requireTier(ctx, 'builder', 'include_sources');
  if (q.include_audit) requireTier(ctx, 'enterprise', 'include_audit');
  const names = [...new Set(q.pairs.split(',').map((p) => p.trim()).filter(Boolean))];
  if (names.length === 0) throw validationError("query parameter 'pairs' must list at least one pair");
  if (names.length > MAX_PAIRS) throw validationError(`query parameter 'pairs' lists more than ${MAX_PAIRS} pairs`);
  return names.map((n) => knownPair(deps, n, 'pairs').pair);
}

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/rates/live', async (ctx: AppContext) => {
    const started = performance.now();
    const q = parseQuery(liveQuery, ctx);
    const tier = ctx.state.customer!.tier;
    const market = deps.snapshot.market ?? deps.config.market;
    const now = Date.now();
    // everything but meta is the same for a query, tier and market within a second (api/live/cache.ts)
    const data = deps.liveJson.liveData(`${tier}|${market}|${ctx.querystring}`, now, () => {
      if (q.min_confidence !== undefined) requireTier(ctx, 'builder', 'min_confidence');
      const pairs = livePairs(ctx, deps, q);
      const presentation = { tier, includeSynthetic: q.include_synthetic, includeSources: q.include_sources, includeAudit: q.include_audit, market };
      const parts: string[] = [];
      let anyFresh = false;
      for (const pair of pairs) {
        const presented = deps.liveJson.rate(pair, presentation, now);
        if (!presented) continue;
        if (isLive(presented.assessment.ageSeconds)) anyFresh = true;
        if (q.min_confidence !== undefined && presented.assessment.confidence < q.min_confidence) continue;
        parts.push(`${JSON.stringify(pair)}:${presented.json}`);
      }
      if (!anyFresh) throw unavailable(`No data newer than 60 minutes for ${pairs.join(', ')}; retry shortly.`, 60);
      return `{${parts.join(',')}}`;
    });
    ctx.type = 'application/json';
    ctx.body = `{"data":${data},"meta":${JSON.stringify(meta(ctx, started))}}`;
  });

  router.get('/v1/rates/markets', async (ctx: AppContext) => {
    const started = performance.now();
    parseQuery(NO_QUERY, ctx);
    // active pairs only, made once a second per tier (api/live/cache.ts)
    const data = deps.liveJson.marketsData(ctx.state.customer!.tier, Date.now(), (a) => isLive(a.ageSeconds));
    if (data.count === 0) throw unavailable('No pair has data newer than 60 minutes; retry shortly.', 60);
    ctx.type = 'application/json';
    ctx.body = new HeadAndSharedTail(`{"meta":${JSON.stringify({ ...meta(ctx, started), pair_count: data.count })},"data":`, data.answerTail);
  });
}
