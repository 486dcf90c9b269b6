// The venues' WebSocket streams on the simulator's HTTP server (same port, ws:// of its URL), each
// at the venue's real path under its prefix, so a client swaps only the host:
//   /binance/ws, /binance/ws/<stream>, /binance/stream?streams=a/b   (venues/binance.ts)
//   /valr/ws/trade                                                  (venues/valr.ts)
//   /luno/api/1/stream/<LUNOPAIR>                                   (venues/luno.ts)
// Trades reach a stream as they come into existence on the market's clock: every `pollMs` each
// subscribed pair's tape is read from where it was last read up to now(), and each new trade is
// rendered once and sent once to each subscriber, a connection's pairs merged in time order. A
// pair's feed starts at the clock when its first subscriber comes (what existed before is REST's),
// and ends with its last one.
// Connection timers (pings, keep-alives, idle and lifetime cuts) run on the wall clock, not the
// market's: a test driving the market's clock does not age its connections.
// Faults (faults.ts, the stream slot): stream_drop, stream_silent, stream_burst, stream_gap.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { FaultBook } from './faults.js';
import { toJson } from './json.js';
import type { FeedItem, StreamConn, StreamContext, StreamSession, StreamWire } from './stream-wire.js';
import { STREAM_VENUES, upperBound, type SimTrade, type StreamVenue } from './types.js';

class Conn implements StreamConn {
  silent = false;
  closed = false;
  session: StreamSession | undefined;
  readonly pairs = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly venue: StreamVenue,
    readonly ws: WebSocket,
    readonly headers: IncomingMessage['headers'],
    private readonly hub: StreamHub,
  ) {}

  send(payload: unknown): void {
    if (this.silent || this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(typeof payload === 'string' ? payload : toJson(payload));
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.close(code, reason);
  }

  ping(): void {
    if (!this.silent && !this.closed) this.ws.ping();
  }

  after(ms: number, fn: () => void): () => void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.silent && !this.closed) fn();
    }, ms);
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  every(ms: number, fn: () => void): () => void {
    const timer = setInterval(() => {
      if (!this.silent && !this.closed) fn();
    }, ms);
    this.timers.add(timer);
    return () => {
      clearInterval(timer);
      this.timers.delete(timer);
    };
  }

  subscribe(pair: string): void {
    if (this.closed || this.pairs.has(pair)) return;
    this.pairs.add(pair);
    this.hub.join(this, pair);
  }

  unsubscribe(pair: string): void {
    if (!this.pairs.delete(pair)) return;
    this.hub.leave(this, pair);
  }

  /** Stops every timer: the connection's end, or its going silent. */
  stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer); // clears intervals too
    this.timers.clear();
  }
}

interface Feed {
  readonly venue: StreamVenue;
  readonly pair: string;
  /** Every trade with time <= cursor has been read. */
  cursor: number;
  /** Trades held back by stream_burst. */
  held: SimTrade[];
  readonly subscribers: Set<Conn>;
}

export class StreamHub {
  private readonly wss = new WebSocketServer({ noServer: true, autoPong: false, perMessageDeflate: false });
  private readonly conns = new Set<Conn>();
  private readonly feeds = new Map<string, Feed>();
  private poller: NodeJS.Timeout | undefined;

  constructor(
    private readonly wires: ReadonlyMap<string, StreamWire>,
    private readonly ctx: StreamContext,
    private readonly faults: FaultBook,
  ) {}

  /** The HTTP server's `upgrade` event. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    let segments: string[];
    try {
      segments = url.pathname.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
    } catch {
      refuse(socket, 400, 'bad path');
      return;
    }
    const [prefix, ...rest] = segments;
    const wire = prefix === undefined ? undefined : this.wires.get(prefix);
    if (!wire) {
      refuse(socket, 404, `no stream at ${url.pathname}`);
      return;
    }
    const accepted = wire.accept(rest, url.searchParams, this.ctx);
    if (typeof accepted !== 'function') {
      refuse(socket, accepted.status, accepted.message);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.open(wire.prefix, ws, req, accepted));
  }

  private open(venue: StreamVenue, ws: WebSocket, req: IncomingMessage, makeSession: (conn: StreamConn) => StreamSession): void {
    const conn = new Conn(venue, ws, req.headers, this);
    this.conns.add(conn);
    ws.on('message', (data, isBinary) => {
      if (!conn.silent && !conn.closed) conn.session?.message(isBinary ? '' : data.toString());
    });
    // Every venue answers a client's ping frame (RFC 6455 5.5.2), unless gone silent.
    ws.on('ping', (data) => {
      if (!conn.silent && !conn.closed) ws.pong(data);
    });
    ws.on('pong', () => {
      if (!conn.silent && !conn.closed) conn.session?.pong?.();
    });
    ws.on('error', () => undefined); // a 'close' follows
    ws.on('close', () => {
      conn.closed = true;
      conn.stopTimers();
      for (const pair of [...conn.pairs]) conn.unsubscribe(pair);
      this.conns.delete(conn);
      if (this.conns.size === 0) this.stopPolling();
    });
    this.startPolling();
    if (this.faults.takeStream(venue, 'stream_drop')) {
      ws.terminate();
      return;
    }
    conn.session = makeSession(conn);
    if (this.faults.takeStream(venue, 'stream_silent')) this.silence(conn);
  }

  /** Applies a venue's stream fault to its open connections (when it is set). */
  faultSet(venue: string): void {
    for (const conn of [...this.conns]) {
      if (conn.venue !== venue || conn.closed) continue;
      if (this.faults.takeStream(venue, 'stream_drop')) conn.ws.terminate();
      else if (!conn.silent && this.faults.takeStream(venue, 'stream_silent')) this.silence(conn);
    }
  }

