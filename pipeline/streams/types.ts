// The contract between a venue's stream (pipeline/streams/<venue>.ts) and the collector that runs
// it (pipeline/streams/index.ts): which connections it opens for which markets, and what it hands
// back: raw trades in the venue's REST shape (parsed by the venue's own ccxt class, so a trade is
// the same row whichever transport brought it), or a wake-up for a pair whose stream carries no
// usable trade of its own.
import type { StreamProtocol } from './socket.js';
import type { VenueId } from '../venues/types.js';

/** A market as the stream names it. */
export interface StreamMarket {
  /** afrates' pair, e.g. BTCUSDT */
  readonly pair: string;
  /** the venue's market id, e.g. BTCUSDT (Binance, VALR) or XBTNGN (Luno) */
  readonly id: string;
}

/** How long a connection may be quiet, and how often the client speaks first, where it must. */
export interface StreamTimings {
  readonly silenceMs: number;
  readonly keepAliveMs: number;
}

export interface StreamContext {
  /** ws(s):// root of the venue's streams: the venue's own, or the simulated market's. */
  readonly base: string;
  readonly timings: StreamTimings;
  /** A read-only API key, for venues that ask for one (Luno). */
  readonly credentials: { readonly id: string; readonly secret: string } | null;
  /** Trades of one market, raw as the venue's REST trades endpoint writes them. */
  trades(pair: string, raw: readonly Record<string, unknown>[]): void;
  /** The pair traded, but the stream's trade is not the venue's record of it: collect it by REST now. */
  wake(pair: string): void;
}

export interface VenueStream {
  readonly venue: VenueId;
  /** The venue's stream root when it is not simulated. */
  readonly realBase: string;
  /** Documentation of the stream, cited in the venue's file. */
  readonly docs: string;
  readonly timings: StreamTimings;
  /** Whether it can run: Luno's needs credentials. */
  available(credentials: StreamContext['credentials']): boolean;
  /** One entry per connection (Luno: one per market; Binance and VALR: one for all), each a maker of a fresh protocol per attempt. */
  connections(markets: readonly StreamMarket[], ctx: StreamContext): Array<{ readonly key: string; readonly pairs: readonly string[]; readonly protocol: () => StreamProtocol }>;
}
