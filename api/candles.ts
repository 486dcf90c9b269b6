// One candle as every format shows it. shapeCandle() makes the JSON object of GET
// /v1/rates/historical; candleColumns() lays the same fields out flat, in the order and with the
// types of the CANDLE schema (api/schemas.ts), for CSV and Parquet. So a field is added in two
// places, the schema and shapeCandle, and every format has it.
import { numeric } from '../lib/format.js';
import * as x from '../lib/methodology/exact.js';
import { METHODOLOGY_VERSION } from '../lib/methodology/parameters.js';
import * as v from '../lib/methodology/rules.js';
import type { PageRow } from './queries/candles.js';
import { CANDLE, TIMESTAMP, type Candle } from './schemas.js';

/**
 * One candle from its page row, its VWAP and synthetic price computed exactly from its sums and
 * rounded as the methodology publishes rates. `full` (Builder and up): the verification's
 * confidence, divergence, synthetic price and source count besides status and quality.
 */
export function shapeCandle(c: PageRow, pair: string, quote: string, full: boolean): Candle {
  const p = prices(c);
  return {
    time: c.t,
    pair,
    open: numeric(c.open),
    high: numeric(c.high),
    low: numeric(c.low),
    close: numeric(c.close),
    vwap: p.vwap ? Number(v.publishedRate(p.vwap)) : null,
    total_volume: numeric(c.volume),
    settled: c.settled,
    verification: verification(c, p, quote, full),
    methodology_version: METHODOLOGY_VERSION,
  };
}

/** A candle's VWAP and synthetic price, exact, from its sums (null where a sum is missing). */
function prices(c: PageRow) {
  const volume = x.parseDecimal(c.volume);
  const vwap = volume.n > 0n ? x.div(x.parseDecimal(c.pv), volume) : null;
  const usdVolume = c.usd_volume === null ? null : x.parseDecimal(c.usd_volume);
  const synthetic =
    c.units_per_usd === null || c.usd_pv === null || !usdVolume || usdVolume.n === 0n
      ? null
      : x.mul(x.div(x.parseDecimal(c.usd_pv), usdVolume), x.parseDecimal(c.units_per_usd));
  return { vwap, synthetic };
}

const parsed = (text: string | null) => (text === null ? x.ZERO : x.parseDecimal(text));

function verification(c: PageRow, p: ReturnType<typeof prices>, quote: string, full: boolean): Candle['verification'] {
  const div = p.vwap ? v.divergence(p.vwap, p.synthetic) : null;
  const out: Candle['verification'] = {
    status: v.verificationStatus(div, quote),
    data_quality: c.venues >= 2 ? 'high' : c.venues === 1 ? 'medium' : 'low',
  };
  if (full) {
    const mean = parsed(c.venue_mean);
    const dispersion = c.venues < 2 || mean.n <= 0n ? x.ZERO : x.div(x.sub(parsed(c.venue_max), parsed(c.venue_min)), mean);
    out.confidence = v.confidence({ sources: c.venues, dispersion, divergence: div, quote, ageSeconds: 0 });
    out.divergence_pct = div === null ? null : v.percent(div);
    out.synthetic_price = p.synthetic ? Number(v.publishedRate(p.synthetic)) : null;
    out.sources_count = c.venues;
  }
  return out;
}

/** What a column holds, as a file format types it. */
export type ColumnType = 'timestamp' | 'string' | 'number' | 'integer' | 'boolean';

export interface CandleColumn {
  /** The field's name, also the column's: the verification's fields lose their `verification.` */
  readonly name: string;
  readonly type: ColumnType;
  /** The value may be null (an empty CSV cell, a Parquet null). */
  readonly nullable: boolean;
  /** Read from candle.verification rather than the candle. */
  readonly nested: boolean;
  /** Shown to Builder and up only: the verification fields the schema makes optional. */
  readonly full: boolean;
}

type PropertySchema = { readonly type?: string | readonly string[]; readonly enum?: readonly unknown[] };

function typeOf(name: string, s: PropertySchema): { type: ColumnType; nullable: boolean } {
  if (s === TIMESTAMP) return { type: 'timestamp', nullable: false };
  if (s.enum) return { type: 'string', nullable: false };
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const nullable = types.includes('null');
  const [type] = types.filter((t) => t !== 'null');
  if (type === 'number' || type === 'integer' || type === 'boolean' || type === 'string') return { type, nullable };
  throw new Error(`candle field '${name}' has a type no file format maps: ${JSON.stringify(s)}`);
}

/** Every column, in the schema's order: the candle's own fields, then its verification's. */
const ALL_COLUMNS: readonly CandleColumn[] = (() => {
  const columns: CandleColumn[] = [];
  const nested = CANDLE.properties.verification;
  for (const [name, s] of Object.entries(CANDLE.properties)) {
    if (name === 'verification') continue;
    columns.push({ name, ...typeOf(name, s as PropertySchema), nested: false, full: false });
  }
  const shown = new Set<string>(nested.required);
  for (const [name, s] of Object.entries(nested.properties)) {
    columns.push({ name, ...typeOf(name, s as PropertySchema), nested: true, full: !shown.has(name) });
  }
  const names = new Set(columns.map((c) => c.name));
  if (names.size !== columns.length) throw new Error('a verification field has the name of a candle field: the flat columns would clash');
  return columns;
})();

/** The columns a tier sees: all of them with `full` (Builder and up), else those without. */
export function candleColumns(full: boolean): readonly CandleColumn[] {
  return full ? ALL_COLUMNS : ALL_COLUMNS.filter((c) => !c.full);
}

/** A candle's values in the columns' order (undefined: a field the candle lacks). */
export function candleValues(candle: Candle, columns: readonly CandleColumn[]): unknown[] {
  const nested = candle.verification as Record<string, unknown>;
  const own = candle as unknown as Record<string, unknown>;
  return columns.map((c) => (c.nested ? nested[c.name] : own[c.name]));
}
