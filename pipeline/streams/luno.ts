// Luno's streaming API, when a Luno API key is configured (LUNO_API_KEY_ID, LUNO_API_KEY_SECRET).
//   Docs:    https://www.luno.com/en/developers/api#tag/Streaming-API ; luno-go streaming/
//   Address: wss://ws.luno.com/api/1/stream/{pair} (Luno's ids: XBTNGN), one connection per
//            market, at most 50 at once. The first frame must be the credentials
//            {"api_key_id","api_key_secret"}; without one the connection closes after 10 s.
//   Messages: the full order book first, with a message `sequence` (a string), then updates, each
//            one more than the last; a gap means the client lost one and must reconnect. An empty
//            message is a keep-alive.
//   Trades:  trade_updates carry the trade's sequence (very likely the REST ListTrades sequence,
//            which the REST collector stores as the id) but no time, price or side of their own:
//            only the message's timestamp. A trade's time is the venue's record of it, so a Luno
//            trade update is not stored from the stream: it wakes a REST collection of its pair,
//            which stores the trade with the time Luno's ListTrades gives (docs/decisions.md, "One
//            trade, one time").
import type { StreamProtocol } from './socket.js';
import type { VenueStream } from './types.js';

interface LunoMessage {
  readonly sequence?: string;
  readonly trade_updates?: readonly unknown[] | null;
}

export const lunoStream: VenueStream = {
  venue: 'luno',
  realBase: 'wss://ws.luno.com',
  docs: 'https://www.luno.com/en/developers/api#tag/Streaming-API',
  timings: { silenceMs: 60_000, keepAliveMs: 0 },
  available: (credentials) => credentials !== null,
  connections(markets, ctx) {
    const credentials = ctx.credentials;
    if (!credentials) return [];
    return markets.map((m) => ({
      key: `luno:${m.id}`,
      pairs: [m.pair],
      protocol: (): StreamProtocol => {
        let last: bigint | null = null; // each connection starts from its own book
        return {
          url: `${ctx.base}/api/1/stream/${encodeURIComponent(m.id)}`,
          silenceMs: ctx.timings.silenceMs,
          opening: () => [JSON.stringify({ api_key_id: credentials.id, api_key_secret: credentials.secret })],
          message(text) {
            if (text === '' || text === '""') return 'ok'; // keep-alive
            let message: LunoMessage;
            try {
              message = JSON.parse(text) as LunoMessage;
            } catch {
              return 'reconnect'; // a message that cannot be applied breaks the sequence
            }
            if (typeof message.sequence !== 'string' || !/^\d+$/.test(message.sequence)) return 'ok';
            const sequence = BigInt(message.sequence);
            if (last !== null && sequence !== last + 1n) return 'reconnect';
            last = sequence;
            if (message.trade_updates && message.trade_updates.length > 0) ctx.wake(m.pair);
            return 'ok';
          },
        };
      },
    }));
  },
};
