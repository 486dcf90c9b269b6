// The simulated market: one local HTTP server speaking the real wire formats of Luno, Binance,
// VALR, Quidax, ExchangeRate-API and Coinbase under /luno, /binance, /valr, /quidax,
// /exchangerate-api and /coinbase, so ccxt (with its urls pointed here) and the FX fetchers work
// against it unchanged. Trades come from the generated market (market.ts) or a replay file
// (replay.ts); faults (faults.ts) can be injected with setFault() or over HTTP:
//   POST   /_control/fault            {"venue":"luno","kind":"rate_limit","times":2}
//   DELETE /_control/fault?venue=luno (no venue: clear every fault)
//   GET    /_control/fault            the active faults
//   GET    /_control/listings         venue -> pairs
//   GET    /_control/served?venue=luno&pair=BTCNGN[&from=ms&to=ms]  every trade offered so far (id, time)
// The venues' WebSocket streams share the port (ws:// of the URL, streams.ts): Binance at
// /binance/ws[/<stream>] and /binance/stream?streams=, VALR at /valr/ws/trade, Luno at
// /luno/api/1/stream/<PAIR>; their faults (stream_drop, stream_silent, stream_burst, stream_gap)
// are set the same way.
// A venue whose answers a CDN caches (Wire.cachedForMs) gets them as a cache does (RFC 9111): a
// 200 is kept per URL, path and query as sent, and the same URL is answered with the same body and
// Date, plus Age, until it expires; request faults come before the cache, data faults are the
// origin's (kept with its answer), a malformed body is the connection's (never kept).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FxReport } from '../lib/fx-report.js';
import { FaultBook, isFault, isStreamFaultKind } from './faults.js';
import { toJson } from './json.js';
import { GeneratedMarket } from './market.js';
import { loadReplay } from './replay.js';
import { STREAM_DEFAULTS, type StreamOptions, type StreamWire } from './stream-wire.js';
import { StreamHub } from './streams.js';
import { SIM_FX_PREFIXES, SIM_VENUES, STREAM_VENUES, forward, type Fault, type FxSourceId, type SimTrade, type TradeSource } from './types.js';
import { binanceStream, binanceWire } from './venues/binance.js';
import { coinbaseWire, exchangeRateApiWire } from './venues/fx.js';
import { lunoStream, lunoWire } from './venues/luno.js';
import { quidaxWire } from './venues/quidax.js';
import { valrStream, valrWire } from './venues/valr.js';
import type { Wire, WireContext, WireRequest } from './wire.js';

export type { Fault, FaultKind, SimTrade } from './types.js';
export type { StreamOptions } from './stream-wire.js';
export type { FxReport } from '../lib/fx-report.js';

export interface SimOptions {
  /** Default 1; same seed + same clock => same trades. */
  seed?: number;
  /** Default 0 (random). */
  port?: number;
  /** The address to listen on; default 127.0.0.1 (the fault suite gives the market a host of its own). */
  host?: string;
  /** Clock in ms, default Date.now; tests drive it. */
  now?: () => number;
  /** ms; generated trades exist from here on (default now - 2 days). */
  historyStart?: number;
  /** Path of a JSON-lines file: play these trades/fx instead of generating. */
  replay?: string;
  /** Generated market: 'real' plays Binance's USDT legs at real volume (default 'light'). */
  volume?: 'light' | 'real';
  /** Generated market: forget trades older than this (ms); default keep all. */
  retainMs?: number;
  /** The streams' connection timings (ms): the venues' own by default, shorter for tests. */
  streams?: StreamOptions;
}

export interface SimMarket {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** The same server for the streams, e.g. ws://127.0.0.1:41234 (then /binance/ws, /valr/ws/trade, /luno/api/1/stream/XBTNGN). */
  readonly wsUrl: string;
  /**
   * venue id or 'exchangerate-api' / 'coinbase'; null clears (both the request and the stream
   * fault). A stream fault (stream_*) only for luno, binance, valr, and kept beside the request one.
   */
  setFault(venue: string, fault: Fault | null): void;
  /** Open stream connections of a venue (silent ones included). */
  streamClients(venue: string): number;
  /** Cuts every open stream connection of a venue now, without a close frame; how many it cut. */
  dropStreams(venue: string): number;
  /** Silences every open stream connection of a venue for the rest of its life (nothing sent, pings unanswered, never closed); how many. */
  silenceStreams(venue: string): number;
  /** Every trade that exists up to now() for that venue+pair (what a perfect collector would store); pair like 'BTCNGN'. */
  served(venue: string, pair: string): SimTrade[];
  /** venue -> pairs it lists, e.g. { luno: ['BTCNGN', ...] }. */
  listings(): Record<string, string[]>;
  /**
   * What each FX source reported every `everyMs` in [from, to): the history `make demo` seeds,
   * since the real FX endpoints (and so their simulated wire) serve only the latest rates.
   */
  fxHistory(from: number, to: number, everyMs: number): FxReport[];
  stop(): Promise<void>;
}

