// Daily fixings at African market times (pipeline/certify/issue.ts publishes them): per pair one at
// 16:00 in its quote currency's home zone and one at 00:00 UTC. Every tier sees rate, status and
// data quality; Builder and up the verification fields and the venues; Enterprise the signed record
// and its replication bundle. A fixing never changes: a material change afterwards is a restatement.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { notFound, validationError } from '../errors.js';
import { date as dayOf, dayStart } from '../../lib/format.js';
import { knownPair, type Operation } from '../operation.js';
import { bundleOf } from '../queries/certificates.js';
import { sendBundle } from './certificates.js';
import { fixingIdOf, fixingsOf, type FixingRow } from '../queries/fixings.js';
import { BUNDLE_RESPONSE, FIXING_DAY_RESPONSE, FIXINGS_RESPONSE, type Fixing, type FixingDayResponse, type FixingsResponse } from '../schemas.js';
import { atLeast, type Tier } from '../../lib/tiers.js';
import { DATE, NO_QUERY, PAIR, parseParams, parseQuery } from '../validate.js';

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    pair: { ...PAIR, description: 'one pair; all pairs when absent' },
    date: { ...DATE, description: "the fixings' day (each dated in its own zone); default today, UTC; or give start and end" },
    start: { ...DATE, description: 'first day of a range (with end; at most 31 days)' },
    end: { ...DATE, description: 'last day of a range, inclusive' },
  },
} as const;
const MAX_DAYS = 31;
const dayParams = { type: 'object', required: ['pair', 'date'], additionalProperties: false, properties: { pair: PAIR, date: DATE } } as const;
const bundleParams = { type: 'object', required: ['pair', 'date', 'kind'], additionalProperties: false, properties: { pair: PAIR, date: DATE, kind: { enum: ['local', 'utc'] } } } as const;

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/fixings',
    summary: "Daily fixings of a day or a range of days: each pair's rate at 16:00 in its quote currency's home zone (Lagos, Johannesburg, Nairobi, Accra, Kampala) and at 00:00 UTC, the VWAP of the hour before",
    tier: 'free',
    query: listQuery,
    response: FIXINGS_RESPONSE,
  },
  { method: 'get', path: '/v1/fixings/:pair/:date', summary: "One pair's fixings of a day (local first); Enterprise gets each one's signed record", tier: 'free', params: dayParams, query: NO_QUERY, response: FIXING_DAY_RESPONSE, errors: ['not_found'] },
  {
    method: 'get',
    path: '/v1/fixings/:pair/:date/:kind/bundle', feature: 'Replication bundles',
    summary: "A fixing's replication bundle: every trade of its hour as stored, the venues left out and why, the synthetic price's inputs, parameters, methodology and software version (gzip when accepted; ETag is its SHA-256)",
    tier: 'enterprise',
    params: bundleParams,
    query: NO_QUERY,
    response: BUNDLE_RESPONSE,
    errors: ['not_found'],
  },
];

/** A stored fixing as a tier sees it. */
function present(row: FixingRow, tier: Tier): Fixing {
  const b = JSON.parse(row.body);
  const out: Fixing = {
    fixing_id: b.fixing_id,
    pair: b.data.pair,
    date: b.fixing.date,
    kind: b.fixing.kind,
    zone: b.fixing.zone,
    time: b.fixing.time,
    local_time: b.fixing.local_time,
    window: { start: b.fixing.window_start, end: b.fixing.window_end },
    rate: b.data.rate,
    status: b.verification.status,
    data_quality: b.verification.data_quality,
    methodology_version: b.methodology_version,
    published_at: b.issued_at,
    restated: row.restated !== null,
    ...(b.notes ? { notes: b.notes } : {}),
  };
  if (atLeast(tier, 'builder')) {
    out.confidence = b.verification.confidence;
    out.divergence_pct = b.verification.divergence_pct;
    out.synthetic_price = b.verification.synthetic_price;
    out.sources = b.inputs.venues;
    out.excluded = b.inputs.excluded;
  }
  if (atLeast(tier, 'enterprise')) {
    out.certificate = b;
    out.bundle_url = b.bundle.url;
  }
  return out;
}

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/fixings', async (ctx: AppContext) => {
    const q = parseQuery(listQuery, ctx);
    const pair = q.pair === undefined ? null : knownPair(deps, q.pair, 'pair').pair;
    if (q.date !== undefined && (q.start !== undefined || q.end !== undefined)) throw validationError("give either 'date' or 'start' and 'end', not both");
    if ((q.start === undefined) !== (q.end === undefined)) throw validationError("'start' and 'end' go together");
    const start = q.start ?? q.date ?? dayOf(Date.now());
    const end = q.end ?? start;
    const days = (dayStart(end).getTime() - dayStart(start).getTime()) / 86_400_000;
    if (days < 0) throw validationError("'end' must not be before 'start'");
    if (days >= MAX_DAYS) throw validationError(`a range spans at most ${MAX_DAYS} days`);
    const rows = await deps.read.run((sql) => fixingsOf(sql, start, end, pair));
    const tier = ctx.state.customer!.tier;
    ctx.body = { start, end, count: rows.length, fixings: rows.map((r) => present(r, tier)) } satisfies FixingsResponse;
  });

  router.get('/v1/fixings/:pair/:date', async (ctx: AppContext) => {
    const p = parseParams(dayParams, ctx.params);
    parseQuery(NO_QUERY, ctx);
    const pair = knownPair(deps, p.pair!, 'pair');
    const rows = await deps.read.run((sql) => fixingsOf(sql, p.date!, p.date!, pair.pair));
    if (rows.length === 0) {
      throw notFound(`No fixing of ${pair.pair} on ${p.date}: a fixing is published once the hour before it has settled (at the latest ${Math.round(deps.config.settleAfterSeconds / 60)} minutes after its time).`);
    }
    const tier = ctx.state.customer!.tier;
    ctx.body = { pair: pair.pair, date: p.date!, fixings: rows.map((r) => present(r, tier)) } satisfies FixingDayResponse;
  });

  router.get('/v1/fixings/:pair/:date/:kind/bundle', async (ctx: AppContext) => {
    const p = parseParams(bundleParams, ctx.params);
    parseQuery(NO_QUERY, ctx);
    const pair = knownPair(deps, p.pair!, 'pair');
    const bundle = await deps.read.run(async (sql) => {
      const id = await fixingIdOf(sql, pair.pair, p.date!, p.kind!);
      return id ? bundleOf(sql, id) : undefined;
    });
    if (!bundle) throw notFound(`No ${p.kind} fixing of ${pair.pair} on ${p.date}.`);
    sendBundle(ctx, bundle);
  });
}
