// Server-Sent Events: the open streams of one API process, what they may hold open, and their
// heartbeats. A stream is a PassThrough set as the Koa body, so nothing in the middleware list
// buffers it (compress only touches string and Buffer bodies, serializeJson skips streams), and
// Node's requestTimeout (30 s) does not cut it: that limit covers receiving the request, which a
// GET has done once its headers are in; the response may last as long as it likes.
// Streams push when the live snapshot is rebuilt (its 'refreshed' event, one listener here for
// every stream) and are ended by closeStreams() when the server stops, which would otherwise wait
// for them forever.
import { PassThrough } from 'node:stream';
import type { Logger } from '../lib/log.js';
import type { AppContext } from './request.js';
import type { LiveSnapshot } from '../lib/live/snapshot.js';
import { ApiError, unavailable } from './errors.js';
import type { RestatementRow } from './queries/fixings.js';

/** A comment line this often keeps proxies and clients from taking a quiet stream for a dead one. */
export const HEARTBEAT_MS = 15_000;
/** Open streams in one process, all kinds together. */
const MAX_STREAMS = 2_000;
/** How long a client waits before reconnecting after the connection drops (the SSE retry field). */
const RETRY_MS = 5_000;
/**
 * Events written but not yet taken by the connection (after the kernel's buffers are full), past
 * which a stream is dropped: a client that stopped reading would otherwise have the server keep
 * every event for it, without end. Reconnecting with Last-Event-ID, it gets the current state.
 */
export const MAX_UNSENT_BYTES = 1_048_576;

export class EventStream {
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;
  onRefresh: (version: number) => void | Promise<void> = () => {};
  /** Restatements recorded since the last rebuild (a stream sends those of its pairs). */
  onRestatements: (version: number, rows: readonly RestatementRow[]) => void = () => {};
  private readonly closeHandlers: (() => void)[] = [];

  constructor(
    private readonly body: PassThrough,
    /** Ends the connection of a client that has stopped reading. */
    private readonly drop: () => void,
  ) {
    body.write(`retry: ${RETRY_MS}\n\n`);
    this.heartbeat = setInterval(() => this.write(`: heartbeat ${new Date().toISOString()}\n\n`), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** One event; `data` is one line of JSON (SSE data lines must not contain a newline). */
  send(id: number, event: string, data: string): void {
    this.write(`id: ${id}\nevent: ${event}\ndata: ${data}\n\n`);
  }

  private write(chunk: string): void {
    if (this.closed) return;
    if (this.body.writableLength + this.body.readableLength > MAX_UNSENT_BYTES) {
      this.close();
      this.drop();
      return;
    }
    this.body.write(chunk);
  }

  onClose(fn: () => void): void {
    this.closeHandlers.push(fn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.body.end();
    for (const fn of this.closeHandlers) fn();
  }
}

/** Who holds a stream (a key, an account) and how many that one may hold open here. */
export interface StreamOwner {
  readonly owner: string;
  readonly max: number;
  /** Why a stream past `max` is refused (the 429's message). */
  readonly message: string;
}

export class EventStreams {
  private readonly open = new Set<EventStream>();
  private readonly perOwner = new Map<string, Set<EventStream>>();
  private listening = false;

  constructor(
    private readonly snapshot: LiveSnapshot,
    private readonly log: Logger,
  ) {}

  /**
   * Turns the response into an event stream held by each of `owners` (a key and its account), each
   * of whom may hold at most its `max` open (429 beyond it: its `message` says why). 503 when the
   * process holds MAX_STREAMS already.
   */
  start(ctx: AppContext, owners: readonly StreamOwner[]): EventStream {
    for (const { owner, max, message } of owners) {
      if (this.count(owner) < max) continue;
      // The cap, not the minute, refused it: the IETF headers name the "streams" policy, so a client
      // can tell it from a spent minute (which waiting cures) even when this was the minute's last request.
      throw new ApiError(429, 'rate_limit_exceeded', message, {
        'Retry-After': String(RETRY_MS / 1000),
        'RateLimit-Policy': `"streams";q=${max}`,
        RateLimit: `"streams";r=0;t=${RETRY_MS / 1000}`,
      });
    }
    if (this.open.size >= MAX_STREAMS) throw unavailable('Too many open streams on this server; retry shortly.', 30);
    this.listen();

    const socket = ctx.req.socket;
    socket.setTimeout(0);
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    const body = new PassThrough();
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-cache, no-transform');
    ctx.set('X-Accel-Buffering', 'no'); // nginx and friends: pass events through as they come
    ctx.body = body;

    const stream = new EventStream(body, () => {
      this.log.warn({ owner: owners[0]?.owner, requestId: ctx.state.requestId }, 'event stream dropped: its client stopped reading');
      socket.destroy();
    });
    this.open.add(stream);
    stream.onClose(() => this.open.delete(stream));
    for (const { owner } of owners) {
      const owned = this.perOwner.get(owner) ?? new Set<EventStream>();
      owned.add(stream);
      this.perOwner.set(owner, owned);
      stream.onClose(() => {
        owned.delete(stream);
        if (owned.size === 0 && this.perOwner.get(owner) === owned) this.perOwner.delete(owner);
      });
    }
    // the client went away (or the server ended the response)
    ctx.res.once('close', () => stream.close());
    return stream;
  }

  /** How many streams are open here, all owners and kinds together. */
  get size(): number {
    return this.open.size;
  }

  /** How many streams `owner` holds open here. */
  count(owner: string): number {
    return this.perOwner.get(owner)?.size ?? 0;
  }

  /** Ends `owner`'s streams (its key was revoked). */
  closeOwner(owner: string): void {
    for (const stream of [...(this.perOwner.get(owner) ?? [])]) stream.close();
  }

  closeAll(): void {
    for (const stream of [...this.open]) stream.close();
  }

  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    this.snapshot.events.on('restatements', (rows: readonly RestatementRow[]) => {
      for (const stream of this.open) {
        try {
          stream.onRestatements(this.snapshot.version, rows);
        } catch (err) {
          this.log.warn({ err }, 'event stream push failed');
          stream.close();
        }
      }
    });
    this.snapshot.events.on('refreshed', (version: number) => {
      for (const stream of this.open) {
        Promise.resolve()
          .then(() => stream.onRefresh(version))
          .catch((err: unknown) => {
            this.log.warn({ err }, 'event stream push failed');
            stream.close();
          });
      }
    });
  }
}

/**
 * The Last-Event-ID a reconnecting client sends (the id of the last event it saw), or null when
 * absent or not one of ours.
 */
export function lastEventId(ctx: AppContext): number | null {
  const raw = ctx.get('Last-Event-ID').trim();
  return /^\d{1,16}$/.test(raw) ? Number(raw) : null;
}

/**
 * Whether a client that saw `lastSeen` (null: nothing yet) has missed the snapshot `version`: then
 * it gets the current state at once instead of waiting for the next refresh.
 */
export function missed(lastSeen: number | null, version: number): boolean {
  return version > 0 && (lastSeen === null || lastSeen < version);
}
