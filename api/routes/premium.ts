// GET /v1/premium: exchange VWAP against the synthetic cross-rate over time
// (sql/functions/50_premium_series.sql), plus the current premium from the live snapshot.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { validationError } from '../errors.js';
import { date, dayStart, numeric, timestamp } from '../../lib/format.js';
import { knownPair, type Operation } from '../operation.js';
import { premiumSeries } from '../queries/rates.js';
import { PREMIUM_RESPONSE, type PremiumResponse } from '../schemas.js';
import { DATE, PAIR, parseQuery } from '../validate.js';
import { premiumNow, premiumSeriesFigures } from '../../lib/methodology/figures.js';
import { DEFAULT_INTERVAL, INTERVAL_NAMES, intervalOf, observationsOf, type IntervalName } from '../../lib/intervals.js';

const DAY_MS = 86_400_000;
/**
 * Longest range per interval. The answer is not paginated: at most a week of 5-minute buckets
 * (MAX_ROWS); its cost is the observations it reads (the candles the interval is built from:
 * 5-minute ones for an hour's buckets, hourly ones for a day's): at most about MAX_OBSERVATIONS;
 * and never more than a year.
 */
const MAX_ROWS = 2_016;
const MAX_OBSERVATIONS = 9_000;
const MAX_DAYS = 366;
const perDay = (ms: number) => DAY_MS / ms;
const maxRangeDays = (name: IntervalName) =>
  Math.min(Math.floor(MAX_ROWS / perDay(intervalOf(name).ms)), Math.floor(MAX_OBSERVATIONS / perDay(observationsOf(name).ms)), MAX_DAYS);
const RANGES = INTERVAL_NAMES.map((name, i) => `${maxRangeDays(name)}${i === 0 ? ' days' : ''} at ${name}`).join(', ');

const query = {
  type: 'object',
  required: ['pair'],
  additionalProperties: false,
  properties: {
    pair: PAIR,
    start: { ...DATE, description: `first UTC day, inclusive; default: the last 24 hours. The range spans at most ${RANGES}` },
    end: { ...DATE, description: 'last UTC day, inclusive' },
    interval: { enum: INTERVAL_NAMES, default: DEFAULT_INTERVAL },
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
    const maxDays = maxRangeDays(q.interval as IntervalName);
    if (to.getTime() - from.getTime() > maxDays * DAY_MS) throw validationError(`the range may span at most ${maxDays} days at interval ${q.interval}`);

    const rows = await deps.read.run((sql) => premiumSeries(sql, pair.pair, q.interval, from, to));
    const series = premiumSeriesFigures(rows);

    const live = deps.snapshot.get(pair.pair);
    const premium = live && live.calculation === 'vwap' && live.synthetic ? premiumNow(live.exactRate, live.synthetic.exact, pair.quote) : null;
    const current =
      live && live.synthetic && premium
        ? { local_price: numeric(live.rate), synthetic_price: numeric(live.synthetic.price), ...premium, timestamp: timestamp(live.time) }
        : null;

    ctx.body = {
      pair: pair.pair,
      current,
      interval: q.interval,
      // the dates given, as historical echoes them (or the UTC days of the default range)
      start: q.start ?? date(from),
      end: q.end ?? date(to.getTime() - 1),
      data: rows.map((r, i) => {
        const b = series.buckets[i]!;
        return {
          timestamp: timestamp(r.bucket),
          avg_premium_pct: b.avg_premium_pct,
          max_premium_pct: b.max_premium_pct,
          min_premium_pct: b.min_premium_pct,
          avg_vwap: numeric(r.avg_vwap),
          avg_synthetic: numeric(r.avg_synthetic),
          data_points: b.data_points,
        };
      }),
      meta: { request_id: ctx.state.requestId, ...series.overall },
    } satisfies PremiumResponse;
  });
}
