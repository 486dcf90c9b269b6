// VALR's public trade stream.
//   Docs:    https://docs.valr.com/ ("WebSocket - Trade"): wss://api.valr.com/ws/trade, market data
//            for every pair on one connection.
//   Subscribe: {"type":"SUBSCRIBE","subscriptions":[{"event":"NEW_TRADE","pairs":[...]}]}, the
//            whole list each time (a second SUBSCRIBE for an event replaces its pairs).
//   Event:   NEW_TRADE {"currencyPairSymbol", "data": {price, quantity, currencyPair, tradedAt,
//            takerSide, id}}, every field a string: the REST trade without its sequenceId, so
//            VALR's own parseTrade (pipeline/venues/valr.ts) makes the same row of either (id and
//            tradedAt are the trade's identity).
//   Alive:   the client sends {"type":"PING"} (documented every 30 s), answered PONG; a connection
//            without an API key is closed after 15 minutes, and the socket opens another (REST
//            fills what passed meanwhile).
import type { StreamProtocol } from './socket.js';
import type { VenueStream } from './types.js';

interface ValrMessage {
  readonly type?: string;
  readonly currencyPairSymbol?: string;
  readonly data?: Record<string, unknown>;
}

export const valrStream: VenueStream = {
  venue: 'valr',
  realBase: 'wss://api.valr.com',
  docs: 'https://docs.valr.com/',
  // a PING every 20 s, inside the documented 30; its PONG is the least the connection says
  timings: { silenceMs: 45_000, keepAliveMs: 20_000 },
  available: () => true,
  connections(markets, ctx) {
    if (markets.length === 0) return [];
    const byId = new Map(markets.map((m) => [m.id.toUpperCase(), m.pair]));
    const subscribe = JSON.stringify({ type: 'SUBSCRIBE', subscriptions: [{ event: 'NEW_TRADE', pairs: markets.map((m) => m.id) }] });
    const protocol = (): StreamProtocol => ({
      url: `${ctx.base}/ws/trade`,
      silenceMs: ctx.timings.silenceMs,
      keepAlive: { everyMs: ctx.timings.keepAliveMs, frame: '{"type":"PING"}' },
      opening: () => [subscribe],
      message(text) {
        let message: ValrMessage;
        try {
          message = JSON.parse(text) as ValrMessage;
        } catch {
          return 'ok';
        }
        if (message.type !== 'NEW_TRADE' || !message.data) return 'ok';
        const pair = byId.get(String(message.currencyPairSymbol ?? message.data.currencyPair ?? '').toUpperCase());
        if (pair) ctx.trades(pair, [message.data]);
        return 'ok';
      },
    });
    return [{ key: 'valr', pairs: markets.map((m) => m.pair), protocol }];
  },
};
