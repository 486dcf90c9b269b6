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
//
// Its WebSocket market streams under /binance, following web-socket-streams.md of the same
// repository (https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams:
// "General WSS information", "Live Subscribing/Unsubscribing to streams", "Aggregate Trade
// Streams") and its CHANGELOG.md (serverShutdown):
//   /binance/ws                        raw: subscribe at run time
//   /binance/ws/<stream>               raw, one stream from the start: events as they are
//   /binance/stream[?streams=a/b]      combined: each event wrapped {"stream":"btcusdt@aggTrade","data":{...}}
// Requests {"method":"SUBSCRIBE"|"UNSUBSCRIBE","params":["btcusdt@aggTrade"],"id":1} are answered
// {"result":null,"id":1}; {"method":"LIST_SUBSCRIPTIONS","id":3} with {"result":[...],"id":3}; a
// malformed one with {"code":2|3,"msg":"...","id":...} as the documentation's error table has it.
// Stream names are lower case (`<symbol>@aggTrade`); a SUBSCRIBE naming another form is answered
// code 2. A name for a symbol not listed, or another stream type (@trade, @depth...), is accepted
// and never sends anything (the simulator streams aggTrade only); so is any name in the path
// (ccxt connects to /ws/0, a stream number of its own, and subscribes at run time). Event `aggTrade`: {"e":"aggTrade","E":eventMs,"s":"BTCUSDT","a":id,
// "p":"price","q":"qty","f":first,"l":last,"T":tradeMs,"m":buyerIsMaker,"M":true}: `a`, `p`, `q`,
// `f`, `l`, `T` and `m` exactly what GET /api/v3/aggTrades gives for the trade (aggTradeRow), `E`
// the simulator's clock when it is sent. The server sends a ping frame every 20 s and closes a
// connection that has not answered one with a pong within a minute (unsolicited pongs do not
// count); every connection is cut at 24 h, optionally after a serverShutdown event
// {"e":"serverShutdown","E":ms} (the WebSocket API documents it wrapped in {"event":...}; the
// streams' form is not shown, the simulator sends it bare). Not enforced: 5 messages a second from
// the client, 1,024 streams a connection, 300 connections per 5 minutes.
import { amountDecimals, priceDecimals, venueSymbol } from '../catalog.js';
import type { StreamConn, StreamSession, StreamWire } from '../stream-wire.js';
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
  return { status: 200, body: ctx.shape(list).map(aggTradeRow) };
}