const WIRES: ReadonlyMap<string, Wire> = new Map(
  [lunoWire, binanceWire, valrWire, quidaxWire, exchangeRateApiWire, coinbaseWire].map((w) => [w.prefix, w]),
);

/** Each server's streams (Luno's keeps its message sequences, so it is made per server). */
function streamWires(): ReadonlyMap<string, StreamWire> {
  return new Map([lunoStream(), binanceStream, valrStream].map((w) => [w.prefix, w]));
}

/** Every prefix a fault can be set on. */
export const FAULT_TARGETS: readonly string[] = [...SIM_VENUES, ...SIM_FX_PREFIXES];

/** An answer as sent: what a CDN keeps. */
interface Answer {
  readonly status: number;
  readonly text: string;
  readonly headers: Record<string, string>;
  /** When the origin made it (its Date). */
  readonly at: number;
}

/** Successful answers by URL, each until it expires. */
class Cdn {
  private readonly kept = new Map<string, { answer: Answer; until: number }>();

  get(url: string, now: number): Answer | undefined {
    const entry = this.kept.get(url);
    if (entry && now < entry.until && now >= entry.answer.at) return entry.answer;
    if (entry) this.kept.delete(url);
    return undefined;
  }

  put(url: string, answer: Answer, forMs: number): void {
    if (this.kept.size >= 10_000) {
      for (const [key, entry] of this.kept) if (answer.at >= entry.until) this.kept.delete(key);
    }
    this.kept.set(url, { answer, until: answer.at + forMs });
  }
}