  /** Open connections of a venue (silent ones included). */
  clients(venue: string): number {
    let n = 0;
    for (const conn of this.conns) if (conn.venue === venue && !conn.closed) n++;
    return n;
  }

  /** Cuts every open connection of a venue now (no close frame); how many. */
  drop(venue: string): number {
    let n = 0;
    for (const conn of [...this.conns]) {
      if (conn.venue !== venue || conn.closed) continue;
      conn.ws.terminate();
      n++;
    }
    return n;
  }

  /** Silences every open connection of a venue for the rest of its life; how many. */
  silenceAll(venue: string): number {
    let n = 0;
    for (const conn of this.conns) {
      if (conn.venue !== venue || conn.closed || conn.silent) continue;
      this.silence(conn);
      n++;
    }
    return n;
  }

  stop(): void {
    this.stopPolling();
    for (const conn of [...this.conns]) {
      conn.stopTimers();
      conn.ws.terminate();
    }
    this.wss.close();
  }

  join(conn: Conn, pair: string): void {
    const key = `${conn.venue}:${pair}`;
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = { venue: conn.venue, pair, cursor: this.ctx.now(), held: [], subscribers: new Set() };
      this.feeds.set(key, feed);
    }
    feed.subscribers.add(conn);
  }

  leave(conn: Conn, pair: string): void {
    const key = `${conn.venue}:${pair}`;
    const feed = this.feeds.get(key);
    if (!feed) return;
    feed.subscribers.delete(conn);
    if (feed.subscribers.size === 0) this.feeds.delete(key);
  }

  /** Reads every feed's new trades and sends them; run every pollMs while a connection is open. */
  tick(): void {
    const now = this.ctx.now();
    const fresh = new Map<Feed, SimTrade[]>();
    for (const feed of this.feeds.values()) {
      if (now <= feed.cursor) continue;
      const tape = this.ctx.source.tape(feed.venue, feed.pair, now);
      const trades: SimTrade[] = [];
      if (tape) {
        for (let i = upperBound(tape, feed.cursor); i < tape.length && tape.timeAt(i) <= now; i++) trades.push(tape.at(i));
      }
      feed.cursor = now;
      fresh.set(feed, trades);
    }
    const outbox = new Map<Conn, Array<{ time: number; pair: string; payload: unknown }>>();
    for (const venue of STREAM_VENUES) {
      const feeds = [...this.feeds.values()].filter((f) => f.venue === venue);
      if (feeds.length === 0) continue;
      // stream_burst: hold every new trade until `times` are held across the venue, or the fault ends
      const burst = this.faults.getStream(venue);
      if (burst?.kind === 'stream_burst') {
        for (const feed of feeds) feed.held.push(...(fresh.get(feed) ?? []));
        const held = feeds.reduce((n, f) => n + f.held.length, 0);
        if (burst.times === undefined || held < burst.times) continue;
        this.faults.endStream(venue, 'stream_burst');
      }
      const wire = this.wires.get(venue)!;
      for (const feed of feeds) {
        const trades = feed.held.length > 0 ? [...feed.held, ...(fresh.get(feed) ?? [])] : (fresh.get(feed) ?? []);
        feed.held = [];
        if (trades.length === 0) continue;
        const items: FeedItem[] = trades.map((trade) => ({ trade, lost: this.faults.takeStream(venue, 'stream_gap') }));
        const messages = wire.render(feed.pair, items, this.ctx);
        for (const conn of feed.subscribers) {
          let box = outbox.get(conn);
          if (!box) outbox.set(conn, (box = []));
          for (const m of messages) box.push({ ...m, pair: feed.pair });
        }
      }
    }
    for (const [conn, box] of outbox) {
      // one connection's pairs in trade-time order (a stable sort keeps each pair's own order)
      box.sort((a, b) => a.time - b.time);
      for (const m of box) {
        if (conn.closed || conn.silent) break;
        if (conn.pairs.has(m.pair)) conn.session?.deliver(m.pair, m.payload);
      }
    }
  }

  private silence(conn: Conn): void {
    conn.silent = true;
    conn.stopTimers();
  }

  private startPolling(): void {
    if (this.poller) return;
    this.poller = setInterval(() => this.tick(), this.ctx.timings.pollMs);
    this.poller.unref();
  }

  private stopPolling(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
  }
}

/** Refuses an upgrade with an HTTP answer, as a server that speaks no WebSocket there would. */
function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
