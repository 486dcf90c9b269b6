// GET /v1/premium: exchange VWAP against the synthetic cross-rate over time
// (sql/functions/50_premium_series.sql), plus the current premium from the live snapshot.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { validationError } from '../errors.js';
import { date, dayStart, numeric, round, timestamp } from '../../lib/format.js';
import { knownPair, type Operation } from '../operation.js';
import { premiumSeries } from '../queries/rates.js';
import { PREMIUM_RESPONSE, type PremiumResponse } from '../schemas.js';
import { DATE, PAIR, parseQuery } from '../validate.js';
import * as x from '../../lib/methodology/exact.js';
import * as v from '../../lib/methodology/rules.js';

const DAY_MS = 86_400_000;
/**
 * Longest range per interval: the answer is not paginated, and its cost is the observations it
 * reads (5-minute ones for 5m and 1h, hourly ones for 1d): at most about 9,000 of them.
 */
const MAX_RANGE_DAYS = { '5m': 7, '1h': 31, '1d': 366 } as const;

const query = {
  type: 'object',
  required: ['pair'],
  additionalProperties: false,
  properties: {
    pair: PAIR,
    start: { ...DATE, description: 'first UTC day, inclusive; default: the last 24 hours. The range spans at most 7 days at 5m, 31 at 1h, 366 at 1d' },
    end: { ...DATE, description: 'last UTC day, inclusive' },
    interval: { enum: ['5m', '1h', '1d'], default: '1h' },
  },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/premium', summary: 'Premium of the exchange VWAP over the synthetic cross-rate', tier: 'builder', query, response: PREMIUM_RESPONSE },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/premium', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const pair = knownPair(deps, q.pair, 'pair');
    const now = Date.now();
    // end: the end of the `end` day; else now (or a day after `start`, whichever is later).
    // start: the `start` day; else the 24 hours before end.
    const to = q.end ? new Date(dayStart(q.end).getTime() + DAY_MS) : new Date(q.start ? Math.max(dayStart(q.start).getTime() + DAY_MS, now) : now);
    const from = q.start ? dayStart(q.start) : new Date(to.getTime() - DAY_MS);
    if (to <= from) throw validationError("'end' must not be before 'start'");
    const maxDays = MAX_RANGE_DAYS[q.interval as keyof typeof MAX_RANGE_DAYS];
    if (to.getTime() - from.getTime() > maxDays * DAY_MS) throw validationError(`the range may span at most ${maxDays} days at interval ${q.interval}`);

    const rows = await deps.read.run((sql) => premiumSeries(sql, pair.pair, q.interval, from, to));
    const points = rows.reduce((n, r) => n + Number(r.data_points), 0);
    const avg = points ? rows.reduce((s, r) => s + Number(r.avg_premium_pct) * Number(r.data_points), 0) / points : null;

    const live = deps.snapshot.get(pair.pair);
    const div = live && live.calculation === 'vwap' && live.synthetic ? v.divergence(live.exactRate, live.synthetic.exact) : null;
    const current =
      live && live.synthetic && div
        ? {
            local_price: numeric(live.rate),
            synthetic_price: numeric(live.synthetic.price),
            premium: Number(v.publishedRate(x.sub(live.exactRate, live.synthetic.exact))),
            premium_pct: v.percent(div),
            status: v.verificationStatus(div, pair.quote),
            timestamp: timestamp(live.time),
          }
        : null;

    ctx.body = {
      pair: pair.pair,
      current,
      interval: q.interval,
      // the dates given, as historical echoes them (or the UTC days of the default range)
      start: q.start ?? date(from),
      end: q.end ?? date(to.getTime() - 1),
      data: rows.map((r) => ({
        timestamp: timestamp(r.bucket),
        avg_premium_pct: round(Number(r.avg_premium_pct), 4),
        max_premium_pct: round(Number(r.max_premium_pct), 4),
        min_premium_pct: round(Number(r.min_premium_pct), 4),
        avg_vwap: numeric(r.avg_vwap),
        avg_synthetic: numeric(r.avg_synthetic),
        data_points: Number(r.data_points),
      })),
      meta: {
        request_id: ctx.state.requestId,
        avg_premium_pct: avg === null ? null : round(avg, 4),
        max_premium_pct: rows.length ? round(Math.max(...rows.map((r) => Number(r.max_premium_pct))), 4) : null,
        min_premium_pct: rows.length ? round(Math.min(...rows.map((r) => Number(r.min_premium_pct))), 4) : null,
        data_points: points,
      },
    } satisfies PremiumResponse;
  });
}