export async function startSimMarket(options: SimOptions = {}): Promise<SimMarket> {
  const seed = options.seed ?? 1;
  const now = options.now ?? Date.now;
  const source: TradeSource = options.replay
    ? loadReplay(options.replay)
    : new GeneratedMarket(seed, options.historyStart ?? now() - 2 * 24 * 60 * 60 * 1000, { volume: options.volume, retainMs: options.retainMs });
  const faults = new FaultBook(seed);
  const cdn = new Cdn();
  const sockets = new Set<Socket>();
  let stopping: Promise<void> | undefined;

  const streams = new StreamHub(streamWires(), { source, now, timings: { ...STREAM_DEFAULTS, ...options.streams } }, faults);

  const setFault = (venue: string, fault: Fault | null): void => {
    if (!FAULT_TARGETS.includes(venue)) {
      throw new Error(`setFault: unknown venue "${venue}" (one of ${FAULT_TARGETS.join(', ')})`);
    }
    if (fault && isStreamFaultKind(fault.kind) && !(STREAM_VENUES as readonly string[]).includes(venue)) {
      throw new Error(`setFault: ${fault.kind} is a stream fault, and only ${STREAM_VENUES.join(', ')} have streams`);
    }
    faults.set(venue, fault);
    // a drop or a silence takes the open connections at once
    streams.faultSet(venue);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, now(), 500, { error: `simulator: ${(e as Error).message}` });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req, socket, head) => streams.upgrade(req, socket, head));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    let segments: string[];
    try {
      segments = url.pathname.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
    } catch {
      send(res, now(), 400, { error: 'bad path' });
      return;
    }
    const method = req.method ?? 'GET';
    const [prefix, ...rest] = segments;
    if (prefix === '_control') {
      await control(method, rest, url.searchParams, req, res);
      return;
    }
    const wire = prefix === undefined ? undefined : WIRES.get(prefix);
    if (!wire || prefix === undefined) {
      send(res, now(), 404, { error: `no such venue: /${prefix ?? ''}` });
      return;
    }
    const at = now();
    const fault = faults.takeRequestFault(prefix);
    if (fault === 'timeout') return; // hold the socket; stop() destroys it
    if (fault === 'rate_limit' || fault === 'server_error') {
      const r = wire.error(fault);
      send(res, at, r.status, r.body, { ...(fault === 'rate_limit' ? { 'Retry-After': '1' } : {}), ...r.headers });
      return;
    }
    const request: WireRequest = { method: method === 'HEAD' ? 'GET' : method, segments: rest, query: url.searchParams };
    const cachedFor = wire.cachedForMs?.(request);
    const cacheKey = `${url.pathname}${url.search}`;
    const kept = cachedFor === undefined ? undefined : cdn.get(cacheKey, at);
    let answer: Answer;
    if (kept) {
      answer = { ...kept, headers: { ...kept.headers, Age: String(Math.floor((at - kept.at) / 1000)) } };
    } else {
      const ctx: WireContext = { source, now: at, shape: (items) => faults.shape(prefix, items) };
      const r = wire.handle(request, ctx);
      answer = {
        status: r.status,
        text: typeof r.body === 'string' ? r.body : toJson(r.body),
        headers: { ...(cachedFor === undefined ? {} : { 'Cache-Control': `max-age=${Math.floor(cachedFor / 1000)}` }), ...r.headers },
        at,
      };
      if (cachedFor !== undefined && answer.status === 200) cdn.put(cacheKey, answer, cachedFor);
    }
    if (fault === 'malformed') {
      // Cut the JSON in half: still looks like JSON, never parses.
      sendRaw(res, answer.at, 200, answer.text.slice(0, Math.max(1, Math.floor(answer.text.length / 2))) || '{', answer.headers);
      return;
    }
    sendRaw(res, answer.at, answer.status, answer.text, answer.headers);
  }

  async function control(method: string, rest: string[], query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const what = rest.join('/');
    if (what === 'fault' && method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        send(res, now(), 400, { error: 'body must be JSON: {"venue","kind","times"?}' });
        return;
      }
      const b = (body ?? {}) as Record<string, unknown>;
      const fault = { kind: b.kind, ...(b.times === undefined || b.times === null ? {} : { times: b.times }) };
      if (typeof b.venue !== 'string' || !FAULT_TARGETS.includes(b.venue)) {
        send(res, now(), 400, { error: `venue must be one of ${FAULT_TARGETS.join(', ')}` });
        return;
      }
      if (!isFault(fault)) {
        send(res, now(), 400, { error: 'kind must be a fault kind and times a positive integer' });
        return;
      }
      const stream = isStreamFaultKind(fault.kind);
      if (stream && !(STREAM_VENUES as readonly string[]).includes(b.venue)) {
        send(res, now(), 400, { error: `${fault.kind} is a stream fault: venue must be one of ${STREAM_VENUES.join(', ')}` });
        return;
      }
      setFault(b.venue, fault);
      send(res, now(), 200, { ok: true, venue: b.venue, fault: stream ? faults.getStream(b.venue) : faults.get(b.venue) });
      return;
    }
    if (what === 'fault' && method === 'DELETE') {
      const venue = query.get('venue');
      if (venue !== null && !FAULT_TARGETS.includes(venue)) {
        send(res, now(), 400, { error: `venue must be one of ${FAULT_TARGETS.join(', ')}` });
        return;
      }
      for (const v of venue === null ? FAULT_TARGETS : [venue]) faults.set(v, null);
      send(res, now(), 200, { ok: true });
      return;
    }
    if (what === 'fault' && method === 'GET') {
      // the request faults by prefix, and the stream faults under "streams"
      send(res, now(), 200, {
        ...Object.fromEntries(FAULT_TARGETS.map((v) => [v, faults.get(v)])),
        streams: Object.fromEntries(STREAM_VENUES.map((v) => [v, faults.getStream(v)])),
      });
      return;
    }
    if (what === 'listings' && method === 'GET') {
      send(res, now(), 200, source.listings());
      return;
    }
    if (what === 'served' && method === 'GET') {
      // what a perfect collector would have stored: every trade of a venue and pair up to now (the fault suite's record)
      const venue = query.get('venue') ?? '';
      const pair = query.get('pair') ?? '';
      const from = Number(query.get('from') ?? -Infinity);
      const to = Number(query.get('to') ?? Infinity);
      const at = now();
      const tape = source.tape(venue, pair, at);
      const trades = tape ? forward(tape, -Infinity, Math.min(at, to), Infinity).filter((t) => t.time >= from) : [];
      send(res, at, 200, { venue, pair, now: at, trades: trades.map((t) => ({ id: t.id, time: t.time })) });
      return;
    }
    if (what === 'health' && method === 'GET') {
      send(res, now(), 200, { ok: true, mode: source.kind, now: new Date(now()).toISOString() });
      return;
    }
    send(res, now(), 404, { error: `no such control: ${method} /_control/${what}` });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';

  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    setFault,
    streamClients: (venue) => streams.clients(venue),
    dropStreams: (venue) => streams.drop(venue),
    silenceStreams: (venue) => streams.silenceAll(venue),
    served(venue, pair) {
      const at = now();
      const tape = source.tape(venue, pair, at);
      if (!tape) return [];
      return forward(tape, -Infinity, at, Infinity);
    },
    listings() {
      return Object.fromEntries(Object.entries(source.listings()).map(([v, pairs]) => [v, [...pairs]]));
    },
    fxHistory(from, to, everyMs) {
      const out: FxReport[] = [];
      for (let t = from; t < to; t += everyMs) {
        for (const id of ['exchangerate_api', 'coinbase'] as const) {
          const snapshot = source.fx(id, t);
          if (snapshot) out.push({ source: id, observedAt: t, updatedAt: snapshot.updatedAt, rates: snapshot.rates });
        }
      }
      return out;
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        streams.stop();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return stopping;
    },
  };
}

function send(res: ServerResponse, now: number, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendRaw(res, now, status, typeof body === 'string' ? body : toJson(body), headers);
}

function sendRaw(res: ServerResponse, now: number, status: number, text: string, headers: Record<string, string>): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    // The venue's clock is the simulator's clock (Coinbase's rates are dated by this header).
    Date: new Date(now).toUTCString(),
    ...headers,
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > 65_536) reject(new Error('body too large'));
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
