// Replay: play the trades and FX rates of a JSON-lines file instead of generating them. Each line
// is a trade
//   {"venue":"luno","pair":"BTCNGN","time":"2026-11-20T10:00:00.123Z","id":"123","price":152000000,"amount":0.01,"side":"buy"}
// (price and amount may also be decimal strings, "152000000.5" and "0.00000001": the venues then
// send those exact strings on the wire, with no binary float in between)
// or an FX rate
//   {"fx":"coinbase","currency":"NGN","rate":1530.5,"time":"2026-11-20T10:00:00Z"}
// Blank lines and lines starting with # are skipped. Listings are the venue/pairs in the file;
// a trade becomes visible when the clock reaches its time. Any bad line fails the whole load with
// an error naming its line number.
import { readFileSync } from 'node:fs';
import {
  SIM_VENUES,
  splitPair,
  type FxSnapshot,
  type FxSourceId,
  type SimTrade,
  type Tape,
  type TradeSource,
} from './types.js';

export class ReplayError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    message: string,
  ) {
    super(`${file}:${line}: ${message}`);
    this.name = 'ReplayError';
  }
}

class ReplayTape implements Tape {
  private readonly trades: SimTrade[];
  private readonly index = new Map<string, number>();

  constructor(trades: SimTrade[]) {
    // Stable sort: trades with the same time keep the file's order.
    this.trades = trades.map((t, i) => ({ t, i })).sort((a, b) => a.t.time - b.t.time || a.i - b.i).map((x) => x.t);
    this.trades.forEach((t, i) => this.index.set(t.id, i));
  }

  get length(): number {
    return this.trades.length;
  }

  at(i: number): SimTrade {
    return { ...this.trades[i]! };
  }

  timeAt(i: number): number {
    return this.trades[i]!.time;
  }

  atLeastId(id: number): number {
    return this.trades.findIndex((t) => Number(t.id) >= id);
  }

  indexOf(id: string): number | undefined {
    return this.index.get(id);
  }
}

interface FxPoint {
  time: number;
  rate: number;
}

export class ReplayMarket implements TradeSource {
  readonly kind = 'replay' as const;

  constructor(
    private readonly tapes: Map<string, ReplayTape>,
    private readonly fxPoints: Map<FxSourceId, Map<string, FxPoint[]>>,
  ) {}

  listings(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const key of [...this.tapes.keys()].sort()) {
      const [venue, pair] = key.split(':') as [string, string];
      (out[venue] ??= []).push(pair);
    }
    return out;
  }

  tape(venue: string, pair: string): Tape | undefined {
    return this.tapes.get(`${venue}:${pair}`);
  }

  fx(source: FxSourceId, nowMs: number): FxSnapshot | undefined {
    const byCurrency = this.fxPoints.get(source);
    if (!byCurrency) return undefined;
    const rates: Record<string, number> = {};
    let updatedAt = -Infinity;
    for (const [currency, points] of byCurrency) {
      let latest: FxPoint | undefined;
      for (const p of points) {
        if (p.time > nowMs) break;
        latest = p;
      }
      if (latest) {
        rates[currency] = latest.rate;
        updatedAt = Math.max(updatedAt, latest.time);
      }
    }
    if (updatedAt === -Infinity) return undefined;
    rates.USD ??= 1;
    return { rates, updatedAt };
  }
}

/** Reads and validates a replay file; throws ReplayError naming the first bad line. */
export function loadReplay(file: string): ReplayMarket {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`replay file ${file}: ${(e as Error).message}`);
  }
  return parseReplay(text, file);
}

export function parseReplay(text: string, file = 'replay'): ReplayMarket {
  const trades = new Map<string, SimTrade[]>();
  const ids = new Map<string, Set<string>>();
  const fx = new Map<FxSourceId, Map<string, FxPoint[]>>();
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!.trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const lineNo = n + 1;
    const fail = (message: string): never => {
      throw new ReplayError(file, lineNo, message);
    };
    let obj: unknown;
    try {
      obj = JSON.parse(raw);
    } catch {
      fail('not valid JSON');
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) fail('expected a JSON object');
    const o = obj as Record<string, unknown>;
    const time = parseTime(o.time) ?? fail(`"time" must be an ISO 8601 date-time or epoch ms, got ${JSON.stringify(o.time)}`);

    if ('fx' in o) {
      const source = o.fx === 'coinbase' ? 'coinbase' : o.fx === 'exchangerate_api' || o.fx === 'exchangerate-api' ? 'exchangerate_api' : undefined;
      if (!source) fail(`"fx" must be "coinbase" or "exchangerate_api", got ${JSON.stringify(o.fx)}`);
      const currency = typeof o.currency === 'string' && /^[A-Z]{3}$/.test(o.currency) ? o.currency : fail('"currency" must be a 3-letter code');
      const rate = positive(o.rate) ?? fail(`"rate" must be a positive number, got ${JSON.stringify(o.rate)}`);
      const byCurrency = fx.get(source!) ?? new Map<string, FxPoint[]>();
      fx.set(source!, byCurrency);
      const points = byCurrency.get(currency) ?? [];
      byCurrency.set(currency, points);
      points.push({ time, rate });
      continue;
    }

    const venue = typeof o.venue === 'string' && (SIM_VENUES as readonly string[]).includes(o.venue)
      ? o.venue
      : fail(`"venue" must be one of ${SIM_VENUES.join(', ')}, got ${JSON.stringify(o.venue)}`);
    const pair = typeof o.pair === 'string' && /^[A-Z0-9]{5,12}$/.test(o.pair) && splitPair(o.pair)
      ? o.pair
      : fail(`"pair" must be like "BTCNGN", got ${JSON.stringify(o.pair)}`);
    const id = typeof o.id === 'string' && o.id !== '' ? o.id : typeof o.id === 'number' && Number.isSafeInteger(o.id) ? String(o.id) : fail('"id" must be a non-empty string');
    const price = positiveDecimal(o.price) ?? fail(`"price" must be a positive number or decimal string, got ${JSON.stringify(o.price)}`);
    const amount = positiveDecimal(o.amount) ?? fail(`"amount" must be a positive number or decimal string, got ${JSON.stringify(o.amount)}`);
    const side = o.side === 'buy' || o.side === 'sell' ? o.side : fail(`"side" must be "buy" or "sell", got ${JSON.stringify(o.side)}`);
    const key = `${venue}:${pair}`;
    const seen = ids.get(key) ?? new Set<string>();
    ids.set(key, seen);
    if (seen.has(id)) fail(`duplicate id ${JSON.stringify(id)} for ${venue} ${pair}`);
    seen.add(id);
    const list = trades.get(key) ?? [];
    trades.set(key, list);
    list.push({ venue, pair, time, id, price: price.value, amount: amount.value, side, priceText: price.text, amountText: amount.text });
  }
  for (const byCurrency of fx.values()) {
    for (const points of byCurrency.values()) points.sort((a, b) => a.time - b.time);
  }
  const tapes = new Map<string, ReplayTape>();
  for (const [key, list] of trades) tapes.set(key, new ReplayTape(list));
  return new ReplayMarket(tapes, fx);
}

function parseTime(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v > 0 ? Math.trunc(v) : undefined;
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(v)) return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

function positive(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}

/** A positive number, or a positive plain decimal string kept as written (its text goes on the wire). */
function positiveDecimal(v: unknown): { value: number; text?: string } | undefined {
  if (typeof v === 'string') return /^\d+(\.\d+)?$/.test(v) && /[1-9]/.test(v) ? { value: Number(v), text: v } : undefined;
  const value = positive(v);
  return value === undefined ? undefined : { value };
}
