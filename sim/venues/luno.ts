// Luno's public REST API as the simulator serves it under /luno, following Luno's API reference
// (https://www.luno.com/en/developers/api, OpenAPI 1.2.5: ListTrades, Markets, Rate Limiting,
// Error Codes) and its Go SDK's types (https://github.com/luno/luno-go, types.go PublicTrade and
// MarketInfo, errors.go):
//   GET /api/exchange/1/markets[?pair=XBTNGN,XBTZAR]  {"markets":[{market_id, trading_status, base_currency, counter_currency, ...}]}
//   GET /api/1/trades?pair=XBTNGN[&since=ms]          {"trades":[{sequence, timestamp, price, volume, is_buy}]}
// ListTrades: at most 100 trades, newest first, never older than 24h; `since` returns the trades
// executed after that time (the oldest 100 of them, so a client can iterate), and a `since` more
// than 24h ago is an error. Prices and volumes are decimal strings (eight decimals, as in the
// responses recorded in ccxt's luno.js), `sequence` and `timestamp` integers, the scales of a
// market integers. Bitcoin is XBT. Errors are {"error", "error_code", "error_action"}. Luno
// publishes 300 calls a minute (not enforced here: the `rate_limit` fault answers 429) and says
// market data may be cached up to a second (not modelled: within the collector's grace).
import { amountDecimals, lunoCurrency, priceDecimals, venueSymbol } from '../catalog.js';
import { backward, decimal, forward, padded, type SimTrade } from '../types.js';
import { intParam, listedPairs, type Wire, type WireContext, type WireRequest, type WireResponse } from '../wire.js';

const DAY = 24 * 60 * 60 * 1000;
const PAGE = 100;

function fail(status: number, code: string, message: string): WireResponse {
  return { status, body: { error: message, error_code: code, error_action: {} } };
}

function markets(req: WireRequest, ctx: WireContext): WireResponse {
  // `pair` is a list, comma-separated (form style, not exploded) or repeated
  const wanted = req.query.getAll('pair').flatMap((p) => p.split(',')).filter((p) => p !== '');
  const list = listedPairs(ctx.source, 'luno')
    .map(({ base, quote }) => {
      const pd = priceDecimals(base, quote);
      const ad = amountDecimals(base);
      return {
        market_id: venueSymbol('luno', base, quote),
        trading_status: 'ACTIVE',
        base_currency: lunoCurrency(base),
        counter_currency: lunoCurrency(quote),
        min_volume: decimal(Number((10 ** (1 - ad)).toFixed(ad))),
        max_volume: base === 'BTC' ? '100.00' : '1000000.00',
        volume_scale: ad,
        min_price: decimal(10 ** -pd),
        max_price: '10000000000.00',
        price_scale: pd,
        fee_scale: 8,
      };
    })
    .filter((m) => wanted.length === 0 || wanted.includes(m.market_id));
  return { status: 200, body: { markets: list } };
}

function trades(req: WireRequest, ctx: WireContext): WireResponse {
  const marketId = req.query.get('pair');
  if (!marketId) return fail(400, 'ErrInvalidArguments', 'pair: required');
  const listed = listedPairs(ctx.source, 'luno').find((p) => venueSymbol('luno', p.base, p.quote) === marketId);
  if (!listed) return fail(400, 'ErrInvalidMarketPair', `Invalid market pair: ${marketId}`);
  const since = intParam(req.query, 'since');
  if (since !== undefined && Number.isNaN(since)) return fail(400, 'ErrInvalidArguments', 'since: not a timestamp');
  if (since !== undefined && since < ctx.now - DAY) {
    return fail(400, 'ErrInvalidArguments', 'since: cannot be more than 24 hours ago');
  }
  const tape = ctx.source.tape('luno', listed.pair, ctx.now);
  let list: SimTrade[] = [];
  if (tape) {
    list =
      since === undefined
        ? backward(tape, ctx.now - DAY, ctx.now, PAGE)
        : forward(tape, since + 1, ctx.now, PAGE).reverse();
  }
  const body = {
    trades: ctx.shape(list).map((t) => ({
      sequence: /^\d+$/.test(t.id) ? Number(t.id) : t.id,
      timestamp: t.time,
      price: t.priceText ?? padded(t.price, 8),
      volume: t.amountText ?? padded(t.amount, 8),
      is_buy: t.side === 'buy',
    })),
  };
  return { status: 200, body };
}

export const lunoWire: Wire = {
  prefix: 'luno',
  handle(req, ctx) {
    const path = req.segments.join('/');
    if (req.method === 'GET' && path === 'api/exchange/1/markets') return markets(req, ctx);
    if (req.method === 'GET' && path === 'api/1/trades') return trades(req, ctx);
    return fail(404, 'ErrNotFound', `Not found: /${path}`);
  },
  error(kind) {
    return kind === 'rate_limit'
      ? fail(429, 'ErrTooManyRequests', 'Too many requests')
      : fail(500, 'ErrInternal', 'Internal error');
  },
};
