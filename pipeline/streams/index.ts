// A venue's trade stream beside its REST cycle: the connections its stream file asks for, over the
// markets the venue's session lists; trades handed back are parsed by the venue's own ccxt class and
// stored by the session's rules (VenueSession.storeStreamed); after every (re)connection the REST
// collector fills what passed meanwhile, each pair from its watermark (VenueSession.wake). The REST cycle goes on as the
// reconciler whatever the stream does, so a stream can only make trades arrive sooner.
import type { Trade } from 'ccxt';
import { Coalesced } from '../../lib/coalesced.js';
import type { Logger } from '../../lib/log.js';
import type { VenueSession } from '../venue-session.js';
import { binanceStream } from './binance.js';
import { lunoStream } from './luno.js';
import { StreamSocket, type StreamState } from './socket.js';
import type { StreamContext, StreamMarket, StreamTimings, VenueStream } from './types.js';
import { valrStream } from './valr.js';

export type { StreamState } from './socket.js';
export type { StreamTimings } from './types.js';

/** The venues that publish their trades as a stream (Quidax documents none). */
export const VENUE_STREAMS: readonly VenueStream[] = [binanceStream, valrStream, lunoStream];

/** Trades are stored this soon after the first of a batch arrives: one statement for a burst. */
const FLUSH_MS = 25;

/** What health and status show of a venue's stream. */
export interface StreamReport {
  readonly exchange: string;
  /** open: every connection open; connecting: none open yet; reconnecting: some lost. */
  readonly state: StreamState;
  readonly connections: number;
  readonly open: number;
  /** Connections opened again after one was lost, since the process started. */
  readonly reconnects: number;
  readonly lastError: string | null;
  readonly lastMessageAt: Date | null;
}

export interface VenueStreamOptions {
  readonly session: VenueSession;
  readonly stream: VenueStream;
  readonly log: Logger;
  /** SIM_URL: the simulated market's http root; its streams are under the same path prefixes. */
  readonly simUrl: string | undefined;
  readonly credentials: StreamContext['credentials'];
  /** Shorter keep-alive and silence limits (tests). */
  readonly timings?: StreamTimings;
  /** Its state changed. */
  readonly onReport: (report: StreamReport) => void;
}

export class VenueStreamRunner {
  private sockets = new Map<string, StreamSocket>();
  private subscribed = '';
  private readonly pending = new Map<string, Record<string, unknown>[]>();
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly flushes = new Coalesced(() => this.flush());
  private stopped = false;
  private lastMessageAt: Date | null = null;
  /** Trades this stream stored (new to the table). */
  stored = 0;

  constructor(private readonly o: VenueStreamOptions) {}

  get venue(): string {
    return this.o.stream.venue;
  }

  /** Opens, or reopens for a changed list, the connections over the markets the session lists now. */
  sync(): void {
    if (this.stopped) return;
    const markets = this.markets();
    const key = markets.map((m) => `${m.pair}=${m.id}`).join(',');
    if (key === this.subscribed || markets.length === 0) return;
    this.subscribed = key;
    for (const socket of this.sockets.values()) socket.stop();
    this.sockets = new Map();
    const base = this.o.simUrl ? `${this.o.simUrl.replace(/^http/, 'ws')}/${this.o.stream.venue}` : this.o.stream.realBase;
    const ctx: StreamContext = {
      base,
      timings: this.o.timings ?? this.o.stream.timings,
      credentials: this.o.credentials,
      trades: (pair, raw) => this.take(pair, raw),
      wake: (pair) => void this.o.session.wake(pair),
    };
    for (const connection of this.o.stream.connections(markets, ctx)) {
      const socket = new StreamSocket(connection.protocol, {
        // what passed while no connection was open is REST's to fetch, from each pair's watermark
        onOpen: () => {
          for (const pair of connection.pairs) void this.o.session.wake(pair);
        },
        onState: (state, error) => {
          if (state === 'reconnecting') this.o.log.warn({ venue: this.venue, connection: connection.key, error }, 'venue stream lost: reconnecting, REST fills the gap');
          else if (state === 'open') this.o.log.info({ venue: this.venue, connection: connection.key, pairs: connection.pairs.length }, 'venue stream open');
          this.o.onReport(this.report());
        },
      });
      this.sockets.set(connection.key, socket);
      socket.start();
    }
  }

  /** The markets the session lists, by the venue's own ids (known once its markets are loaded). */
  private markets(): StreamMarket[] {
    const { exchange, listings } = this.o.session;
    if (!exchange.markets) return [];
    const markets: StreamMarket[] = [];
    for (const l of listings) {
      const market = exchange.markets[l.symbol];
      if (market?.id) markets.push({ pair: l.pair, id: String(market.id) });
    }
    return markets.sort((a, b) => (a.pair < b.pair ? -1 : 1));
  }

  private take(pair: string, raw: readonly Record<string, unknown>[]): void {
    this.lastMessageAt = new Date();
    const list = this.pending.get(pair);
    if (list) list.push(...raw);
    else this.pending.set(pair, [...raw]);
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = null;
      this.flushes.run().catch((err: unknown) => this.o.log.warn({ err, venue: this.venue }, 'streamed trades not stored; the REST cycle collects them'));
    }, FLUSH_MS);
  }

  private async flush(): Promise<void> {
    const batches = [...this.pending];
    this.pending.clear();
    const { session } = this.o;
    for (const [pair, raw] of batches) {
      const listing = session.listings.find((l) => l.pair === pair);
      const market = listing ? session.exchange.markets?.[listing.symbol] : undefined;
      if (!market) continue;
      let trades: Trade[];
      try {
        // the venue class's own reading of a REST answer: the same row whichever transport brought it
        trades = session.exchange.parseTrades(raw, market);
      } catch (err) {
        this.o.log.warn({ err, venue: this.venue, pair }, 'streamed trades the venue parser refuses: left to the REST cycle');
        continue;
      }
      const stored = await session.storeStreamed(pair, trades);
      this.stored += stored.inserted;
    }
  }

  report(): StreamReport {
    const sockets = [...this.sockets.values()];
    const open = sockets.filter((s) => s.state === 'open').length;
    const state: StreamState = this.stopped ? 'stopped' : sockets.length > 0 && open === sockets.length ? 'open' : sockets.some((s) => s.opens > 0) ? 'reconnecting' : 'connecting';
    return {
      exchange: this.venue,
      state,
      connections: sockets.length,
      open,
      reconnects: sockets.reduce((n, s) => n + Math.max(0, s.opens - 1), 0),
      lastError: sockets.map((s) => s.lastError).find((e) => e !== null) ?? null,
      lastMessageAt: this.lastMessageAt,
    };
  }

  /** Closes the connections and stores what they delivered. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const socket of this.sockets.values()) socket.stop();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flushes.current?.catch(() => {});
    if (this.pending.size > 0) await this.flushes.run().catch(() => {});
  }
}
