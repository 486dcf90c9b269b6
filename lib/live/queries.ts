// Live snapshot queries: the public pairs, what a rebuild of the live rates reads (sql/functions:
// live_sources, synthetic_at), and the positions it follows (the newest cycle, the primary's WAL).
import type { Sql } from '../db/connect.js';

/** Every public pair with its base and quote currency, by name. */
export function publicPairs(sql: Sql) {
  return sql<{ pair: string; base: string; quote: string }[]>`SELECT pair, base, quote FROM public_pairs ORDER BY pair`;
}

export interface SourceRow {
  pair: string;
  exchange: string;
  pv: string;
  volume: string;
  trades: string;
  last_trade_at: Date;
}

export interface SyntheticRow {
  pair: string;
  price: string | null;
  usd_price_at: Date | null;
  fx_updated_at: Date | null;
  fx_fresh_sources: number | null;
}

/** Each venue's recent trades of each pair at `now`. */
export function liveSources(sql: Sql, now: Date) {
  return sql<SourceRow[]>`SELECT pair, exchange, pv::text, volume::text, trades::text, last_trade_at FROM live_sources(${now})`;
}

/** Every venue listing each pair. */
export function listedMarkets(sql: Sql) {
  return sql<{ pair: string; exchange: string }[]>`SELECT pair, exchange FROM venue_markets ORDER BY pair, exchange`;
}

/** Each pair's synthetic price at `now`. */
export function syntheticAt(sql: Sql, now: Date) {
  return sql<SyntheticRow[]>`SELECT * FROM synthetic_at(${now})`;
}

/** The market the newest cycle collected from; undefined before the first. */
export async function latestMarket(sql: Sql): Promise<'real' | 'simulated' | undefined> {
  const [cycle] = await sql<{ market: 'real' | 'simulated' }[]>`SELECT market FROM ingest_cycles ORDER BY id DESC LIMIT 1`;
  return cycle?.market;
}

/** The newest cycle's id; null before the first. */
export async function latestCycleId(sql: Sql): Promise<string | null> {
  const [row] = await sql<{ id: string | null }[]>`SELECT max(id)::text AS id FROM ingest_cycles`;
  return row?.id ?? null;
}

/** The newest restatement's id ('0' before the first). */
export async function latestRestatementId(sql: Sql): Promise<string> {
  const [row] = await sql<{ id: string }[]>`SELECT coalesce(max(id), 0)::text AS id FROM restatements`;
  return row!.id;
}

