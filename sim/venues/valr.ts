// VALR's public REST API as the simulator serves it under /valr, following VALR's API
// documentation (https://docs.valr.com/, rendered with its examples at
// https://api-docs.rooibos.dev/operations/getV1PublicCurrencyPairTrades), the pairs recorded in
// ccxt's valr.ts (fetchMarkets) and its CDN's caching as docs/decisions.md ("Venue facts") records it:
//   GET /v1/public/pairs                      [{symbol, baseCurrency, quoteCurrency, shortName, active, ..., currencyPairType}]
//   GET /v1/public/{currencyPair}/trades[?skip][&limit][&startTime][&endTime][&beforeId]
//       [{price, quantity, currencyPair, tradedAt, takerSide, sequenceId, id, quoteVolume}]
// Trades come newest first; limit defaults to and is capped at 100; startTime/endTime are ISO 8601
// and inclusive; skip pages through the filtered result; beforeId keeps only trades before that id.
// Prices and quantities are decimal strings; `id` a UUID of version 7 (its first 48 bits the trade
// time in ms); `sequenceId` an integer beyond 2^53 (about 1.37e18 in VALR's 2025 examples), written
// as a bare JSON number. The pairs list futures too (currencyPairType FUTURE, such as USDTZARPERP).
// The trades endpoint is cached 30 s by VALR's CDN (`cache-control: max-age=30`; no VALR document
// states it): the same URL gets the same answer for 30 s (server.ts).
// Errors are {"code": -N, "message": "..."}; a rate-limited request also carries x-valr-ratelimited.
//
// Its trade WebSocket at /valr/ws/trade, following VALR's API documentation (docs.valr.com,
// "WebSocket API": "Connecting", "Subscribing to events", "Trade WebSocket - NEW_TRADE") and, where
// marked "reported", a public probe of the live endpoint (2026-09):
//   client {"type":"SUBSCRIBE","subscriptions":[{"event":"NEW_TRADE","pairs":["BTCZAR","ETHZAR"]}]}
//   server {"type":"SUBSCRIBED","message":"NEW_TRADE:BTCZAR"} for each pair (reported); a pair not
//          listed {"type":"ERROR","message":"..."} (reported), the others still subscribed; a
//          second SUBSCRIBE for NEW_TRADE replaces its pair list (reported; [] unsubscribes all)
//   client {"type":"PING"}  server {"type":"PONG"}
//   server {"type":"NEW_TRADE","currencyPairSymbol":"BTCZAR","data":{"price","quantity",
//          "currencyPair","tradedAt","takerSide","id"}}, every field a string, each exactly what the
//          REST trades endpoint gives for the trade (tradeRow): one trade, one identity
// A connection that sends no message for about 60 s is closed (reported; a ping frame does not
// count); one opened without an API key (header X-VALR-API-KEY; the signature is not checked) is
// closed after 15 minutes. Only NEW_TRADE is simulated: another event is answered with an ERROR.
import { amountDecimals, priceDecimals, venueSymbol } from '../catalog.js';
import type { StreamConn, StreamSession, StreamWire } from '../stream-wire.js';
import { backward, decimal, valrSequence, type SimTrade, type Tape } from '../types.js';
import { intParam, listedPairs, type Wire, type WireContext, type WireRequest, type WireResponse } from '../wire.js';

const PAGE = 100;
/** How long VALR's CDN keeps an answer of the public trades endpoint. */
const TRADES_CACHED_MS = 30_000;
/** sequenceIds start here: VALR's are of this size (api-docs examples, 2025), beyond 2^53. */
const SEQUENCE_BASE = 1_368_928_000_000_000_000n;

/** A perpetual future VALR lists beside its spot pairs (ccxt's valr.ts records it). */
const FUTURES = [
  {
    symbol: 'USDTZARPERP',
    baseCurrency: 'USDT',
    quoteCurrency: 'ZAR',
    shortName: 'USDT/ZARPERP',
    active: true,
    minBaseAmount: '1',
    maxBaseAmount: '250000',
    minQuoteAmount: '15',
    maxQuoteAmount: '5000000',
    tickSize: '0.01',
    baseDecimalPlaces: '3',
    marginTradingAllowed: false,
    currencyPairType: 'FUTURE',
  },
];

