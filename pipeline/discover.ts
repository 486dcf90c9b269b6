// Which venue serves which pair: read from each venue's loadMarkets(), never written down per pair.
// A pair is served by a venue when the venue lists its BASE/QUOTE as an active spot market. The
// internal USDT pairs feed the synthetic price and are taken from binance only, the deepest book.
import type { Exchange } from 'ccxt';
import type { Sql } from '../lib/db/connect.js';

export interface PairRow {
  readonly pair: string;
  readonly base: string;
  readonly quote: string;
  readonly visibility: 'public' | 'internal';
}

export interface Listing {
  readonly pair: string;
  readonly symbol: string;
}

const INTERNAL_PAIRS_FROM = 'binance';

export function listingsOf(venueId: string, exchange: Exchange, pairs: readonly PairRow[]): Listing[] {
  const out: Listing[] = [];
  for (const p of pairs) {
    if (p.visibility === 'internal' && venueId !== INTERNAL_PAIRS_FROM) continue;
    const symbol = `${p.base}/${p.quote}`;
    const market = exchange.markets?.[symbol];
    if (market && market.spot !== false && market.active !== false) out.push({ pair: p.pair, symbol });
  }
  return out;
}

/** Records what a venue lists now; pairs it no longer lists are dropped. */
export async function recordListings(sql: Sql, venueId: string, listings: readonly Listing[]): Promise<void> {
  const pairs = listings.map((l) => l.pair);
  await sql.begin(async (tx) => {
    await tx`DELETE FROM venue_markets WHERE exchange = ${venueId} AND pair NOT IN (SELECT jsonb_array_elements_text(${tx.json(pairs)}))`;
    for (const l of listings) {
      await tx`
        INSERT INTO venue_markets (exchange, pair, symbol) VALUES (${venueId}, ${l.pair}, ${l.symbol})
        ON CONFLICT (exchange, pair) DO UPDATE SET symbol = excluded.symbol, discovered_at = now()`;
    }
  });
}

export async function loadPairs(sql: Sql): Promise<PairRow[]> {
  return sql<PairRow[]>`SELECT pair, base, quote, visibility FROM pairs ORDER BY pair`;
}
