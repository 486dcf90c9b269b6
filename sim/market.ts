// The generated market. Prices: a seeded multi-scale random path per asset around its USD level
// (altcoins partly follow BTC), times a seeded FX path per currency, times the local-market
// premium, times a small per-venue bias, so every venue's price for a pair stays within ~1% of the
// others. Trades: a seeded Poisson count per venue, pair and minute (busier in the African day,
// with occasional bursts), each with its own time, side, price and amount. Every draw is a pure
// function of (seed, venue, pair, minute), and generated minutes are cached, so a trade never
// changes once it exists and the same seed and clock give the same tape.
import { ASSETS, FIATS, LISTINGS, REAL_VOLUME_USDT_LEGS, amountDecimals, priceDecimals } from './catalog.js';
import { gaussian, hash32, poisson, prng, unit, valueNoise } from './rng.js';
import {
  lowerBound,
  splitPair,
  type FxSnapshot,
  type FxSourceId,
  type SimTrade,
  type SimVenue,
  type Tape,
  type TradeSource,
  valrSequence,
} from './types.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Periods of the price path's octaves and their weight. */
const OCTAVES = [3 * MINUTE, 20 * MINUTE, 2 * HOUR, 12 * HOUR, 3 * DAY, 15 * DAY];
/** A minute holds at most this many times its book's mean rate (bursts included), and never fewer than 400. */
const BURST_CAP = 12;
/** Trade ids are minute x ID_STRIDE + k: room for every trade of the busiest minute. */
const ID_STRIDE = 100_000;

/**
 * One venue+pair's generated trades, packed in columns: as objects they cost ~250 bytes of heap
 * each (~30 MB for make demo's day of history), packed 33. A trade becomes an object only when it
 * is served. Trade ids are kept as their sequence number (tradeId makes the venue's id from it).
 */
class GeneratedTape implements Tape {
  private count = 0;
  private time = new Float64Array(1024);
  private seq = new Float64Array(1024);
  private price = new Float64Array(1024);
  private amount = new Float64Array(1024);
  private sell = new Uint8Array(1024);
  /** The next minute (index since the epoch) to generate. */
  nextMinute: number;

  constructor(
    private readonly venue: SimVenue,
    private readonly pair: string,
    private readonly seed: number,
    startMs: number,
  ) {
    this.nextMinute = Math.floor(startMs / MINUTE);
  }

  get length(): number {
    return this.count;
  }

  at(i: number): SimTrade {
    return {
      venue: this.venue,
      pair: this.pair,
      time: this.time[i]!,
      id: tradeId(this.venue, this.seq[i]!, this.time[i]!, this.seed),
      price: this.price[i]!,
      amount: this.amount[i]!,
      side: this.sell[i] ? 'sell' : 'buy',
    };
  }

  timeAt(i: number): number {
    return this.time[i]!;
  }

  indexOf(id: string): number | undefined {
    const seq = seqOf(this.venue, id);
    if (seq === undefined) return undefined;
    const at = this.atLeastSeq(seq);
    return at >= 0 && this.seq[at] === seq && tradeId(this.venue, seq, this.time[at]!, this.seed) === id ? at : undefined;
  }

  /** Numeric ids are the sequence numbers themselves (every venue but VALR). */
  atLeastId(id: number): number {
    return this.atLeastSeq(id);
  }

  /** The first trade whose sequence number is at least `seq`, or -1: they grow along the tape. */
  private atLeastSeq(seq: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seq[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.length ? lo : -1;
  }

  push(time: number, seq: number, price: number, amount: number, side: 'buy' | 'sell'): void {
    if (this.count === this.time.length) this.resize(this.count * 2);
    const i = this.count++;
    this.time[i] = time;
    this.seq[i] = seq;
    this.price[i] = price;
    this.amount[i] = amount;
    this.sell[i] = side === 'sell' ? 1 : 0;
  }

  /** Forgets trades before `t` (a long run at real volume would otherwise hold every trade). */
  forgetBefore(t: number): void {
    const n = lowerBound(this, t);
    // in steps of at least a quarter of the tape, so moving what is kept costs O(1) a trade
    if (n === 0 || n < this.length / 4) return;
    for (const column of [this.time, this.seq, this.price, this.amount, this.sell]) column.copyWithin(0, n, this.count);
    this.count -= n;
    if (this.count < this.time.length / 4) this.resize(Math.max(1024, this.count * 2));
  }

  private resize(size: number): void {
    const grow = <T extends Float64Array | Uint8Array>(column: T): T => {
      const next = new (column.constructor as new (n: number) => T)(size);
      next.set(column.subarray(0, this.count));
      return next;
    };
    this.time = grow(this.time);
    this.seq = grow(this.seq);
    this.price = grow(this.price);
    this.amount = grow(this.amount);
    this.sell = grow(this.sell);
  }
}

export interface GeneratedMarketOptions {
  /**
   * 'real': Binance's USDT legs trade at their real pace (REAL_VOLUME_USDT_LEGS, hundreds of
   * trades a minute each, 1-2 million a day in all), to measure the pipeline at real volume.
   * Default 'light': every book a few trades a minute.
   */
  readonly volume?: 'light' | 'real';
  /** Keep generated trades this long (ms) before forgetting them; default: all of them. */
  readonly retainMs?: number;
}

export class GeneratedMarket implements TradeSource {
  readonly kind = 'generated' as const;
  private readonly tapes = new Map<string, GeneratedTape>();
  private readonly rates = new Map<string, number>();
  private readonly memo = new Map<string, number>();
  private readonly retainMs: number;