function fail(status: number, code: number, message: string): WireResponse {
  return { status, body: { code, message } };
}

function pairs(ctx: WireContext): WireResponse {
  const spot = listedPairs(ctx.source, 'valr').map(({ base, quote }) => ({
    symbol: venueSymbol('valr', base, quote),
    baseCurrency: base,
    quoteCurrency: quote,
    shortName: `${base}/${quote}`,
    active: true,
    minBaseAmount: decimal(Number((10 ** (1 - amountDecimals(base))).toFixed(amountDecimals(base)))),
    maxBaseAmount: base === 'BTC' ? '9' : '1000000',
    minQuoteAmount: '10',
    maxQuoteAmount: '5000000',
    tickSize: decimal(10 ** -priceDecimals(base, quote)),
    baseDecimalPlaces: String(amountDecimals(base)),
    marginTradingAllowed: false,
    currencyPairType: 'SPOT',
  }));
  return { status: 200, body: [...spot, ...FUTURES] };
}

function isoParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  return /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : NaN;
}

/** A trade's sequenceId: VALR's grow with its trades; ours from the id's sequence number (or position). */
function sequenceId(tape: Tape, t: SimTrade): bigint {
  return SEQUENCE_BASE + BigInt(valrSequence(t.id) ?? (tape.indexOf(t.id) ?? 0) + 1);
}

function trades(pairSymbol: string, req: WireRequest, ctx: WireContext): WireResponse {
  const listed = listedPairs(ctx.source, 'valr').find((p) => venueSymbol('valr', p.base, p.quote) === pairSymbol);
  if (!listed) return fail(400, -21, `Currency pair ${pairSymbol} is not supported`);
  const skip = intParam(req.query, 'skip') ?? 0;
  const limitParam = intParam(req.query, 'limit');
  const start = isoParam(req.query, 'startTime');
  const end = isoParam(req.query, 'endTime');
  if (Number.isNaN(skip) || skip < 0) return fail(400, -11, 'skip: must be a non-negative integer');
  if (limitParam !== undefined && (Number.isNaN(limitParam) || limitParam <= 0)) return fail(400, -11, 'limit: must be a positive integer');
  if (Number.isNaN(start) || Number.isNaN(end)) return fail(400, -11, 'startTime/endTime: must be ISO 8601 date-times');
  const limit = Math.min(limitParam ?? PAGE, PAGE);
  const from = start ?? -Infinity;
  const to = Math.min(end ?? Infinity, ctx.now);
  const tape = ctx.source.tape('valr', listed.pair, ctx.now);
  let list: SimTrade[] = [];
  if (tape) {
    const beforeId = req.query.get('beforeId');
    if (beforeId) {
      const at = tape.indexOf(beforeId);
      if (at === undefined) return fail(400, -11, `beforeId: unknown trade id ${beforeId}`);
      for (let i = at - 1; i >= 0 && list.length < skip + limit; i--) {
        const time = tape.timeAt(i);
        if (time > to) continue;
        if (time < from) break;
        list.push(tape.at(i));
      }
    } else {
      list = backward(tape, from, to, skip + limit);
    }
    list = list.slice(skip);
  }
  const body = ctx.shape(list).map((t) => {
    const { price, quantity, currencyPair, tradedAt, takerSide, id } = tradeRow(pairSymbol, t);
    return {
      price,
      quantity,
      currencyPair,
      tradedAt,
      takerSide,
      sequenceId: tape ? sequenceId(tape, t) : SEQUENCE_BASE,
      id,
      quoteVolume: decimal(Number((t.price * t.amount).toFixed(8))),
    };
  });
  return { status: 200, body };
}

/** The fields REST trades and NEW_TRADE messages share, written the same way. */
function tradeRow(pairSymbol: string, t: SimTrade): { price: string; quantity: string; currencyPair: string; tradedAt: string; takerSide: string; id: string } {
  return {
    price: t.priceText ?? decimal(t.price),
    quantity: t.amountText ?? decimal(t.amount),
    currencyPair: pairSymbol,
    tradedAt: new Date(t.time).toISOString(),
    takerSide: t.side,
    id: t.id,
  };
}

