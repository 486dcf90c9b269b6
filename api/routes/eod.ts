// GET /v1/rates/eod: one UTC day's OHLCV snapshot (sql/views/60_eod.sql).
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { notFound } from '../errors.js';
import { date, num, numeric } from '../format.js';
import { knownPair, type Operation } from '../operation.js';
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
    const [row] = await deps.sql`SELECT * FROM eod(${pair.pair}, ${q.date}::date)`;
    if (!row) throw notFound(`No trades for ${pair.pair} on ${q.date}.`);
    ctx.body = {
      date: date(row.date),
      pair: row.pair,
      open: numeric(row.open),
      high: numeric(row.high),
      low: numeric(row.low),
      close: numeric(row.close),
      vwap: num(row.vwap),
      total_volume: numeric(row.total_volume),
    } satisfies EodResponse;
  });
}
