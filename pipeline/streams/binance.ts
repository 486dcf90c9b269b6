// Binance's aggregate trade stream, for the USDT legs.
//   Docs:    https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams
//            (the same text: https://github.com/binance/binance-spot-api-docs, web-socket-streams.md)
//   Host:    wss://data-stream.binance.vision, the market-data-only host; combined streams at
//            /stream?streams=<a>/<b>, each event wrapped {"stream", "data"}; symbols lower case.
//   Event:   aggTrade: a (aggregate trade id), p and q (decimal strings), T (trade time, ms), m (the
//            buyer was the maker): the same id and time as REST GET /api/v3/aggTrades, which the
//            REST collector stores, so ccxt's parseTrade makes the same row of either.
//   Alive:   the server pings every 20 s and drops a client that has not answered a pong within a
//            minute (ws answers pings itself); a connection is cut at 24 hours; at most 1,024
//            streams a connection and 300 connection attempts per 5 minutes per IP (the socket's
//            backoff keeps far below).
import type { StreamProtocol } from './socket.js';
import type { VenueStream } from './types.js';

interface AggTradeEvent {
  readonly stream?: string;
  readonly data?: { readonly e?: string; readonly s?: string } & Record<string, unknown>;
}

export const binanceStream: VenueStream = {
  venue: 'binance',
  realBase: 'wss://data-stream.binance.vision',
  docs: 'https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams',
  // pinged every 20 s: three pings missed is a dead connection
  timings: { silenceMs: 60_000, keepAliveMs: 0 },
  available: () => true,
  connections(markets, ctx) {
    if (markets.length === 0) return [];
    const bySymbol = new Map(markets.map((m) => [m.id.toUpperCase(), m.pair]));
    const streams = markets.map((m) => `${m.id.toLowerCase()}@aggTrade`).join('/');
    const protocol = (): StreamProtocol => ({
      url: `${ctx.base}/stream?streams=${streams}`,
      silenceMs: ctx.timings.silenceMs,
      opening: () => [],
      message(text) {
        let event: AggTradeEvent;
        try {
          event = JSON.parse(text) as AggTradeEvent;
        } catch {
          return 'ok'; // not an event of ours; the REST reconciler stands behind every trade
        }
        const data = event.data;
        if (data?.e !== 'aggTrade' || typeof data.s !== 'string') return 'ok';
        const pair = bySymbol.get(data.s.toUpperCase());
        if (pair) ctx.trades(pair, [data]);
        return 'ok';
      },
    });
    return [{ key: 'binance', pairs: markets.map((m) => m.pair), protocol }];
  },
};
