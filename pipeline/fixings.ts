// Which daily fixings are due (lib/methodology/fixings.ts says when each is taken): a fixing is
// published once its whole window has settled (the pair's settled_through has reached its time),
// from the trades as they stand then, and never recomputed. One whose time is more than
// fixing_lookback_hours old is no longer due (a service down for days does not fill them in).
import type { Sql } from '../lib/db/connect.js';
import { fixingId, fixingSlotsBetween, type FixingSlot } from '../lib/methodology/fixings.js';
import { param } from '../lib/methodology/parameters.js';

export interface DueFixing {
  readonly pair: { readonly pair: string; readonly base: string; readonly quote: string };
  readonly slot: FixingSlot;
}

/** The fixings due at `now`: settled, not yet published, within the lookback, oldest first. */
export async function dueFixings(sql: Sql, now: Date): Promise<DueFixing[]> {
  const from = new Date(now.getTime() - param('fixing_lookback_hours') * 3_600_000);
  const pairs = await sql<{ pair: string; base: string; quote: string; settled_through: Date; published: string[] }[]>`
    SELECT p.pair, p.base, p.quote, s.settled_through,
           coalesce((SELECT json_agg(f.id) FROM fixings f WHERE f.pair = p.pair AND f.time > ${from}), '[]') AS published
    FROM public_pairs p JOIN pair_settlement s USING (pair)
    ORDER BY p.pair`;
  // fixings start with the data: none for hours before the first trade stored
  const [first] = await sql<{ t: Date | null }[]>`SELECT min(time) AS t FROM trades`;
  if (!first?.t) return [];
  const start = new Date(Math.max(from.getTime(), first.t.getTime()));
  const due: DueFixing[] = [];
  for (const p of pairs) {
    const published = new Set(p.published);
    for (const slot of fixingSlotsBetween(p.quote, start, p.settled_through)) {
      if (slot.windowStart >= start && !published.has(fixingId(p.pair, slot))) due.push({ pair: { pair: p.pair, base: p.base, quote: p.quote }, slot });
    }
  }
  return due.sort((a, b) => a.slot.time.getTime() - b.slot.time.getTime());
}
