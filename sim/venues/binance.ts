// Binance's public spot REST API as the simulator serves it under /binance, following Binance's
// spot API documentation (https://developers.binance.com/docs/binance-spot-api-docs/rest-api, the
// same text as https://github.com/binance/binance-spot-api-docs rest-api.md, errors.md, CHANGELOG.md):
//   GET /api/v3/exchangeInfo   {timezone, serverTime, rateLimits, exchangeFilters, symbols:[...]}
//   GET /api/v3/aggTrades?symbol=BTCUSDT[&fromId][&startTime][&endTime][&limit]
//       [{"a":id,"p":"price","q":"qty","f":first,"l":last,"T":ms,"m":buyerIsMaker,"M":true}]
// aggTrades (weight 4): limit default 500, max 1000, oldest first; fromId, startTime and endTime are
// inclusive. Since 2022-12-05 (CHANGELOG) startTime and endTime may be sent alone and any distance
// apart: startTime alone gives the trades from then on, endTime alone those before it (read here as
// the latest `limit` up to it), both the trades between, each up to `limit`; with none of
// fromId/startTime/endTime the most recent trades. fromId together with a time is not documented
// for aggTrades: the simulator refuses it (-1128, "combination of optional parameters invalid"), so
// no client comes to depend on it. Ids, first and last trade ids and times are integers, prices and
// quantities strings of eight decimals. Errors are {"code": -N, "msg": "..."} (errors.md). Binance
// lists no NGN pair since it delisted them on 2024-03-07 (its announcement of 2024-03-05), nor ZAR
// pairs (delisted 2021-04-02, and again in January 2026); the catalogue lists its USDT books only.
import { amountDecimals, priceDecimals, venueSymbol } from '../catalog.js';
import { backward, decimal, forward, padded, type SimTrade } from '../types.js';
import { intParam, listedPairs, type Wire, type WireContext, type WireRequest, type WireResponse } from '../wire.js';

function fail(status: number, code: number, msg: string): WireResponse {
  return { status, body: { code, msg } };
}

/** Binance prints 8 decimals. */
function num(n: number): string {
  return padded(n, 8);
}

