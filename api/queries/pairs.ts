// Pair queries: the pairs the API publishes (public_pairs), in order.
import type { Sql } from '../../lib/db/connect.js';

/** Every public pair with its base and quote currency, by name. */
export function publicPairs(sql: Sql) {
  return sql<{ pair: string; base: string; quote: string }[]>`SELECT pair, base, quote FROM public_pairs ORDER BY pair`;
}
