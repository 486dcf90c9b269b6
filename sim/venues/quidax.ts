// Quidax's public REST API as the simulator serves it under /quidax, following Quidax's API
// documentation (https://docs.quidax.io/, whose rate limits are at https://docs.quidax.io/docs/security)
// and the clients written against the live API that name the paths and fields
// (https://github.com/gray-adeyi/pyquidax: markets, trades/{market};
// https://github.com/OnuegbuUdochukwu/Quidax-public-trades-feed: the trade's fields and types):
//   GET /api/v1/markets            {"status":"success","message":"Successful","data":[{id, base_unit, quote_unit}]}
//   GET /api/v1/trades/{market}    {"status":"success","message":"Successful","data":[{trade_id, price, base_volume, quote_volume, timestamp, type}]}
// The public trades endpoint takes no time or cursor parameter: it returns the most recent trades
// only (the simulator returns the latest 100, newest first). `trade_id` is an integer, price and
// volumes decimal strings, `timestamp` an integer (ms here: the sources give its type, not its
// unit), `type` the taker's side. A market lists its id and units; the other market fields seen in
// older documents (precisions, limits) are not confirmed by a source and are not sent. Quidax
// publishes 300 calls a minute for these endpoints (not enforced here: the `rate_limit` fault
// answers 429) and today lists NGN markets (no GHS). Errors are {"status":"error","message":"..."}.
import { venueSymbol } from '../catalog.js';
import { backward, decimal, type SimTrade } from '../types.js';
import { listedPairs, type Wire, type WireContext, type WireResponse } from '../wire.js';

const RECENT = 100;

function fail(status: number, message: string): WireResponse {
  return { status, body: { status: 'error', message, data: null } };
}

function markets(ctx: WireContext): WireResponse {
  const data = listedPairs(ctx.source, 'quidax').map(({ base, quote }) => ({
    id: venueSymbol('quidax', base, quote),
    base_unit: base.toLowerCase(),
    quote_unit: quote.toLowerCase(),
  }));
  return { status: 200, body: { status: 'success', message: 'Successful', data } };
}

function trades(market: string, ctx: WireContext): WireResponse {
  const listed = listedPairs(ctx.source, 'quidax').find((p) => venueSymbol('quidax', p.base, p.quote) === market);
  if (!listed) return fail(404, `Market ${market} not found`);
  const tape = ctx.source.tape('quidax', listed.pair, ctx.now);
  const list: SimTrade[] = tape ? backward(tape, -Infinity, ctx.now, RECENT) : [];
  const data = ctx.shape(list).map((t) => ({
    trade_id: /^\d+$/.test(t.id) ? Number(t.id) : t.id,
    price: t.priceText ?? decimal(t.price),
    base_volume: t.amountText ?? decimal(t.amount),
    quote_volume: decimal(Number((t.price * t.amount).toFixed(8))),
    timestamp: t.time,
    type: t.side,
  }));
  return { status: 200, body: { status: 'success', message: 'Successful', data } };
}

export const quidaxWire: Wire = {
  prefix: 'quidax',
  handle(req, ctx) {
    const s = req.segments;
    if (req.method === 'GET' && s.length === 3 && s[0] === 'api' && s[1] === 'v1' && s[2] === 'markets') return markets(ctx);
    if (req.method === 'GET' && s.length === 4 && s[0] === 'api' && s[1] === 'v1' && s[2] === 'trades') {
      return trades(s[3]!.toLowerCase(), ctx);
    }
    return fail(404, `Not found: /${s.join('/')}`);
  },
  error(kind) {
    return kind === 'rate_limit' ? fail(429, 'Too many requests, slow down') : fail(500, 'Internal server error');
  },
};