  constructor(
    private readonly seed: number,
    private readonly historyStart: number,
    options: GeneratedMarketOptions = {},
  ) {
    for (const [venue, listings] of Object.entries(LISTINGS)) {
      for (const l of listings) this.rates.set(`${venue}:${l.pair}`, l.perMinute);
    }
    if (options.volume === 'real') {
      for (const [pair, perMinute] of Object.entries(REAL_VOLUME_USDT_LEGS)) this.rates.set(`binance:${pair}`, perMinute);
    }
    this.retainMs = options.retainMs ?? Infinity;
  }

  listings(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [venue, listings] of Object.entries(LISTINGS)) out[venue] = listings.map((l) => l.pair);
    return out;
  }

  tape(venue: string, pair: string, nowMs: number): Tape | undefined {
    const key = `${venue}:${pair}`;
    const perMinute = this.rates.get(key);
    if (perMinute === undefined) return undefined;
    let tape = this.tapes.get(key);
    if (!tape) {
      tape = new GeneratedTape(venue as SimVenue, pair, this.seed, this.historyStart);
      this.tapes.set(key, tape);
    }
    const last = Math.floor(nowMs / MINUTE);
    for (; tape.nextMinute <= last; tape.nextMinute++) this.minute(tape, venue as SimVenue, pair, perMinute, tape.nextMinute);
    if (this.retainMs !== Infinity) tape.forgetBefore(nowMs - this.retainMs);
    return tape;
  }

  fx(source: FxSourceId, nowMs: number): FxSnapshot {
    if (source === 'exchangerate_api') {
      // The open endpoint updates once a day, just after midnight UTC.
      let updatedAt = Math.floor(nowMs / DAY) * DAY + 2_000;
      if (updatedAt > nowMs) updatedAt -= DAY;
      return { rates: this.fxRates(source, updatedAt, 0.002), updatedAt };
    }
    // Coinbase refreshes its rates about every minute.
    const updatedAt = Math.floor(nowMs / MINUTE) * MINUTE;
    return { rates: this.fxRates(source, updatedAt, 0.003), updatedAt };
  }

  /** Official units of `currency` per USD at t. */
  officialFx(currency: string, t: number): number {
    const spec = FIATS[currency];
    if (!spec) return 1;
    return spec.perUsd * Math.exp(this.path(t, spec.dailyVol, 'fx', currency));
  }

  /** USD price of an asset at t. */
  usd(asset: string, t: number): number {
    const spec = ASSETS[asset];
    if (!spec) return 1;
    const own = this.path(t, spec.dailyVol, 'px', asset);
    if (spec.betaToBtc === 0) return spec.usd * Math.exp(own);
    const btc = this.path(t, ASSETS.BTC!.dailyVol, 'px', 'BTC') * (spec.dailyVol / ASSETS.BTC!.dailyVol);
    const beta = spec.betaToBtc;
    return spec.usd * Math.exp(beta * btc + Math.sqrt(1 - beta * beta) * own);
  }

  /** Mid price of base in quote on a venue at t. */
  mid(venue: string, base: string, quote: string, t: number): number {
    const bias =
      0.002 * (unit(this.seed, 'bias', venue, base, quote) * 2 - 1) +
      0.0008 * valueNoise(t, 4 * HOUR, this.seed, 'bias', venue, base, quote);
    return this.usd(base, t) * this.unitsPerUsd(quote, t) * (1 + bias);
  }

  /** What 1 USD buys of `quote` on the local crypto market (the official rate plus the premium). */
  private unitsPerUsd(quote: string, t: number): number {
    const fiat = FIATS[quote];
    if (!fiat) return 1 / this.usd(quote, t);
    const premium = fiat.premium * (1 + 0.15 * valueNoise(t, 6 * HOUR, this.seed, 'premium', quote));
    return this.officialFx(quote, t) * (1 + premium);
  }

  private path(t: number, dailyVol: number, ...key: string[]): number {
    // Trades evaluate paths at minute boundaries, shared by every venue and pair: memoise those.
    const memoKey = t % MINUTE === 0 ? `${key.join(':')}@${t}` : undefined;
    if (memoKey !== undefined) {
      const hit = this.memo.get(memoKey);
      if (hit !== undefined) return hit;
    }
    let x = 0;
    for (const period of OCTAVES) {
      x += dailyVol * Math.sqrt(period / DAY) * 0.8 * valueNoise(t, period, this.seed, ...key);
    }
    if (memoKey !== undefined) {
      if (this.memo.size > 500_000) this.memo.clear();
      this.memo.set(memoKey, x);
    }
    return x;
  }

