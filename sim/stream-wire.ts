// The interface between the simulator's stream hub (streams.ts) and one venue's WebSocket stream
// protocol (sim/venues/*.ts). The hub owns the connections, their timers, the trades' feeds and the
// faults; a venue's stream owns what is said on the wire.
import type { IncomingHttpHeaders } from 'node:http';
import type { SimTrade, StreamVenue, TradeSource } from './types.js';

/** How long the venues' connection rules run (ms); real values by default, shorter in tests. */
export interface StreamOptions {
  /** How often new trades are looked for on the tapes (default 50). */
  pollMs?: number;
  /** Binance pings every 20 s. */
  binancePingMs?: number;
  /** Binance closes a connection that has not answered a ping with a pong within a minute. */
  binancePongTimeoutMs?: number;
  /** Binance cuts every connection at 24 h. */
  binanceLifetimeMs?: number;
  /** Send `serverShutdown` this long before the 24 h cut (default 0: not sent). */
  binanceShutdownNoticeMs?: number;
  /** VALR closes a connection that has sent nothing for about 60 s. */
  valrIdleMs?: number;
  /** VALR closes a connection without an API key after 15 minutes. */
  valrKeylessLifetimeMs?: number;
  /** Luno closes a connection that sent no credentials within 10 s (`auth_timeout`). */
  lunoAuthTimeoutMs?: number;
  /** Luno's keep-alive `""` (default every 30 s). */
  lunoKeepAliveMs?: number;
}

export const STREAM_DEFAULTS: Required<StreamOptions> = {
  pollMs: 50,
  binancePingMs: 20_000,
  binancePongTimeoutMs: 60_000,
  binanceLifetimeMs: 24 * 60 * 60 * 1000,
  binanceShutdownNoticeMs: 0,
  valrIdleMs: 60_000,
  valrKeylessLifetimeMs: 15 * 60 * 1000,
  lunoAuthTimeoutMs: 10_000,
  lunoKeepAliveMs: 30_000,
};

export interface StreamContext {
  readonly source: TradeSource;
  /** The simulator's clock (message times; trades exist up to it). */
  now(): number;
  readonly timings: Required<StreamOptions>;
}

/** One client connection, as a venue's stream protocol drives it. */
export interface StreamConn {
  readonly headers: IncomingHttpHeaders;
  /** Sends a text frame: a string as it is, anything else as JSON (json.ts). Nothing once silent. */
  send(payload: unknown): void;
  /** Closes with a close frame. */
  close(code: number, reason: string): void;
  /** Sends a ping frame. */
  ping(): void;
  /** A timer that dies with the connection (and stops when it goes silent); returns its cancel. */
  after(ms: number, fn: () => void): () => void;
  /** A repeating timer, the same. */
  every(ms: number, fn: () => void): () => void;
  /** Starts (stops) delivering an afrates pair's new trades to this connection's session. */
  subscribe(pair: string): void;
  unsubscribe(pair: string): void;
}

/** A connection's protocol state. */
export interface StreamSession {
  /** A text frame from the client. */
  message(text: string): void;
  /** A pong frame from the client. */
  pong?(): void;
  /** One rendered message of a subscribed pair (StreamWire.render), in time order. */
  deliver(pair: string, payload: unknown): void;
}

/** A trade reaching a stream, or lost by the `stream_gap` fault. */
export interface FeedItem {
  readonly trade: SimTrade;
  readonly lost: boolean;
}

export interface StreamWire {
  readonly prefix: StreamVenue;
  /**
   * Answers an upgrade at these path segments (after the prefix): a function making the session
   * of the connection once it is open, or the HTTP status and message refusing the upgrade.
   */
  accept(segments: readonly string[], query: URLSearchParams, ctx: StreamContext): ((conn: StreamConn) => StreamSession) | { status: number; message: string };
  /**
   * Renders an afrates pair's new trades once for all its subscribers, oldest first: the messages
   * and the trade time each belongs to (the hub merges a connection's pairs by it).
   */
  render(pair: string, items: readonly FeedItem[], ctx: StreamContext): Array<{ time: number; payload: unknown }>;
}
