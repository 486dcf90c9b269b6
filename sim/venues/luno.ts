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
//
// Its streaming API at /luno/api/1/stream/<PAIR> (Luno's pair ids: XBTNGN), following Luno's API
// documentation ("Streaming API") and its Go SDK's client (https://github.com/luno/luno-go,
// streaming/streaming.go and messages.go):
//   client, first frame: {"api_key_id":"...","api_key_secret":"..."}: any non-empty pair is taken;
//          anything else closes the connection (1008 "invalid credentials"), and no frame within
//          10 s closes it (1008 "auth_timeout")
//   server, first: the order book {"sequence":"<n>","asks":[{"id","price","volume"}],"bids":[...],
//          "status":"ACTIVE","timestamp":ms} (a small book around the last trade's price)
//   server, then updates {"sequence":"<n+1>","trade_updates":[...]|null,"create_update":{...}|null,
//          "delete_update":null,"status_update":null,"timestamp":ms}, the message sequence rising
//          by exactly 1 a message (a client must reconnect on a gap: luno-go errors "update received
//          out of sequence"); the empty JSON string `""` every so often as a keep-alive
// Each trade comes as two messages, as an order book would make it: the maker's order placed
// (create_update {order_id,type:"ASK"|"BID",price,volume}), then filled whole (trade_updates
// [{sequence,base,counter,maker_order_id,taker_order_id}]). A trade's `sequence` is the REST
// `sequence` (ListTrades) of the same trade, `base` its REST volume text and `counter` = price x
// base written exactly, so counter / base is the REST price. A trade message has no time of its
// own: the message's `timestamp` is the clock when the stream sends it, some way after the REST
// `timestamp` (the stream's delay: up to one poll, more in a burst). The client may send `""`
// (luno-go's keep-alive); it is ignored. Not enforced: 50 connections at once.
import { amountDecimals, lunoCurrency, priceDecimals, venueSymbol } from '../catalog.js';
import { hash32 } from '../rng.js';
import type { StreamConn, StreamSession, StreamWire } from '../stream-wire.js';
import { backward, decimal, forward, padded, upperBound, type SimTrade } from '../types.js';
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
      sequence: tradeSequence(t),
      timestamp: t.time,
      price: priceText(t),
      volume: volumeText(t),
      is_buy: t.side === 'buy',
    })),
  };
  return { status: 200, body };
}

/** A trade's id as ListTrades writes it (`sequence`): a number. */
function tradeSequence(t: SimTrade): number | string {
  return /^\d+$/.test(t.id) ? Number(t.id) : t.id;
}

function priceText(t: SimTrade): string {
  return t.priceText ?? padded(t.price, 8);
}

function volumeText(t: SimTrade): string {
  return t.amountText ?? padded(t.amount, 8);
}

/** a x b of two non-negative decimal strings, exactly, without trailing fractional zeros. */
export function multiplyDecimals(a: string, b: string): string {
  const parse = (x: string): { digits: bigint; scale: number } => {
    const [int, frac = ''] = x.split('.');
    return { digits: BigInt(`${int}${frac}` || '0'), scale: frac.length };
  };
  const x = parse(a);
  const y = parse(b);
  const scale = x.scale + y.scale;
  const text = (x.digits * y.digits).toString().padStart(scale + 1, '0');
  const int = text.slice(0, text.length - scale);
  const frac = text.slice(text.length - scale).replace(/0+$/, '');
  return frac === '' ? int : `${int}.${frac}`;
}

