// GET /v1/rates/spread: bid/ask approximated from the low/high of the newest closed 5-minute bucket
// in which the pair traded, across venues and per venue in that same bucket, against the synthetic
// cross-rate (sql/functions/70_spread_inputs.sql). Not order-book depth, and it says so.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { notFound, unavailable } from '../errors.js';
import { numeric, timestamp } from '../../lib/format.js';
import { spreadFigures } from '../../lib/methodology/figures.js';
import { knownPair, type Operation } from '../operation.js';
import { spreadNow } from '../queries/rates.js';
import { SPREAD_RESPONSE, type SpreadResponse } from '../schemas.js';
import { PAIR, parseQuery } from '../validate.js';
import { thresholdsFor } from '../../lib/methodology/parameters.js';

const query = { type: 'object', required: ['pair'], additionalProperties: false, properties: { pair: PAIR } } as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/rates/spread', summary: 'Approximate bid/ask spread and premium over the synthetic rate', tier: 'builder', query, response: SPREAD_RESPONSE, errors: ['not_found'] },
];

/** Words for a premium in percent; "near parity" within a quarter of the verified threshold. */
export function interpretPremium(pct: number, quote: string): string {
  const t = thresholdsFor(quote);
  const size = Math.abs(pct);
  if (size <= t.verified / 4) return 'near parity';
  const side = pct > 0 ? 'premium' : 'discount';
  return size <= t.caution ? `moderate ${side}` : `significant ${side}`;
}

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/rates/spread', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const pair = knownPair(deps, q.pair, 'pair');
    // the spread and the synthetic price of its bucket from one server
    const found = await deps.read.run((sql) => spreadNow(sql, pair.pair));
    if (!found) throw notFound(`No trades for ${pair.pair} in the last 24 hours to estimate a spread from.`);
    const { rows, overall } = found;
    if (found.synthetic === null || !Number(found.synthetic)) throw unavailable(`No synthetic price for ${pair.pair} at ${timestamp(overall.bucket)} (its USDT pair did not trade in that bucket, or no FX rate); retry shortly.`, 60);
    const f = spreadFigures(overall.bid, overall.ask, found.synthetic);
    const sources = rows
      .filter((r) => r.exchange !== null)
      .map((r) => ({ exchange: r.exchange!, bid: numeric(r.bid), ask: numeric(r.ask) }));
    sources.push({ exchange: 'synthetic', bid: f.synthetic, ask: f.synthetic });
    ctx.body = {
      pair: pair.pair,
      bid: f.bid,
      ask: f.ask,
      mid: f.mid,
      spread: f.spread,
      spread_bps: f.spread_bps,
      synthetic: { price: f.synthetic, source: `${pair.base}/USDT VWAP x USD/${pair.quote} (median of fresh FX sources)` },
      premium: {
        absolute: f.premium,
        pct: f.premium_pct,
        interpretation: interpretPremium(f.premium_pct, pair.quote),
      },
      timestamp: timestamp(overall.bucket),
      sources,
      note: 'bid and ask are approximated from the low and high of trades in the newest settled 5-minute bucket (timestamp is its start); they are not order-book depth.',
    } satisfies SpreadResponse;
  });
}