/** A trade as GET /api/v3/aggTrades writes it (one trade per aggregate: first = last = a). */
function aggTradeRow(t: SimTrade): { a: number | string; p: string; q: string; f: number | string; l: number | string; T: number; m: boolean; M: true } {
  const id = /^\d+$/.test(t.id) ? Number(t.id) : t.id;
  return { a: id, p: t.priceText ?? num(t.price), q: t.amountText ?? num(t.amount), f: id, l: id, T: t.time, m: t.side === 'sell', M: true };
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

/** A stream name as Binance spells it: lower-case symbol, '@', the stream type. */
const STREAM_NAME = /^[a-z0-9]+@[A-Za-z0-9_@]+$/;

function isRequestId(id: unknown): boolean {
  return id === null || (typeof id === 'number' && Number.isInteger(id) && id >= 0) || (typeof id === 'string' && /^[A-Za-z0-9-]{1,36}$/.test(id));
}

export const binanceStream: StreamWire = {
  prefix: 'binance',
  accept(segments, query, ctx) {
    const path = segments.join('/');
    // stream name -> the afrates pair it carries (undefined: accepted, nothing simulated for it)
    const pairOf = (name: string): string | undefined => {
      const [symbol, type] = name.split('@') as [string, string];
      if (type !== 'aggTrade') return undefined;
      return listedPairs(ctx.source, 'binance').find((p) => venueSymbol('binance', p.base, p.quote).toLowerCase() === symbol)?.pair;
    };
    let combined: boolean;
    let initial: string[];
    if (path === 'ws') [combined, initial] = [false, []];
    else if (segments.length === 2 && segments[0] === 'ws') [combined, initial] = [false, [segments[1]!]];
    else if (path === 'stream') [combined, initial] = [true, (query.get('streams') ?? '').split('/').filter((s) => s !== '')];
    else return { status: 404, message: `no stream at /binance/${path}` };

    return (conn: StreamConn): StreamSession => {
      const t = ctx.timings;
      const streams = new Map<string, string | undefined>();
      const add = (name: string): void => {
        if (streams.has(name)) return;
        const pair = pairOf(name);
        streams.set(name, pair);
        if (pair !== undefined) conn.subscribe(pair);
      };
      const remove = (name: string): void => {
        if (!streams.has(name)) return;
        const pair = streams.get(name);
        streams.delete(name);
        if (pair !== undefined && ![...streams.values()].includes(pair)) conn.unsubscribe(pair);
      };
      for (const name of initial) add(name);

      // A ping every binancePingMs; a ping left without a pong for binancePongTimeoutMs ends the
      // connection (a later pong clears the wait; an unsolicited one before any ping does nothing).
      let waiting: (() => void) | undefined;
      conn.every(t.binancePingMs, () => {
        conn.ping();
        waiting ??= conn.after(t.binancePongTimeoutMs, () => conn.close(1008, 'pong timeout'));
      });
      if (t.binanceShutdownNoticeMs > 0) {
        conn.after(Math.max(0, t.binanceLifetimeMs - t.binanceShutdownNoticeMs), () => conn.send({ e: 'serverShutdown', E: ctx.now() }));
      }
      conn.after(t.binanceLifetimeMs, () => conn.close(1001, 'connection lifetime reached'));

      return {
        pong() {
          waiting?.();
          waiting = undefined;
        },
        message(text) {
          let req: Record<string, unknown>;
          try {
            const parsed: unknown = JSON.parse(text);
            if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
            req = parsed as Record<string, unknown>;
          } catch {
            conn.send({ code: 3, msg: 'Invalid JSON: expected value at line 1 column 1' });
            return;
          }
          const id = req.id ?? null;
          if (!isRequestId(id)) {
            conn.send({ code: 2, msg: 'Invalid request: request ID must be an unsigned integer', id: null });
            return;
          }
          if (typeof req.method !== 'string') {
            conn.send({ code: 2, msg: 'Invalid request: missing field `method`', id });
            return;
          }
          if (req.method === 'LIST_SUBSCRIPTIONS') {
            conn.send({ result: [...streams.keys()], id });
            return;
          }
          if (req.method !== 'SUBSCRIBE' && req.method !== 'UNSUBSCRIBE') {
            conn.send({ code: 2, msg: `Invalid request: unknown variant \`${req.method}\`, expected one of \`SUBSCRIBE\`, \`UNSUBSCRIBE\`, \`LIST_SUBSCRIPTIONS\`, \`SET_PROPERTY\`, \`GET_PROPERTY\``, id });
            return;
          }
          const params = req.params;
          if (!Array.isArray(params) || !params.every((p): p is string => typeof p === 'string' && STREAM_NAME.test(p))) {
            conn.send({ code: 2, msg: 'Invalid request: invalid stream name', id });
            return;
          }
          for (const name of params) (req.method === 'SUBSCRIBE' ? add : remove)(name);
          conn.send({ result: null, id });
        },
        deliver(pair, payload) {
          for (const [name, p] of streams) {
            if (p === pair) conn.send(combined ? { stream: name, data: payload } : payload);
          }
        },
      };
    };
  },
  render(pair, items, ctx) {
    const listed = listedPairs(ctx.source, 'binance').find((p) => p.pair === pair);
    const symbol = listed ? venueSymbol('binance', listed.base, listed.quote) : pair;
    const E = ctx.now();
    return items
      .filter((item) => !item.lost)
      .map(({ trade }) => {
        const { a, p, q, f, l, T, m, M } = aggTradeRow(trade);
        return { time: trade.time, payload: { e: 'aggTrade', E, s: symbol, a, p, q, f, l, T, m, M } };
      });
  },
};