function exchangeInfo(ctx: WireContext): WireResponse {
  const symbols = listedPairs(ctx.source, 'binance').map(({ base, quote }) => {
    const tick = decimal(10 ** -priceDecimals(base, quote));
    const step = decimal(10 ** -Math.min(8, amountDecimals(base)));
    return {
      symbol: venueSymbol('binance', base, quote),
      status: 'TRADING',
      baseAsset: base,
      baseAssetPrecision: 8,
      quoteAsset: quote,
      quotePrecision: 8,
      quoteAssetPrecision: 8,
      baseCommissionPrecision: 8,
      quoteCommissionPrecision: 8,
      orderTypes: ['LIMIT', 'LIMIT_MAKER', 'MARKET', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT_LIMIT'],
      icebergAllowed: true,
      ocoAllowed: true,
      otoAllowed: true,
      quoteOrderQtyMarketAllowed: true,
      allowTrailingStop: true,
      cancelReplaceAllowed: true,
      isSpotTradingAllowed: true,
      isMarginTradingAllowed: false,
      filters: [
        { filterType: 'PRICE_FILTER', minPrice: num(Number(tick)), maxPrice: '10000000.00000000', tickSize: num(Number(tick)) },
        { filterType: 'LOT_SIZE', minQty: num(Number(step)), maxQty: '9000.00000000', stepSize: num(Number(step)) },
        { filterType: 'NOTIONAL', minNotional: '5.00000000', applyMinToMarket: true, maxNotional: '9000000.00000000', applyMaxToMarket: false, avgPriceMins: 5 },
      ],
      permissions: [],
      permissionSets: [['SPOT']],
      defaultSelfTradePreventionMode: 'EXPIRE_MAKER',
      allowedSelfTradePreventionModes: ['EXPIRE_TAKER', 'EXPIRE_MAKER', 'EXPIRE_BOTH'],
    };
  });
  return {
    status: 200,
    body: {
      timezone: 'UTC',
      serverTime: ctx.now,
      rateLimits: [
        { rateLimitType: 'REQUEST_WEIGHT', interval: 'MINUTE', intervalNum: 1, limit: 6000 },
        { rateLimitType: 'ORDERS', interval: 'SECOND', intervalNum: 10, limit: 100 },
        { rateLimitType: 'RAW_REQUESTS', interval: 'MINUTE', intervalNum: 5, limit: 61000 },
      ],
      exchangeFilters: [],
      symbols,
    },
  };
}

function aggTrades(req: WireRequest, ctx: WireContext): WireResponse {
  const symbol = req.query.get('symbol');
  if (!symbol) return fail(400, -1102, "Mandatory parameter 'symbol' was not sent, was empty/null, or malformed.");
  const listed = listedPairs(ctx.source, 'binance').find((p) => venueSymbol('binance', p.base, p.quote) === symbol);
  if (!listed) return fail(400, -1121, 'Invalid symbol.');
  const fromId = intParam(req.query, 'fromId');
  const startTime = intParam(req.query, 'startTime');
  const endTime = intParam(req.query, 'endTime');
  const limitParam = intParam(req.query, 'limit');
  for (const [name, v] of [['fromId', fromId], ['startTime', startTime], ['endTime', endTime], ['limit', limitParam]] as const) {
    if (v !== undefined && Number.isNaN(v)) return fail(400, -1100, `Illegal characters found in parameter '${name}'; legal range is '^[0-9]{1,20}$'.`);
  }
  if (limitParam !== undefined && limitParam <= 0) return fail(400, -1100, "Illegal characters found in parameter 'limit'.");
  const limit = Math.min(limitParam ?? 500, 1000);
  if (fromId !== undefined && (startTime !== undefined || endTime !== undefined)) {
    return fail(400, -1128, 'Combination of optional parameters invalid.');
  }
  const tape = ctx.source.tape('binance', listed.pair, ctx.now);
  let list: SimTrade[] = [];
  if (tape) {
    if (fromId !== undefined) {
      const at = tape.atLeastId(fromId);
      for (let i = at; at >= 0 && i < Math.min(at + limit, tape.length); i++) if (tape.timeAt(i) <= ctx.now) list.push(tape.at(i));
    } else if (startTime !== undefined) {
      list = forward(tape, startTime, Math.min(endTime ?? Infinity, ctx.now), limit);
    } else {
      list = backward(tape, -Infinity, Math.min(endTime ?? Infinity, ctx.now), limit).reverse();
    }
  }
  const body = ctx.shape(list).map((t) => {
    const id = /^\d+$/.test(t.id) ? Number(t.id) : t.id;
    return { a: id, p: t.priceText ?? num(t.price), q: t.amountText ?? num(t.amount), f: id, l: id, T: t.time, m: t.side === 'sell', M: true };
  });
  return { status: 200, body };
}

export const binanceWire: Wire = {
  prefix: 'binance',
  handle(req, ctx) {
    const path = req.segments.join('/');
    if (req.method === 'GET' && path === 'api/v3/exchangeInfo') return exchangeInfo(ctx);
    if (req.method === 'GET' && path === 'api/v3/aggTrades') return aggTrades(req, ctx);
    if (req.method === 'GET' && path === 'api/v3/ping') return { status: 200, body: {} };
    if (req.method === 'GET' && path === 'api/v3/time') return { status: 200, body: { serverTime: ctx.now } };
    return { status: 404, body: '' };
  },
  error(kind) {
    return kind === 'rate_limit'
      ? fail(429, -1003, 'Too much request weight used; current limit is 6000 request weight per 1 MINUTE. Please use WebSocket Streams for live updates to avoid polling the API.')
      : fail(500, -1001, 'Internal error; unable to process your request. Please try again.');
  },
};
