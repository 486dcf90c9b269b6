// GET /v1/rates/eod: one UTC day's OHLCV snapshot (sql/functions/60_eod.sql).
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { notFound } from '../errors.js';
import { date, numeric } from '../../lib/format.js';
import { METHODOLOGY_VERSION } from '../../lib/methodology/parameters.js';
import { publishedVwap } from '../../lib/methodology/figures.js';
import { knownPair, type Operation } from '../operation.js';
import { eodOf } from '../queries/rates.js';
import { EOD_RESPONSE, type EodResponse } from '../schemas.js';
import { DATE, PAIR, parseQuery } from '../validate.js';

const query = {
  type: 'object',
  required: ['pair', 'date'],
  additionalProperties: false,
  properties: { pair: PAIR, date: DATE },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/rates/eod', summary: 'End-of-day OHLCV snapshot (UTC day)', tier: 'free', query, response: EOD_RESPONSE, errors: ['not_found'] },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/rates/eod', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const pair = knownPair(deps, q.pair, 'pair');
    if (q.date >= new Date().toISOString().slice(0, 10)) throw notFound(`${q.date} (UTC) has not ended yet; its snapshot exists from 00:00 UTC the next day.`);
    // A day's snapshot is served once its last bucket has settled: at 00:00:30 the venues may not
    // have reported 23:59 yet, and a snapshot served then would change minutes later.
    const row = await deps.read.run((sql) => eodOf(sql, pair.pair, q.date));
    if (!row) throw notFound(`No trades for ${pair.pair} on ${q.date}.`);
    if (!row.settled) {
      throw notFound(
        `${q.date} (UTC) is not settled yet for ${pair.pair}: its snapshot exists once every venue has collected past 00:00 UTC, ` +
          `at the latest ${Math.round(deps.config.settleAfterSeconds / 60)} minutes after it.`,
      );
    }
    ctx.body = {
      date: date(row.date),
      pair: row.pair,
      open: numeric(row.open),
      high: numeric(row.high),
      low: numeric(row.low),
      close: numeric(row.close),
      vwap: publishedVwap(row.pv, row.total_volume),
      total_volume: numeric(row.total_volume),
      methodology_version: METHODOLOGY_VERSION,
    } satisfies EodResponse;
  });
}
