// GET /v1/rates/live and GET /v1/rates/markets: served from the in-memory snapshot, no database.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { unavailable, validationError } from '../errors.js';
import { presentLive, assess } from '../live/present.js';
import { knownPair, meta, requireTier, type Operation } from '../operation.js';
import { LIVE_RESPONSE, MARKETS_RESPONSE, type LiveResponse, type MarketsResponse } from '../schemas.js';
import { BOOL, parseQuery } from '../validate.js';
import { isLive } from '../verification.js';

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

const marketsQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/rates/live', summary: 'Live VWAP rates for one or more pairs', tier: 'free', query: liveQuery, response: LIVE_RESPONSE, errors: ['tier_restricted'] },
  { method: 'get', path: '/v1/rates/markets', summary: 'Live rates of every active pair', tier: 'builder', query: marketsQuery, response: MARKETS_RESPONSE },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/rates/live', async (ctx: AppContext) => {
    const started = performance.now();
    const q = parseQuery(liveQuery, ctx.query);
    const tier = ctx.state.customer!.tier;
    if (q.min_confidence !== undefined) requireTier(ctx, 'builder', 'min_confidence');
    if (q.include_synthetic) requireTier(ctx, 'builder', 'include_synthetic');
    if (q.include_sources) requireTier(ctx, 'builder', 'include_sources');
    if (q.include_audit) requireTier(ctx, 'enterprise', 'include_audit');

    const names = [...new Set(q.pairs.split(',').map((p) => p.trim()).filter(Boolean))];
    if (names.length === 0) throw validationError("query parameter 'pairs' must list at least one pair");
    if (names.length > MAX_PAIRS) throw validationError(`query parameter 'pairs' lists more than ${MAX_PAIRS} pairs`);
    const pairs = names.map((n) => knownPair(deps, n, 'pairs').pair);

    const now = new Date();
    const data: LiveResponse['data'] = {};
    let anyFresh = false;
    for (const pair of pairs) {
      const entry = deps.snapshot.get(pair);
      if (!entry) continue;
      const a = assess(entry, now);
      if (isLive(a.ageSeconds)) anyFresh = true;
      if (q.min_confidence !== undefined && a.confidence < q.min_confidence) continue;
      data[pair] = presentLive(
        entry,
        { tier, includeSynthetic: q.include_synthetic, includeSources: q.include_sources, includeAudit: q.include_audit, now, signer: deps.signer, market: deps.snapshot.market ?? deps.config.market },
        a,
      );
    }
    if (!anyFresh) throw unavailable(`No data newer than 60 minutes for ${pairs.join(', ')}; retry shortly.`, 60);
    ctx.body = { data, meta: meta(ctx, started) } satisfies LiveResponse;
  });

  router.get('/v1/rates/markets', async (ctx: AppContext) => {
    const started = performance.now();
    requireTier(ctx, 'builder', 'GET /v1/rates/markets');
    parseQuery(marketsQuery, ctx.query);
    const now = new Date();
    const data: MarketsResponse['data'] = {};
    for (const entry of deps.snapshot.all()) {
      const a = assess(entry, now);
      if (!isLive(a.ageSeconds)) continue; // active pairs only
      data[entry.pair] = presentLive(entry, { tier: ctx.state.customer!.tier, now, signer: deps.signer }, a);
    }
    if (Object.keys(data).length === 0) throw unavailable('No pair has data newer than 60 minutes; retry shortly.', 60);
    ctx.body = { meta: { ...meta(ctx, started), pair_count: Object.keys(data).length }, data } satisfies MarketsResponse;
  });
}
