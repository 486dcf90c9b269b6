// GET /v1/rates/historical: OHLCV candles with per-candle verification, keyset-paginated; as JSON,
// or as CSV (format=csv, or Accept: text/csv) with the same rules and pages, the page's meta in
// headers and its rows streamed as they are read.
import { candleCsv } from '../candle-files.js';
import { sendJsonPage } from '../candle-json.js';
import type { AppContext, AppDeps, AppRouter, PairInfo } from '../context.js';
import { CSV_TYPE } from '../csv.js';
import { ApiError, validationError } from '../errors.js';
import { date, dayStart, parseTimestamp, timestamp } from '../../lib/format.js';
import { candleChunks, PAGE_STATEMENT_ROWS, pageBounds, type CandlePageQuery } from '../queries/candles.js';
import { knownPair, requireInterval, type Operation } from '../operation.js';
import { HISTORICAL_RESPONSE, TIMESTAMP } from '../schemas.js';
import { byteStream, gzipEncoded, sendStream } from '../streamed.js';
import { DEFAULT_INTERVAL, INTERVAL_NAMES, intervalOf, type IntervalName } from '../../lib/intervals.js';
import { DEFAULT_PAGE, TIER_RULES, atLeast, tierLabel } from '../../lib/tiers.js';
import { DATE, PAIR, parseQuery } from '../validate.js';
import { pageSlots } from '../limits/concurrency.js';

const DAY_MS = 86_400_000;

const query = {
  type: 'object',
  required: ['pair', 'start', 'end'],
  additionalProperties: false,
  properties: {
    pair: PAIR,
    start: { ...DATE, description: 'first UTC day, inclusive' },
    end: { ...DATE, description: 'last UTC day, inclusive' },
    interval: { enum: INTERVAL_NAMES, default: DEFAULT_INTERVAL },
    limit: { type: 'integer', minimum: 1, maximum: 10_000, description: `candles per page; default ${DEFAULT_PAGE}, at most the tier's maximum` },
    cursor: { type: 'string', maxLength: 40, description: 'meta.next_cursor of the previous page (X-Next-Cursor for CSV), unchanged' },
    format: { enum: ['json', 'csv'], description: 'json (the default) or csv; without it, `Accept: text/csv` asks for CSV' },
  },
} as const;

