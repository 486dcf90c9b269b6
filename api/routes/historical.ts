// GET /v1/rates/historical: OHLCV candles with per-candle verification, keyset-paginated.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { ApiError, validationError } from '../errors.js';
import { date, dayStart, numeric, parseTimestamp } from '../../lib/format.js';
import { candlePage, type PageRow } from '../queries/candles.js';
import { knownPair, type Operation } from '../operation.js';
import { HISTORICAL_RESPONSE, type Candle, type HistoricalResponse } from '../schemas.js';
import { DEFAULT_PAGE, TIER_RULES, atLeast, tierLabel } from '../tiers.js';
import { DATE, PAIR, parseQuery } from '../validate.js';
import * as x from '../../lib/methodology/exact.js';
import { METHODOLOGY_VERSION } from '../../lib/methodology/parameters.js';
import * as v from '../../lib/methodology/rules.js';

const DAY_MS = 86_400_000;
const BUCKET_MS = { '5m': 300_000, '1h': 3_600_000, '1d': DAY_MS } as const;

const query = {
  type: 'object',
  required: ['pair', 'start', 'end'],
  additionalProperties: false,
  properties: {
    pair: PAIR,
    start: { ...DATE, description: 'first UTC day, inclusive' },
    end: { ...DATE, description: 'last UTC day, inclusive' },
    interval: { enum: ['5m', '1h', '1d'], default: '1h' },
    limit: { type: 'integer', minimum: 1, maximum: 10_000, description: `candles per page; default ${DEFAULT_PAGE}, at most the tier's maximum` },
    cursor: { type: 'string', maxLength: 40, description: 'meta.next_cursor of the previous page, unchanged' },
  },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/rates/historical', summary: 'OHLCV candles for one pair, cursor-paginated', tier: 'free', query, response: HISTORICAL_RESPONSE, errors: ['interval_not_available', 'history_limit_exceeded'] },
];

/** A candle's VWAP and synthetic price, exact, from its sums (null where a sum is missing). */
function prices(c: PageRow) {
  const volume = x.parseDecimal(c.volume);
  const vwap = volume.n > 0n ? x.div(x.parseDecimal(c.pv), volume) : null;
  const usdVolume = c.usd_volume === null ? null : x.parseDecimal(c.usd_volume);
  const synthetic =
    c.units_per_usd === null || c.usd_pv === null || !usdVolume || usdVolume.n === 0n
      ? null
      : x.mul(x.div(x.parseDecimal(c.usd_pv), usdVolume), x.parseDecimal(c.units_per_usd));
  return { vwap, synthetic };
}

const parsed = (text: string | null) => (text === null ? x.ZERO : x.parseDecimal(text));

function verification(c: PageRow, p: ReturnType<typeof prices>, quote: string, full: boolean): Candle['verification'] {
  const div = p.vwap ? v.divergence(p.vwap, p.synthetic) : null;
  const out: Candle['verification'] = {
    status: v.verificationStatus(div, quote),
    data_quality: c.venues >= 2 ? 'high' : c.venues === 1 ? 'medium' : 'low',
  };
  if (full) {
    const mean = parsed(c.venue_mean);
    const dispersion = c.venues < 2 || mean.n <= 0n ? x.ZERO : x.div(x.sub(parsed(c.venue_max), parsed(c.venue_min)), mean);
    out.confidence = v.confidence({ sources: c.venues, dispersion, divergence: div, quote, ageSeconds: 0 });
    out.divergence_pct = div === null ? null : v.percent(div);
    out.synthetic_price = p.synthetic ? Number(v.publishedRate(p.synthetic)) : null;
    out.sources_count = c.venues;
  }
  return out;
}

/** One candle as the contract shows it (JSON numbers: the published rounding, lib/methodology). */
export function candleOf(c: PageRow, pair: { pair: string; quote: string }, full: boolean): Candle {
  const p = prices(c);
  return {
    time: c.t,
    pair: pair.pair,
    open: numeric(c.open),
    high: numeric(c.high),
    low: numeric(c.low),
    close: numeric(c.close),
    vwap: p.vwap ? Number(v.publishedRate(p.vwap)) : null,
    total_volume: numeric(c.volume),
    settled: c.settled,
    verification: verification(c, p, pair.quote, full),
    methodology_version: METHODOLOGY_VERSION,
  };
}

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/rates/historical', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const tier = ctx.state.customer!.tier;
    const rules = TIER_RULES[tier];
    const pair = knownPair(deps, q.pair, 'pair');
    const interval = q.interval as '5m' | '1h' | '1d';
    const from = dayStart(q.start);
    const to = new Date(dayStart(q.end).getTime() + DAY_MS);
    if (to <= from) throw validationError("'end' must not be before 'start'");
    const limit = q.limit ?? Math.min(DEFAULT_PAGE, rules.maxPage);
    if (limit > rules.maxPage) throw validationError(`'limit' must be from 1 to ${rules.maxPage} on the ${tierLabel(tier)} tier`);
    if (!rules.intervals.includes(interval)) {
      throw new ApiError(403, 'interval_not_available', `The ${interval} interval is not available on the ${tierLabel(tier)} tier (${rules.intervals.join(', ')}).`);
    }
    let after: Date | null = null;
    if (q.cursor !== undefined) {
      after = parseTimestamp(q.cursor);
      if (!after) throw validationError("'cursor' must be the meta.next_cursor of a previous page");
      if (after < from || after >= to) throw validationError("'cursor' lies outside [start, end]");
      // a cursor of another interval's page (5m's 01:10 sent with 1h) skipped the candle holding it
      if (after.getTime() % BUCKET_MS[interval] !== 0) throw validationError(`'cursor' is not the start of a ${interval} candle: send the meta.next_cursor of a previous page of this query`);
    }
    if (rules.historyDays !== null) {
      const oldest = Math.floor(Date.now() / DAY_MS) * DAY_MS - rules.historyDays * DAY_MS;
      // A later page is judged by where it begins, its cursor, with a day's grace: `start` is sent
      // unchanged on every page, so a run begun at the window's edge was refused halfway once
      // 00:00 UTC passed (its start now a day outside the window, the rows it pages well inside).
      const reach = `The ${tierLabel(tier)} tier reaches back ${rules.historyDays} days`;
      if (after && after.getTime() < oldest - DAY_MS) {
        throw new ApiError(403, 'history_limit_exceeded', `${reach}: this page's 'cursor' lies before ${date(new Date(oldest - DAY_MS))}; start again from ${date(new Date(oldest))} or later.`);
      }
      if (!after && from.getTime() < oldest) {
        throw new ApiError(403, 'history_limit_exceeded', `${reach}: 'start' must be ${date(new Date(oldest))} or later.`);
      }
    }

    const rows = await deps.read.run((sql) => candlePage(sql, { pair: pair.pair, interval, from, to, after, limit }));
    const hasMore = rows.length > limit;
    const page = hasMore ? rows.slice(0, limit) : rows;
    const full = atLeast(tier, 'builder');
    ctx.body = {
      pair: pair.pair,
      interval,
      start: q.start,
      end: q.end,
      data: page.map((c) => candleOf(c, pair, full)),
      meta: {
        request_id: ctx.state.requestId,
        row_count: page.length,
        has_more: hasMore,
        next_cursor: hasMore ? page[page.length - 1]!.t : null,
        limit,
        limit_max: rules.maxPage,
      },
    } satisfies HistoricalResponse;
  });
}
