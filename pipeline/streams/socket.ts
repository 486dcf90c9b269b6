// One venue stream's connection: opened, kept alive as its venue asks, taken for dead when it goes
// silent without closing, and opened again with backoff. What is said on it is the venue's
// (pipeline/streams/<venue>.ts); this file knows only connections.
import WebSocket from 'ws';

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'stopped';

/** How one venue's stream talks, from its own file. */
export interface StreamProtocol {
  readonly url: string;
  /** Frames sent as soon as the connection opens (credentials, subscriptions). */
  opening(): readonly string[];
  /**
   * A frame received. 'reconnect': the connection can no longer be trusted (a sequence gap) and is
   * replaced; 'ok' otherwise.
   */
  message(text: string): 'ok' | 'reconnect';
  /** A frame the client sends every `everyMs` to keep the connection (VALR's PING); none where the server pings. */
  readonly keepAlive?: { readonly everyMs: number; readonly frame: string };
  /** Nothing heard for this long (no frame, ping or pong): the connection is dead, whatever TCP says. */
  readonly silenceMs: number;
}

export interface SocketEvents {
  /** Each time a connection opens: what was missed meanwhile is for REST to fill. */
  onOpen(): void;
  onState(state: StreamState, error?: string): void;
}

/** Backoff between attempts: 1 s doubling to 30 s, with jitter; back to the start once a connection has delivered. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** How long an opening handshake may take. */
const HANDSHAKE_MS = 10_000;

export class StreamSocket {
  private ws: WebSocket | null = null;
  private stopped = false;
  private attempt = 0;
  private heardAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  /** Connections opened, the first included. */
  opens = 0;
  state: StreamState = 'connecting';
  lastError: string | null = null;

  constructor(
    private readonly protocol: () => StreamProtocol,
    private readonly events: SocketEvents,
  ) {}

  start(): void {
    this.connect();
  }

  /** Drops the connection and opens another (the subscriptions changed). */
  restart(): void {
    this.drop('resubscribing');
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.clearTimers();
    this.ws?.terminate();
    this.ws = null;
    this.setState('stopped');
  }

  private setState(state: StreamState, error?: string): void {
    if (error !== undefined) this.lastError = error;
    if (state === this.state && error === undefined) return;
    this.state = state;
    this.events.onState(state, error);
  }

  private clearTimers(): void {
    clearInterval(this.watchTimer);
    clearInterval(this.keepAliveTimer);
  }

  private connect(): void {
    if (this.stopped) return;
    const protocol = this.protocol();
    const ws = new WebSocket(protocol.url, { handshakeTimeout: HANDSHAKE_MS, perMessageDeflate: false });
    this.ws = ws;
    this.heardAt = Date.now();
    const heard = () => (this.heardAt = Date.now());
    ws.on('open', () => {
      if (this.ws !== ws) return;
      heard();
      this.opens++;
      for (const frame of protocol.opening()) ws.send(frame);
      if (protocol.keepAlive) {
        const { everyMs, frame } = protocol.keepAlive;
        this.keepAliveTimer = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(frame), everyMs);
      }
      this.setState('open');
      this.events.onOpen();
    });
    ws.on('message', (data) => {
      if (this.ws !== ws) return;
      heard();
      this.attempt = 0;
      if (protocol.message(data.toString()) === 'reconnect') this.drop('the stream skipped messages');
    });
    ws.on('ping', heard); // ws answers the pong itself
    ws.on('pong', heard);
    let failure: string | null = null;
    ws.on('error', (err) => (failure = err.message.slice(0, 300)));
    ws.on('close', (code, reason) => {
      if (this.ws !== ws) return;
      this.drop(failure ?? `closed (${code}${reason.length ? `: ${reason.toString().slice(0, 200)}` : ''})`);
    });
    // a connection that says nothing for silenceMs is dead even if TCP never says so
    this.watchTimer = setInterval(() => {
      if (this.ws === ws && Date.now() - this.heardAt > protocol.silenceMs) this.drop(`silent for ${protocol.silenceMs} ms`);
    }, Math.max(50, Math.min(1_000, protocol.silenceMs / 4)));
  }

  /** Ends the connection and schedules the next one. */
  private drop(why: string): void {
    const ws = this.ws;
    this.ws = null;
    this.clearTimers();
    ws?.removeAllListeners('message');
    ws?.on('error', () => {});
    ws?.terminate();
    if (this.stopped) return;
    const wait = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt++;
    this.setState('reconnecting', why);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.setState('connecting');
      this.connect();
    }, wait);
  }
}