/** An order id as Luno writes them (BX + 13 upper-case letters and digits). */
function orderId(...key: Array<string | number>): string {
  const a = hash32(0x4c554e4f, 'order', ...key).toString(36);
  const b = hash32(0x4c554e4f, 'order2', ...key).toString(36);
  return `BX${`${a}${b}`.toUpperCase().padStart(13, '0').slice(0, 13)}`;
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

/** Message sequences start here for each pair (Luno's are large, increasing numbers). */
const FIRST_SEQUENCE = 1_000_000;

/** Luno's stream for one simulator: each pair's message sequence is shared by its connections. */
export function lunoStream(): StreamWire {
  const sequences = new Map<string, number>();
  const next = (pair: string): number => {
    const n = (sequences.get(pair) ?? FIRST_SEQUENCE) + 1;
    sequences.set(pair, n);
    return n;
  };
  return {
    prefix: 'luno',
    accept(segments, _query, ctx) {
      const [api, one, stream, marketId, ...more] = segments;
      if (api !== 'api' || one !== '1' || stream !== 'stream' || marketId === undefined || more.length > 0) {
        return { status: 404, message: `no stream at /luno/${segments.join('/')}` };
      }
      const listed = listedPairs(ctx.source, 'luno').find((p) => venueSymbol('luno', p.base, p.quote) === marketId);
      if (!listed) return { status: 404, message: `Invalid market pair: ${marketId}` };
      return (conn: StreamConn): StreamSession => {
        const t = ctx.timings;
        let authed = false;
        const timeout = conn.after(t.lunoAuthTimeoutMs, () => conn.close(1008, 'auth_timeout'));
        return {
          message(text) {
            if (authed) return; // luno-go sends "" now and then; nothing else is expected
            timeout();
            let creds: Record<string, unknown> | undefined;
            try {
              const parsed: unknown = JSON.parse(text);
              if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) creds = parsed as Record<string, unknown>;
            } catch {
              creds = undefined;
            }
            const ok = (v: unknown): boolean => typeof v === 'string' && v !== '';
            if (!creds || !ok(creds.api_key_id) || !ok(creds.api_key_secret)) {
              conn.close(1008, 'invalid credentials');
              return;
            }
            authed = true;
            conn.send(book(listed.pair, listed.base, listed.quote, sequences.get(listed.pair) ?? FIRST_SEQUENCE, ctx.now(), ctx.source.tape('luno', listed.pair, ctx.now())));
            conn.subscribe(listed.pair);
            conn.every(t.lunoKeepAliveMs, () => conn.send('""'));
          },
          deliver(_pair, payload) {
            conn.send(payload);
          },
        };
      };
    },
    render(pair, items, ctx) {
      const timestamp = ctx.now();
      const out: Array<{ time: number; payload: unknown }> = [];
      for (const { trade, lost } of items) {
        const maker = orderId(pair, trade.id, 'maker');
        const base = volumeText(trade);
        // the maker's resting order: a taker buying fills an ask
        out.push({
          time: trade.time,
          payload: {
            sequence: String(next(pair)),
            trade_updates: null,
            create_update: { order_id: maker, type: trade.side === 'buy' ? 'ASK' : 'BID', price: priceText(trade), volume: base },
            delete_update: null,
            status_update: null,
            timestamp,
          },
        });
        const sequence = String(next(pair));
        if (lost) continue; // stream_gap: this number is never sent
        out.push({
          time: trade.time,
          payload: {
            sequence,
            trade_updates: [
              {
                sequence: tradeSequence(trade),
                base,
                counter: multiplyDecimals(priceText(trade), base),
                maker_order_id: maker,
                taker_order_id: orderId(pair, trade.id, 'taker'),
              },
            ],
            create_update: null,
            delete_update: null,
            status_update: null,
            timestamp,
          },
        });
      }
      return out;
    },
  };
}

/** The full order book a connection starts with: five orders a side around the last trade's price. */
function book(pair: string, base: string, quote: string, sequence: number, now: number, tape: ReturnType<WireContext['source']['tape']>): unknown {
  const pd = priceDecimals(base, quote);
  const ad = amountDecimals(base);
  const lastAt = tape ? upperBound(tape, now) - 1 : -1;
  const last = tape && lastAt >= 0 ? tape.at(lastAt) : undefined;
  const side = (sign: 1 | -1): Array<{ id: string; price: string; volume: string }> => {
    if (!last) return [];
    return [1, 2, 3, 4, 5].map((level) => ({
      id: orderId(pair, sequence, sign, level),
      price: (last.price * (1 + sign * 0.0005 * level)).toFixed(pd),
      volume: Math.max(10 ** -ad, (level * 50_000) / last.price).toFixed(ad),
    }));
  };
  return { sequence: String(sequence), asks: side(1), bids: side(-1), status: 'ACTIVE', timestamp: now };
}