function isTrades(segments: readonly string[]): boolean {
  return segments.length === 4 && segments[0] === 'v1' && segments[1] === 'public' && segments[3] === 'trades';
}

export const valrWire: Wire = {
  prefix: 'valr',
  handle(req, ctx) {
    const s = req.segments;
    if (req.method === 'GET' && s.length === 3 && s[0] === 'v1' && s[1] === 'public' && s[2] === 'pairs') return pairs(ctx);
    if (req.method === 'GET' && isTrades(s)) return trades(s[2]!, req, ctx);
    return fail(404, -1, `Not found: /${s.join('/')}`);
  },
  error(kind) {
    return kind === 'rate_limit'
      ? { status: 429, body: { code: -1, message: 'Rate limit exceeded' }, headers: { 'x-valr-ratelimited': 'true' } }
      : fail(500, -1, 'An internal error occurred');
  },
  cachedForMs(req) {
    return isTrades(req.segments) ? TRADES_CACHED_MS : undefined;
  },
};

export const valrStream: StreamWire = {
  prefix: 'valr',
  accept(segments, _query, ctx) {
    if (segments.join('/') !== 'ws/trade') return { status: 404, message: `no stream at /valr/${segments.join('/')}` };
    return (conn: StreamConn): StreamSession => {
      const t = ctx.timings;
      const symbols = new Map(listedPairs(ctx.source, 'valr').map((p) => [venueSymbol('valr', p.base, p.quote), p.pair]));
      let subscribed: string[] = [];
      // The idle timer restarts with every message the client sends.
      let idle = conn.after(t.valrIdleMs, () => conn.close(1000, 'idle'));
      const key = conn.headers['x-valr-api-key'];
      if (typeof key !== 'string' || key === '') conn.after(t.valrKeylessLifetimeMs, () => conn.close(1000, 'session expired'));
      const error = (message: string): void => conn.send({ type: 'ERROR', message });

      const subscribe = (pairs: unknown): void => {
        if (!Array.isArray(pairs)) {
          error('pairs must be a list of currency pairs');
          return;
        }
        const wanted: string[] = [];
        for (const symbol of pairs) {
          if (typeof symbol === 'string' && symbols.has(symbol)) {
            if (!wanted.includes(symbol)) wanted.push(symbol);
          } else error(`Invalid currency pair: ${String(symbol)}`);
        }
        for (const symbol of subscribed) if (!wanted.includes(symbol)) conn.unsubscribe(symbols.get(symbol)!);
        subscribed = wanted;
        for (const symbol of wanted) {
          conn.subscribe(symbols.get(symbol)!);
          conn.send({ type: 'SUBSCRIBED', message: `NEW_TRADE:${symbol}` });
        }
      };

      return {
        message(text) {
          idle();
          idle = conn.after(t.valrIdleMs, () => conn.close(1000, 'idle'));
          let msg: Record<string, unknown>;
          try {
            const parsed: unknown = JSON.parse(text);
            if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
            msg = parsed as Record<string, unknown>;
          } catch {
            error('Invalid message: not a JSON object');
            return;
          }
          if (msg.type === 'PING') {
            conn.send({ type: 'PONG' });
            return;
          }
          if (msg.type !== 'SUBSCRIBE' || !Array.isArray(msg.subscriptions)) {
            error(`Unsupported message type: ${String(msg.type)}`);
            return;
          }
          for (const sub of msg.subscriptions as unknown[]) {
            const s = (sub ?? {}) as Record<string, unknown>;
            if (s.event === 'NEW_TRADE') subscribe(s.pairs);
            else error(`Unsupported event: ${String(s.event)} (the simulator streams NEW_TRADE only)`);
          }
        },
        deliver(_pair, payload) {
          conn.send(payload);
        },
      };
    };
  },
  render(pair, items, ctx) {
    const listed = listedPairs(ctx.source, 'valr').find((p) => p.pair === pair);
    const symbol = listed ? venueSymbol('valr', listed.base, listed.quote) : pair;
    return items
      .filter((item) => !item.lost)
      .map(({ trade }) => ({ time: trade.time, payload: { type: 'NEW_TRADE', currencyPairSymbol: symbol, data: tradeRow(symbol, trade) } }));
  },
};
