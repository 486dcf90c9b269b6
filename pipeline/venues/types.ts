// The contract between the collector (pipeline/collect.ts) and a venue. Every venue is a ccxt
// Exchange: luno and binance are ccxt's own, valr and quidax are ours (ccxt-style classes), so the
// collector only ever calls loadMarkets() and fetchTrades(). See ADD_VENUE.md.
import type { Exchange } from 'ccxt';

export type VenueId = 'luno' | 'binance' | 'valr' | 'quidax';

export interface VenueOptions {
  /**
   * Root of the simulated market (e.g. http://127.0.0.1:4010). When set, every URL of the venue is
   * pointed at `${simUrl}/${venue id}/...`, speaking the venue's own wire format. Unset: the real venue.
   */
  readonly simUrl?: string;
  /** Per-request timeout in milliseconds. */
  readonly timeoutMs?: number;
}

export interface Venue {
  readonly id: VenueId;
  /** Link to the venue's published rate limits; `limits` must honour them. */
  readonly rateLimitDocs: string;
  /** Outbound limits for bottleneck, from the published figures with a safety margin. */
  readonly limits: { readonly minTimeMs: number; readonly maxConcurrent: number };
  /** The most trades one fetchTrades call returns; a full page means "ask again". */
  readonly pageSize: number;
  /**
   * How far back fetchTrades(symbol, since) can reach, in ms: undefined = no published bound,
   * 0 = only the venue's most recent trades (no backfill possible).
   */
  readonly historyMs?: number;
  /**
   * fetchTrades walks back from now to `since`, and takes `params.until` (ms) to walk back from
   * there instead: a backfill of an old day then reads that day, not everything since.
   */
  readonly takesUntil?: boolean;
  /** A ccxt exchange with built-in rate limiting off (bottleneck owns pacing). */
  create(options?: VenueOptions): Exchange;
}
