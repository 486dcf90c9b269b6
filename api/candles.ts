// One candle as every format shows it. shapeCandle() makes the JSON object of GET
// /v1/rates/historical; candleColumns() lays the same fields out flat, in the order and with the
// types of the CANDLE schema (api/schemas.ts), for CSV and Parquet. So a field is added in two
// places, the schema and shapeCandle, and every format has it.
import { numberText, numeric } from '../lib/format.js';
import { ESTIMATE, Undecided } from '../lib/methodology/estimate.js';
import { EXACT } from '../lib/methodology/exact.js';
import { candleDataQuality, candleFiguresIn } from '../lib/methodology/figures.js';
import { METHODOLOGY_VERSION } from '../lib/methodology/parameters.js';
import type { PageRow } from './queries/candles.js';
import { CANDLE, TIMESTAMP, type Candle } from './schemas.js';

/**
 * One candle from its page row, its figures (VWAP, synthetic price, status, confidence) computed
 * from its sums by lib/methodology/figures.ts. `full` (Builder and up): the verification's
 * confidence, divergence, synthetic price and source count besides status and quality. Its
 * numbers are what `n` makes of their decimal text: JSON's numbers (numeric), or, for CSV, the
 * text JSON writes for them (numberText).
 */
export function shapeCandle(c: PageRow, pair: string, quote: string, full: boolean, n: (text: string) => number = numeric): Candle {
  const f = figures(c, quote, full);
  const quality = candleDataQuality(c.venues);
  return {
    time: c.t,
    pair,
    open: n(c.open),
    high: n(c.high),
    low: n(c.low),
    close: n(c.close),
    vwap: f.vwap === null ? null : n(f.vwap),
    total_volume: n(c.volume),
    settled: c.settled,
    // two literals rather than a spread, which V8 builds on its slow path (lib/methodology/figures.ts)
    verification: full
      ? {
          status: f.status,
          data_quality: quality,
          confidence: f.confidence!,
          divergence_pct: f.divergence_pct === null ? null : n(f.divergence_pct),
          synthetic_price: f.synthetic_price === null ? null : n(f.synthetic_price),
          sources_count: c.venues,
        }
      : { status: f.status, data_quality: quality },
    methodology_version: METHODOLOGY_VERSION,
  };
}

/** A candle as CSV writes it: shapeCandle with each number as the text JSON writes for it. */
export const candleTexts = (c: PageRow, pair: string, quote: string, full: boolean): Candle => shapeCandle(c, pair, quote, full, numberText as unknown as (text: string) => number);

type Figures = ReturnType<ReturnType<typeof candleFiguresIn>>;

const inDoubles = candleFiguresIn(ESTIMATE);
const exactly = candleFiguresIn(EXACT);

/** A candle's published figures (lib/methodology/figures.ts): in error-bounded doubles, or exactly where doubles cannot tell (the same figures). */
function figures(c: PageRow, quote: string, full: boolean): Figures {
  try {
    return inDoubles(c, quote, full);
  } catch (err) {
    if (err instanceof Undecided) return exactly(c, quote, full);
    throw err;
  }
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
