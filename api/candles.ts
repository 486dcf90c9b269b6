// One candle as every format shows it. shapeCandle() makes the JSON object of GET
// /v1/rates/historical; candleColumns() lays the same fields out flat, in the order and with the
// types of the CANDLE schema (api/schemas.ts), for CSV and Parquet. So a field is added in two
// places, the schema and shapeCandle, and every format has it.
import { num, numeric } from './format.js';
import type { PageRow } from './queries/candles.js';
import { CANDLE, TIMESTAMP, type Candle } from './schemas.js';
import * as v from './verification.js';

/**
 * One candle from its page row. `full` (Builder and up): the verification's confidence,
 * divergence, synthetic price and source count besides status and quality.
 */
export function shapeCandle(c: PageRow, pair: string, quote: string, full: boolean): Candle {
  return {
    time: c.t,
    pair,
    open: numeric(c.open),
    high: numeric(c.high),
    low: numeric(c.low),
    close: numeric(c.close),
    vwap: num(c.vwap),
    total_volume: numeric(c.volume),
    settled: c.settled,
    verification: verification(c, quote, full),
  };
}

function verification(c: PageRow, quote: string, full: boolean): Candle['verification'] {
  const synthetic = c.synthetic === null ? null : Number(c.synthetic);
  const div = c.vwap === null ? null : v.divergence(Number(c.vwap), synthetic);
  const out: Candle['verification'] = {
    status: v.verificationStatus(div, quote),
    data_quality: c.venues >= 2 ? 'high' : c.venues === 1 ? 'medium' : 'low',
  };
  if (full) {
    const dispersion = v.dispersionOf(c.venues, Number(c.venue_min ?? 0), Number(c.venue_max ?? 0), Number(c.venue_mean ?? 0));
    out.confidence = v.confidence({ sources: c.venues, dispersion, divergence: div, quote, ageSeconds: 0 });
    out.divergence_pct = div === null ? null : v.percent(div);
    out.synthetic_price = num(synthetic);
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
