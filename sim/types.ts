// Types shared by the simulated market's parts (server, generated market, replay, wire formats).

/** The venues the simulator speaks for, by their afrates/ccxt id (also their URL prefix). */
export const SIM_VENUES = ['luno', 'binance', 'valr', 'quidax'] as const;
export type SimVenue = (typeof SIM_VENUES)[number];

/** The FX sources the simulator serves, by URL prefix. */
export const SIM_FX_PREFIXES = ['exchangerate-api', 'coinbase'] as const;
export type SimFxPrefix = (typeof SIM_FX_PREFIXES)[number];

/** FX source ids as the rest of afrates names them (fx_rates.source). */
export type FxSourceId = 'exchangerate_api' | 'coinbase';

export interface SimTrade {
  venue: string;
  /** afrates pair, e.g. 'BTCNGN'. */
  pair: string;
  /** The venue's own trade time, ms since the epoch. */
  time: number;
  /** The id ccxt reports for the trade (what the collector stores as trade_id). */
  id: string;
  price: number;
  amount: number;
  /** The decimal strings a replay file gave for price and amount: the wire formats send them as written. */
  priceText?: string;
  amountText?: string;
  /** The taker's side. */
  side: 'buy' | 'sell';
}

export type FaultKind =
  | 'rate_limit'
  | 'server_error'
  | 'timeout'
  | 'malformed'
  | 'duplicates'
  | 'out_of_order'
  | 'future'
  | 'silent'
  | StreamFaultKind;

/**
 * Faults of the WebSocket streams (streams.ts), kept apart from a venue's request fault so that
 * both can be set at once (the REST API failing while its stream is cut, say).
 */
export type StreamFaultKind = 'stream_drop' | 'stream_silent' | 'stream_burst' | 'stream_gap';

export const STREAM_FAULT_KINDS: readonly StreamFaultKind[] = ['stream_drop', 'stream_silent', 'stream_burst', 'stream_gap'];

/** The venues whose streams the simulator speaks (Quidax documents none). */
export const STREAM_VENUES = ['luno', 'binance', 'valr'] as const;
export type StreamVenue = (typeof STREAM_VENUES)[number];

export const FAULT_KINDS: readonly FaultKind[] = [
  'rate_limit',
  'server_error',
  'timeout',
  'malformed',
  'duplicates',
  'out_of_order',
  'future',
  'silent',
  'stream_drop',
  'stream_silent',
  'stream_burst',
  'stream_gap',
];

/** times: how many requests (a stream fault: connections, trades; faults.ts) it affects (default: until cleared). */
export type Fault = { kind: FaultKind; times?: number };

/** One venue+pair's trades, sorted by time (ties keep their order), ids unique. */
export interface Tape {
  /** How many trades it holds. */
  readonly length: number;
  /** The i-th trade, oldest first: a new object each call, the caller's to keep or change. */
  at(i: number): SimTrade;
  /** The i-th trade's time, without making the trade. */
  timeAt(i: number): number;
  /** Position of a trade id. */
  indexOf(id: string): number | undefined;
  /** Position of the first trade whose numeric id is at least `id` (-1: none). */
  atLeastId(id: number): number;
}

/** Units of fiat per 1 USD as one FX source reports them at some moment. */
export interface FxSnapshot {
  /** currency -> units per USD (USD itself included, = 1). */
  rates: Record<string, number>;
  /** The source's own update time, ms. */
  updatedAt: number;
}

/** Where trades and FX rates come from: the generated market or a replay file. */
export interface TradeSource {
  readonly kind: 'generated' | 'replay';
  /** venue -> afrates pairs it lists. */
  listings(): Record<string, string[]>;
  /** The tape of a listed venue+pair, holding at least every trade up to nowMs (undefined: not listed). */
  tape(venue: string, pair: string, nowMs: number): Tape | undefined;
  /** What an FX source reports at nowMs (undefined: nothing yet). */
  fx(source: FxSourceId, nowMs: number): FxSnapshot | undefined;
}

/** Splits an afrates pair into base and quote ('BTCNGN' -> BTC, NGN; 'BTCUSDT' -> BTC, USDT). */
export function splitPair(pair: string): { base: string; quote: string } | undefined {
  const quotes = ['USDT', 'USDC', 'NGN', 'ZAR', 'KES', 'GHS', 'UGX', 'USD', 'EUR', 'GBP', 'BTC', 'ETH'];
  for (const quote of quotes) {
    if (pair.length > quote.length + 1 && pair.endsWith(quote)) {
      return { base: pair.slice(0, pair.length - quote.length), quote };
    }
  }
  return undefined;
}

/** The first index whose trade time is >= t (trades sorted by time). */
export function lowerBound(tape: Pick<Tape, 'length' | 'timeAt'>, t: number): number {
  let lo = 0;
  let hi = tape.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (tape.timeAt(mid) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose trade time is > t. */
export function upperBound(tape: Pick<Tape, 'length' | 'timeAt'>, t: number): number {
  let lo = 0;
  let hi = tape.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (tape.timeAt(mid) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Trades with from <= time <= to, oldest first, at most max. */
export function forward(tape: Tape, from: number, to: number, max: number): SimTrade[] {
  const out: SimTrade[] = [];
  for (let i = lowerBound(tape, from); i < tape.length && out.length < max; i++) {
    if (tape.timeAt(i) > to) break;
    out.push(tape.at(i));
  }
  return out;
}

/** Trades with from <= time <= to, newest first, at most max. */
export function backward(tape: Tape, from: number, to: number, max: number): SimTrade[] {
  const out: SimTrade[] = [];
  for (let i = upperBound(tape, to) - 1; i >= 0 && out.length < max; i--) {
    if (tape.timeAt(i) < from) break;
    out.push(tape.at(i));
  }
  return out;
}

/**
 * VALR's trade ids are UUIDs of version 7 (RFC 9562): the first 48 bits are the trade's time in
 * ms, the rest opaque. The simulator keeps its sequence number in the last 48 bits; this reads it
 * back (undefined for any other id).
 */
export function valrSequence(id: string): number | undefined {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id) ? parseInt(id.slice(24), 16) : undefined;
}

/** `decimals` places, as venues that pad their decimals print them; more when a (replayed) number has more. */
export function padded(n: number, decimals: number): string {
  const fixed = n.toFixed(decimals);
  return Number(fixed) === n ? fixed : decimal(n);
}

/** Decimal string without exponent notation, round-tripping the number. */
export function decimal(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
}
