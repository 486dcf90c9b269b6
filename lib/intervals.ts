// The candle intervals afrates publishes: the one list. The SQL reads it through functions generated
// from it (lib/db/intervals-sql.ts: candle_width, candle_aggregate, candle_intervals, the `candles`
// view), and the API's schemas, tier rules, restatements, exports and OpenAPI read it here; the web
// gets the names from the API. Adding an interval is one entry here and one aggregate file in
// sql/aggregates/ (docs/ADD_INTERVAL.md); test/structure.test.ts fails if any other file spells
// the list out.

export interface CandleInterval {
  /** What the API calls it: its width as digits and a unit (m, h, d), which the web reads it by. */
  readonly name: string;
  /** Its width in milliseconds. */
  readonly ms: number;
  /** Its width as a PostgreSQL interval. */
  readonly width: string;
  /** The continuous aggregate holding its candles (sql/aggregates/, its `-- aggregate:` header). */
  readonly aggregate: string;
  /** What its aggregate reads: raw `trades`, or the interval whose candles it combines (hierarchical). */
  readonly builtFrom: string;
  /** Its width in words, as an adjective ("a 15-minute candle"). */
  readonly words: string;
}

export const INTERVALS = [
  { name: '5m', ms: 300_000, width: '5 minutes', aggregate: 'candles_5m', builtFrom: 'trades', words: '5-minute' },
  { name: '15m', ms: 900_000, width: '15 minutes', aggregate: 'candles_15m', builtFrom: '5m', words: '15-minute' },
  { name: '1h', ms: 3_600_000, width: '1 hour', aggregate: 'candles_1h', builtFrom: '5m', words: 'hourly' },
  { name: '1d', ms: 86_400_000, width: '1 day', aggregate: 'candles_1d', builtFrom: '1h', words: 'daily' },
] as const satisfies readonly CandleInterval[];

export type IntervalName = (typeof INTERVALS)[number]['name'];

/** The names, narrowest first (the `enum` of every schema that takes or answers an interval). */
export const INTERVAL_NAMES: readonly IntervalName[] = INTERVALS.map((i) => i.name);

/** The interval GET /v1/rates/historical, premium and exports answer when none is asked for. */
export const DEFAULT_INTERVAL: IntervalName = '1h';

const BY_NAME: ReadonlyMap<string, CandleInterval> = new Map(INTERVALS.map((i) => [i.name, i]));

/** The interval of a name (one of INTERVAL_NAMES). */
export function intervalOf(name: IntervalName): CandleInterval {
  return BY_NAME.get(name)!;
}

/** The restatement subject of an interval's candles (`candle_<name>`); fixings are `fixing`. */
export const candleSubject = (name: IntervalName) => `candle_${name}` as const;
export const RESTATEMENT_SUBJECTS = [...INTERVAL_NAMES.map(candleSubject), 'fixing'] as const;

/**
 * The observations an interval's premium series is grouped from: the candles its own are built
 * from (the base interval: its own), each exact at its level.
 */
export function observationsOf(name: IntervalName): CandleInterval {
  const i = intervalOf(name);
  return i.builtFrom === 'trades' ? i : BY_NAME.get(i.builtFrom)!;
}

// The list's own rules, checked once at load: a wrong entry stops every process that reads it.
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
for (const [n, i] of INTERVALS.entries()) {
  const m = /^(\d+)([mhd])$/.exec(i.name);
  if (!m || Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] !== i.ms) throw new Error(`interval ${i.name}: its name is not its width (${i.ms} ms) as digits and m, h or d`);
  if (i.builtFrom !== 'trades') {
    const from = BY_NAME.get(i.builtFrom);
    if (!from || INTERVALS.indexOf(from as (typeof INTERVALS)[number]) >= n || i.ms % from.ms !== 0) throw new Error(`interval ${i.name}: built from ${i.builtFrom}, which is no narrower interval before it that divides its width`);
  }
  if (n > 0 && INTERVALS[n - 1]!.ms >= i.ms) throw new Error(`interval ${i.name}: the list runs narrowest first`);
}
