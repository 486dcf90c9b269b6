// Reads what a certified window is computed from, exactly as stored: the pair's trades in the
// window, the venues listed for it and how far each had collected, the USDT leg's per-venue sums
// and the FX rate in force at the window's hour with the observations behind it.
import type { Sql } from '../../lib/db/connect.js';
import type { FxInForce, LegVenue, ListedVenue, TradeRecord, WindowInputs } from '../../lib/methodology/window.js';

/** The contract's timestamp, microseconds kept: how a time is written in a bundle. */
const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'`;

export interface Window {
  readonly start: Date;
  readonly end: Date;
}

type Pair = { pair: string; base: string; quote: string };

/** One window's inputs. */
export async function readWindowInputs(sql: Sql, pair: Pair, start: Date, end: Date): Promise<WindowInputs> {
  return (await readWindowsInputs(sql, pair, [{ start, end }]))[0]!;
}

/**
 * The inputs of each of a pair's windows, in the order given, in as many reads as one window takes
 * (the FX rate's two once per distinct hour): the trades and the USDT leg's sums are read for all
 * the windows at once, each row labelled with its window. The reads are sent together: none
 * depends on another, and on one connection (the embedded database) they go down it at once
 * instead of one round trip each.
 */
export async function readWindowsInputs(sql: Sql, pair: Pair, windows: readonly Window[]): Promise<WindowInputs[]> {
  if (windows.length === 0) return [];
  const usd = pair.base === 'USDT' || pair.base === 'USDC';
  const legPair = `${pair.base}USDT`;
  const starts = windows.map((w) => w.start.toISOString());
  const ends = windows.map((w) => w.end.toISOString());
  // the whole span as well: the hypertable's chunks outside it are left out when planning
  const from = new Date(Math.min(...windows.map((w) => w.start.getTime())));
  const until = new Date(Math.max(...windows.map((w) => w.end.getTime())));
  const hours = [...new Set(windows.map((w) => hourOf(w.start)))];
  const [trades, venues, legVenues, ...fx] = await Promise.all([
    sql<(TradeRecord & { w: number })[]>`
      SELECT w.i::int AS w, t.exchange, t.trade_id, to_char(t.time AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS time,
             t.price::text AS price, t.amount::text AS amount, t.side
      FROM unnest(${starts}::timestamptz[], ${ends}::timestamptz[]) WITH ORDINALITY AS w (start, until, i)
      JOIN trades t ON t.pair = ${pair.pair} AND t.time >= w.start AND t.time < w.until
      WHERE t.time >= ${from} AND t.time < ${until}
      ORDER BY w.i, t.exchange, t.time, t.trade_id`,
    sql<ListedVenue[]>`
      SELECT m.exchange, to_char(h.collected_through AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS collected_through
      FROM venue_markets m LEFT JOIN venue_health h ON h.exchange = m.exchange AND h.pair = m.pair
      WHERE m.pair = ${pair.pair}
      ORDER BY m.exchange`,
    usd
      ? []
      : sql<(LegVenue & { w: number })[]>`
          SELECT w.i::int AS w, e.exchange, sum(e.pv)::text AS pv, sum(e.volume)::text AS volume, sum(e.trades)::int AS trades
          FROM unnest(${starts}::timestamptz[], ${ends}::timestamptz[]) WITH ORDINALITY AS w (start, until, i)
          JOIN candles_5m_by_exchange e ON e.pair = ${legPair} AND e.bucket >= w.start AND e.bucket < w.until
          WHERE e.bucket >= ${from} AND e.bucket < ${until}
          GROUP BY w.i, e.exchange ORDER BY w.i, e.exchange`,
    ...hours.map((hour) => fxInForce(sql, pair.quote, new Date(hour))),
  ]);
  const fxByHour = new Map(hours.map((hour, i) => [hour, fx[i]!]));
  const tradesOf = byWindow(trades, windows.length);
  const legOf = byWindow(legVenues, windows.length);
  return windows.map((w, i) => ({
    ...pair,
    start: w.start,
    end: w.end,
    trades: tradesOf[i]!,
    venues: [...venues],
    usdtLeg: usd ? null : { pair: legPair, venues: legOf[i]! },
    fx: fxByHour.get(hourOf(w.start))!,
  }));
}

const HOUR_MS = 3_600_000;
const hourOf = (at: Date) => Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;

/** Rows labelled with their window's ordinal (from 1), as lists by window, the label dropped. */
function byWindow<T extends { w: number }>(rows: readonly T[], count: number): Omit<T, 'w'>[][] {
  const out: Omit<T, 'w'>[][] = Array.from({ length: count }, () => []);
  for (const { w, ...row } of rows) out[w - 1]!.push(row);
  return out;
}

/** The FX rate in force at the start of `at`'s UTC hour (fx_in_force, else looked up), with its inputs. */
async function fxInForce(sql: Sql, currency: string, at: Date): Promise<FxInForce | null> {
  const [row] = await sql<Omit<FxInForce, 'observations'>[]>`
    WITH h AS (SELECT time_bucket(INTERVAL '1 hour', ${at}::timestamptz) AS hour)
    SELECT ${currency} AS currency, to_char(h.hour AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS hour,
           coalesce(f.units_per_usd, l.units_per_usd)::text AS units_per_usd,
           to_char(coalesce(f.source_updated_at, l.source_updated_at) AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS source_updated_at,
           coalesce(f.fresh_sources, l.fresh_sources) AS fresh_sources
    FROM h
    LEFT JOIN fx_in_force f ON f.currency = ${currency} AND f.hour = h.hour
    LEFT JOIN LATERAL fx_rate_at(${currency}, h.hour) l ON f.hour IS NULL`;
  if (!row?.units_per_usd) return null;
  const observations = await sql<FxInForce['observations'][number][]>`
    SELECT DISTINCT ON (source) source, units_per_usd::text AS units_per_usd,
           to_char(time AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS time,
           to_char(source_updated_at AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS source_updated_at
    FROM fx_rates
    WHERE currency = ${currency} AND time <= ${new Date(Date.parse(row.hour))}
      AND time >= ${new Date(Date.parse(row.hour))}::timestamptz - make_interval(hours => methodology_parameter('fx_fresh_hours')::int)
    ORDER BY source, time DESC`;
  return { ...row, observations: [...observations] };
}
