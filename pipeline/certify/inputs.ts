// Reads what a certified window is computed from, exactly as stored: the pair's trades in the
// window, the venues listed for it and how far each had collected, the USDT leg's per-venue sums
// and the FX rate in force at the window's hour with the observations behind it.
import type { Sql } from '../../lib/db/connect.js';
import type { FxInForce, LegVenue, ListedVenue, TradeRecord, WindowInputs } from '../../lib/methodology/window.js';

/** The contract's timestamp, microseconds kept: how a time is written in a bundle. */
const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'`;

/**
 * The window's inputs. Its four reads are sent at once: none depends on another, and on one
 * connection (the embedded database) they go down it together instead of one round trip each.
 */
export async function readWindowInputs(sql: Sql, pair: { pair: string; base: string; quote: string }, start: Date, end: Date): Promise<WindowInputs> {
  const usd = pair.base === 'USDT' || pair.base === 'USDC';
  const legPair = `${pair.base}USDT`;
  const [trades, venues, legVenues, fx] = await Promise.all([
    sql<TradeRecord[]>`
      SELECT exchange, trade_id, to_char(time AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS time,
             price::text AS price, amount::text AS amount, side
      FROM trades
      WHERE pair = ${pair.pair} AND time >= ${start} AND time < ${end}
      ORDER BY exchange, time, trade_id`,
    sql<ListedVenue[]>`
      SELECT m.exchange, to_char(h.collected_through AT TIME ZONE 'UTC', ${sql.unsafe(ISO)}) AS collected_through
      FROM venue_markets m LEFT JOIN venue_health h ON h.exchange = m.exchange AND h.pair = m.pair
      WHERE m.pair = ${pair.pair}
      ORDER BY m.exchange`,
    usd
      ? []
      : sql<LegVenue[]>`
          SELECT exchange, sum(pv)::text AS pv, sum(volume)::text AS volume, sum(trades)::int AS trades
          FROM candles_5m_by_exchange
          WHERE pair = ${legPair} AND bucket >= ${start} AND bucket < ${end}
          GROUP BY exchange ORDER BY exchange`,
    fxInForce(sql, pair.quote, start),
  ]);
  return {
    ...pair,
    start,
    end,
    trades: [...trades],
    venues: [...venues],
    usdtLeg: usd ? null : { pair: legPair, venues: [...legVenues] },
    fx,
  };
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