const CSV_ONLY = 'CSV answers only';

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/rates/historical',
    summary: 'OHLCV candles for one pair, cursor-paginated',
    description: [
      'As JSON, or as CSV (`text/csv`) with `format=csv` or `Accept: text/csv`: the same parameters, limits, tier rules and pages, its rows streamed as they are read (gzip-encoded when Accept-Encoding allows). Errors are JSON either way. (The response below shows JSON only, so that a generated client types `data` as the JSON body.)',
      "CSV is RFC 4180 (CRLF line ends): a header line, then a line per candle with the candle's fields flat, in this order: time, pair, open, high, low, close, vwap, total_volume, settled, methodology_version, status, data_quality, and for Builder and up confidence, divergence_pct, synthetic_price, sources_count. Values are written as the JSON shows them; an empty field is null.",
      "A CSV page's meta is in headers: `X-Has-More` (true or false) and, when another page follows, `X-Next-Cursor` (meta.next_cursor: send it as `cursor`) and `Link: <url>; rel=\"next\"` (this request with that cursor).",
    ].join('\n\n'),
    tier: 'free',
    query,
    response: HISTORICAL_RESPONSE,
    successHeaders: {
      'X-Has-More': { description: `${CSV_ONLY}: whether another page follows (meta.has_more).`, schema: { type: 'string', enum: ['true', 'false'] } },
      'X-Next-Cursor': { description: `${CSV_ONLY}, when another page follows: the cursor of the next page (meta.next_cursor).`, schema: TIMESTAMP },
      Link: { description: `${CSV_ONLY}, when another page follows: \`<url>; rel="next"\`, this request with the next page's cursor.`, schema: { type: 'string' } },
    },
    errors: ['interval_not_available', 'history_limit_exceeded'],
    // weighed by what the tier can be served: a limit past its largest page is the route's 400
    slots: (q, tier) => pageSlots(Math.min(Number(q.limit ?? DEFAULT_PAGE), TIER_RULES[tier].maxPage)),
  },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/rates/historical', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const tier = ctx.state.customer!.tier;
    const rules = TIER_RULES[tier];
    const pair = knownPair(deps, q.pair, 'pair');
    const interval = q.interval as IntervalName;
    const from = dayStart(q.start);
    const to = new Date(dayStart(q.end).getTime() + DAY_MS);
    if (to <= from) throw validationError("'end' must not be before 'start'");
    const limit = q.limit ?? Math.min(DEFAULT_PAGE, rules.maxPage);
    if (limit > rules.maxPage) throw validationError(`'limit' must be from 1 to ${rules.maxPage} on the ${tierLabel(tier)} tier`);
    requireInterval(ctx, interval);
    let after: Date | null = null;
    if (q.cursor !== undefined) {
      after = parseTimestamp(q.cursor);
      if (!after) throw validationError("'cursor' must be the meta.next_cursor of a previous page");
      if (after < from || after >= to) throw validationError("'cursor' lies outside [start, end]");
      // a cursor of another interval's page (5m's 01:10 sent with 1h) would skip the candle holding it
      if (after.getTime() % intervalOf(interval).ms !== 0) throw validationError(`'cursor' is not the start of a ${interval} candle: send the meta.next_cursor of a previous page of this query`);
    }
    if (rules.historyDays !== null) {
      const oldest = Math.floor(Date.now() / DAY_MS) * DAY_MS - rules.historyDays * DAY_MS;
      // A later page is judged by where it begins, its cursor, with a day's grace: `start` is sent
      // unchanged on every page, and a run begun at the window's edge must not be refused halfway
      // once 00:00 UTC passes (its start then a day outside the window, the rows it pages inside).
      const reach = `The ${tierLabel(tier)} tier reaches back ${rules.historyDays} days`;
      if (after && after.getTime() < oldest - DAY_MS) {
        throw new ApiError(403, 'history_limit_exceeded', `${reach}: this page's 'cursor' lies before ${date(new Date(oldest - DAY_MS))}; start again from ${date(new Date(oldest))} or later.`);
      }
      if (!after && from.getTime() < oldest) {
        throw new ApiError(403, 'history_limit_exceeded', `${reach}: 'start' must be ${date(new Date(oldest))} or later.`);
      }
    }

    const request: CandlePageQuery = { pair: pair.pair, interval, from, to, after, limit };
    const full = atLeast(tier, 'builder');
    ctx.vary('Accept');
    if (q.format ? q.format === 'csv' : ctx.accepts('application/json', 'text/csv') === 'text/csv') return sendCsv(ctx, deps, request, pair, full);

    return sendJsonPage(ctx, deps, { head: { pair: pair.pair, interval, start: q.start, end: q.end }, query: request, pair, full, limitMax: rules.maxPage });
  });
}

/**
 * The page as CSV. Where it ends is found first (candles_until), so that its meta can go in the
 * headers; then its rows are read and sent a statement at a time.
 */
async function sendCsv(ctx: AppContext, deps: AppDeps, page: CandlePageQuery, pair: PairInfo, full: boolean): Promise<void> {
  // on a replica as the JSON page is (one server for the bounds and every statement of rows)
  const { last, chunks } = await deps.read.run(async (sql) => {
    const { last, until } = await pageBounds(sql, page);
    // every candle before `until`, however many: a bucket a late trade fills after the bounds were
    // read is sent too, where a row limit would cut the page's last candle, which the cursor passes
    return { last, chunks: await candleChunks(sql, { ...page, to: until, limit: Number.MAX_SAFE_INTEGER }, { chunkRows: PAGE_STATEMENT_ROWS }) };
  });
  ctx.set('X-Has-More', String(last !== null));
  if (last) {
    const cursor = timestamp(last);
    const next = new URLSearchParams(ctx.querystring);
    next.set('cursor', cursor);
    ctx.set('X-Next-Cursor', cursor);
    ctx.set('Link', `<${ctx.path}?${next}>; rel="next"`);
  }
  ctx.type = CSV_TYPE;
  sendStream(ctx, gzipEncoded(ctx, byteStream(candleCsv(chunks, pair, full))));
}
