// The interface between the simulator's HTTP server and one venue's (or FX source's) wire format.
import { splitPair, type TradeSource } from './types.js';

export interface WireRequest {
  readonly method: string;
  /** Path segments after the prefix, URL-decoded ('/luno/api/1/trades' -> ['api', '1', 'trades']). */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
}

export interface WireResponse {
  readonly status: number;
  /** Written as JSON (bigints as bare integers, see json.ts); a string is sent as it is. */
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

export interface WireContext {
  readonly source: TradeSource;
  /** The simulator's clock for this request, ms. */
  readonly now: number;
  /** Passes the trades (or rates) of a response through the active data-level fault, if any. */
  shape<T>(items: T[]): T[];
}

export interface Wire {
  readonly prefix: string;
  handle(req: WireRequest, ctx: WireContext): WireResponse;
  /** This wire's answer to a rate-limited request (429) or a server failure (500). */
  error(kind: 'rate_limit' | 'server_error'): WireResponse;
  /**
   * How long the venue's CDN keeps a successful answer to this request (ms), undefined when it is
   * not cached: the same URL gets the same answer (body and Date) until then (server.ts).
   */
  cachedForMs?(req: WireRequest): number | undefined;
}

/** A listed pair seen through a venue's symbols: venue symbol -> afrates pair and its parts. */
export interface ListedPair {
  readonly pair: string;
  readonly base: string;
  readonly quote: string;
}

export function listedPairs(source: TradeSource, venue: string): ListedPair[] {
  const out: ListedPair[] = [];
  for (const pair of source.listings()[venue] ?? []) {
    const parts = splitPair(pair);
    if (parts) out.push({ pair, ...parts });
  }
  return out;
}

/** An integer query parameter: undefined when absent, NaN when present but not an integer. */
export function intParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  return /^-?\d+$/.test(raw) ? Number(raw) : NaN;
}