  private fxRates(source: FxSourceId, t: number, spread: number): Record<string, number> {
    const rates: Record<string, number> = { USD: 1 };
    for (const currency of Object.keys(FIATS)) {
      const bias = spread * (unit(this.seed, 'fxsource', source, currency) * 2 - 1);
      rates[currency] = significant(this.officialFx(currency, t) * (1 + bias), 7);
    }
    return rates;
  }

  /** Every trade of one venue+pair in one minute, oldest first, onto its tape (none before the history's start). */
  private minute(tape: GeneratedTape, venue: SimVenue, pair: string, perMinute: number, minute: number): void {
    const parts = splitPair(pair);
    if (!parts) return;
    const { base, quote } = parts;
    const next = prng(hash32(this.seed, 'trades', venue, pair, minute));
    const start = minute * MINUTE;
    const hourOfDay = (start % DAY) / HOUR;
    const daytime = 1 + 0.45 * Math.cos((2 * Math.PI * (hourOfDay - 13)) / 24);
    const block = Math.floor(minute / 10);
    const burstDraw = unit(this.seed, 'burst', venue, pair, block);
    const burst = burstDraw < 0.05 ? 3 + 100 * burstDraw : 1;
    const count = Math.min(Math.max(400, Math.ceil(perMinute * BURST_CAP)), poisson(next, perMinute * daytime * burst));
    if (count === 0) return;

    const offsets = new Set<number>();
    while (offsets.size < count) offsets.add(Math.floor(next() * MINUTE));
    const times = [...offsets].sort((a, b) => a - b);

    const pDecimals = priceDecimals(base, quote);
    const aDecimals = amountDecimals(base);
    const isUsdtBook = quote === 'USDT' || quote === 'USDC';
    const medianUsd = isUsdtBook ? 600 : 120;
    const halfSpread = isUsdtBook ? 0.0002 : 0.0008;
    const drift = valueNoise(start, 20 * MINUTE, this.seed, 'flow', venue, pair);

    // The paths' shortest octave is minutes long: evaluate them at the minute's ends and
    // interpolate in between (the per-trade noise below supplies the tick-level jitter).
    const midStart = this.mid(venue, base, quote, start);
    const midEnd = this.mid(venue, base, quote, start + MINUTE);
    const usdStart = this.usd(base, start);
    const usdEnd = this.usd(base, start + MINUTE);

    for (let k = 0; k < times.length; k++) {
      const time = start + times[k]!;
      const f = times[k]! / MINUTE;
      const side: 'buy' | 'sell' = next() < 0.5 + 0.1 * drift ? 'buy' : 'sell';
      const mid = midStart + (midEnd - midStart) * f;
      const usdPrice = usdStart + (usdEnd - usdStart) * f;
      const noise = (next() - 0.5) * 0.0006;
      const price = round(mid * (1 + (side === 'buy' ? halfSpread : -halfSpread) + noise), pDecimals);
      const notionalUsd = Math.min(250_000, Math.max(2, Math.exp(Math.log(medianUsd) + 1.3 * gaussian(next))));
      const minAmount = 10 ** -aDecimals;
      const amount = Math.max(minAmount, round(notionalUsd / usdPrice, aDecimals));
      if (time >= this.historyStart) tape.push(time, minute * ID_STRIDE + k, price, amount, side);
    }
  }
}

/** The trade id a venue would give the seq-th trade, made at `time` (ids increase with time on every venue). */
function tradeId(venue: SimVenue, seq: number, time: number, seed: number): string {
  if (venue !== 'valr') return String(seq);
  // UUID version 7: the time in ms, version, 12 opaque bits, variant, 14 opaque bits, and the
  // sequence number in the last 48 (valrSequence reads it back)
  const ms = time.toString(16).padStart(12, '0');
  const r = hash32(seed, 'valr-id', seq).toString(16).padStart(8, '0');
  const variant = '89ab'[hash32(seed, 'valr-variant', seq) % 4]!;
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${r.slice(0, 3)}-${variant}${r.slice(3, 6)}-${seq.toString(16).padStart(12, '0')}`;
}

/** The sequence number in a trade id tradeId made (undefined: not such an id). */
function seqOf(venue: SimVenue, id: string): number | undefined {
  if (venue !== 'valr') return /^\d{1,15}$/.test(id) ? Number(id) : undefined;
  return valrSequence(id);
}

function round(x: number, decimals: number): number {
  return Number(x.toFixed(decimals));
}

function significant(x: number, digits: number): number {
  return Number(x.toPrecision(digits));
}
