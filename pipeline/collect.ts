// Trade collection for one venue and pair: page forward from the durable watermark until caught
// up. Trades are stored before the watermark moves, and stored idempotently (same exchange, pair,
// id, time: once), so a crash at any point resumes without a gap or a duplicate. Out-of-order and
// repeated trades in a page are sorted and de-duplicated here and by the table's identity.
import type { Exchange, Trade } from 'ccxt';
import type { Sql } from '../lib/db/connect.js';
import type { TradeNotices } from '../lib/db/notices.js';
import { insertTrades, type TradeRow } from './store.js';
import type { Venue } from './venues/types.js';

export interface Watermark {
  readonly time: Date;
  readonly id: string;
}

export interface CollectResult {
  readonly fetched: number;
  readonly inserted: number;
  readonly from: Date | null;
  readonly to: Date | null;
  readonly pages: number;
  readonly caughtUp: boolean;
  readonly watermark: Watermark | null;
  /**
   * When caught up: every trade up to this time has been collected (the start of the fetch that
   * found the venue caught up, less PUBLISH_GRACE_MS). Null when the walk stopped short.
   */
  readonly collectedThrough: Date | null;
  /** New trades older than `settledThrough` (arrived after their bucket was settled), and the oldest. */
  readonly late: number;
  readonly lateOldest: Date | null;
  /** Trades held back for being stamped more than AHEAD_TOLERANCE_MS ahead of our clock (each time seen). */
  readonly ahead: number;
  /** Trades not stored for being older than raw-trade retention keeps (`keepFrom`). */
  readonly expired: number;
  /**
   * Trades lost between the watermark and the oldest trade the venue still serves: its first page
   * did not reach back to the watermark's trade (Quidax serves only its latest trades, Luno 24
   * hours). Null when the walk joined up with what was stored.
   */
  readonly gap: { readonly from: Date; readonly to: Date } | null;
}

/** Allowance for a venue publishing a trade a little after its timestamp. */
export const PUBLISH_GRACE_MS = 5_000;

/**
 * A trade stamped further ahead of our clock than this is held back (neither stored nor moving the
 * watermark) until the clock reaches it: taken at once, a venue's clock or data gone wrong would
 * move the watermark ahead, and no trade before that time would ever be asked for again.
 */
export const AHEAD_TOLERANCE_MS = 60_000;

/** Full pages in a row with nothing new from `since` on, after which a walk gives up. */
const STALLED_PAGES = 20;

export interface CollectTarget {
  readonly venue: Venue;
  readonly exchange: Exchange;
  /** the venue's unified symbol, e.g. BTC/NGN */
  readonly symbol: string;
  /** afrates' pair id, e.g. BTCNGN */
  readonly pair: string;
}

export type Fetch = <T>(work: () => Promise<T>) => Promise<T>;

export async function readWatermark(sql: Sql, exchange: string, pair: string): Promise<Watermark | null> {
  const [row] = await sql<{ last_time: Date; last_id: string }[]>`
    SELECT last_time, last_id FROM ingest_watermarks WHERE exchange = ${exchange} AND pair = ${pair}`;
  return row ? { time: row.last_time, id: row.last_id } : null;
}

/** The ids stored at one millisecond of a venue's pair: the trades of the watermark's millisecond. */
async function idsStoredAt(sql: Sql, exchange: string, pair: string, time: Date): Promise<Set<string>> {
  const rows = await sql<{ trade_id: string }[]>`
    SELECT trade_id FROM trades WHERE pair = ${pair} AND time = ${time} AND exchange = ${exchange}`;
  return new Set(rows.map((r) => r.trade_id));
}

async function writeWatermark(sql: Sql, exchange: string, pair: string, w: Watermark): Promise<void> {
  // never backwards: a late page cannot rewind the resume point
  await sql`
    INSERT INTO ingest_watermarks (exchange, pair, last_time, last_id) VALUES (${exchange}, ${pair}, ${w.time}, ${w.id})
    ON CONFLICT (exchange, pair) DO UPDATE SET last_time = excluded.last_time, last_id = excluded.last_id, updated_at = now()
    WHERE ingest_watermarks.last_time <= excluded.last_time`;
}

/** Orders trades by (time, id), drops repeats and anything not a usable trade. */
export function normalise(trades: readonly Trade[], target: CollectTarget): TradeRow[] {
  const seen = new Set<string>();
  const rows: TradeRow[] = [];
  for (const t of trades) {
    if (t.id === undefined || t.timestamp === undefined || !(Number(t.price) > 0) || !(Number(t.amount) > 0)) continue;
    const id = String(t.id);
    if (seen.has(id)) continue;
    seen.add(id);
    rows.push({
      time: new Date(t.timestamp),
      exchange: target.venue.id,
      pair: target.pair,
      tradeId: id,
      price: String(t.price),
      amount: String(t.amount),
      side: t.side === 'buy' || t.side === 'sell' ? t.side : null,
    });
  }
  return rows.sort((a, b) => a.time.getTime() - b.time.getTime() || compareIds(a.tradeId, b.tradeId));
}

/** Numeric ids as numbers, others by code unit: the same order on every machine, whatever its locale. */
function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface CollectOptions {
  /** Where to start without a watermark (ms). */
  readonly startAt: number;
  /** Stop after this time (ms), for backfills; default: until caught up. */
  readonly until?: number;
  /** Most pages in one call, so one busy pair can't hold up a cycle. */
  readonly maxPages?: number;
  /** Keep the watermark (live collection) or leave it alone (backfill). */
  readonly trackWatermark?: boolean;
  readonly onPage?: (lastTime: number) => void;
  /** Write with COPY (a server): see pipeline/store.ts. */
  readonly copy?: boolean;
  /** The pair's settled_through now: new trades older than it are late (their bucket was settled). */
  readonly settledThrough?: () => Date | null;
  /**
   * Trades older than this are not stored: retention (TRADES_RETENTION_DAYS) has dropped or is
   * dropping the raw trades there, and candles refreshed over them would be rebuilt from this trade
   * alone, losing the ones dropped. Null: no retention.
   */
  readonly keepFrom?: () => Date | null;
  /** The clock (ms). */
  readonly now?: () => number;
  /** Told of every pair whose trades were stored (the live rate's listeners). */
  readonly notices?: TradeNotices;
}

/** What one write of new trades did. */
export interface Stored {
  readonly inserted: number;
  readonly from: Date | null;
  readonly to: Date | null;
  /** New trades older than `settledThrough` (their bucket was settled), and the oldest of them. */
  readonly late: number;
  readonly lateOldest: Date | null;
  /** Trades not stored for being older than raw-trade retention keeps. */
  readonly expired: number;
}

/**
 * Stores trades however they came (a REST page or a stream's messages): retention applied, each
 * once, late ones counted against the pair's settlement, and the listeners told. One rule for both
 * transports, so a trade is kept, counted and restated the same way whichever brought it first.
 */
export async function storeTrades(sql: Sql, rows: readonly TradeRow[], opts: Pick<CollectOptions, 'copy' | 'settledThrough' | 'keepFrom' | 'notices'>): Promise<Stored> {
  const keepFrom = opts.keepFrom?.();
  const kept = keepFrom ? rows.filter((r) => r.time >= keepFrom) : rows;
  const stored = await insertTrades(sql, kept, { copy: opts.copy });
  let late = 0;
  let lateOldest: Date | null = null;
  const settledThrough = opts.settledThrough?.();
  if (settledThrough) {
    for (const t of stored.times) {
      if (t >= settledThrough) continue;
      late++;
      if (!lateOldest || t < lateOldest) lateOldest = t;
    }
  }
  if (stored.inserted > 0) await opts.notices?.announce(new Set(kept.map((r) => r.pair)));
  return { inserted: stored.inserted, from: stored.from, to: stored.to, late, lateOldest, expired: rows.length - kept.length };
}

export async function collect(sql: Sql, target: CollectTarget, fetch: Fetch, opts: CollectOptions): Promise<CollectResult> {
  const track = opts.trackWatermark ?? true;
  let watermark = track ? await readWatermark(sql, target.venue.id, target.pair) : null;
  // The trades of the watermark's millisecond come back with every page (since is inclusive). They
  // are told apart by id, not by id order: several trades share a millisecond (one order sweeping
  // the book), ids need not grow with time (VALR's are UUIDs), and a page may end inside the group.
  let markIds = watermark ? await idsStoredAt(sql, target.venue.id, target.pair, watermark.time) : new Set<string>();
  let since = watermark ? watermark.time.getTime() : opts.startAt;
  let fetched = 0;
  let inserted = 0;
  let from: Date | null = null;
  let to: Date | null = null;
  let pages = 0;
  let caughtUp = false;
  let collectedThrough: Date | null = null;
  let late = 0;
  let lateOldest: Date | null = null;
  let ahead = 0;
  let expired = 0;
  let gap: CollectResult['gap'] = null;
  let stalled = 0;
  const now = opts.now ?? Date.now;
  const maxPages = opts.maxPages ?? 50;
  // a venue that walks back from now is told where a bounded (backfill) walk should start instead
  const params = opts.until !== undefined && target.venue.takesUntil ? { until: opts.until } : {};
  while (pages < maxPages) {
    const fetchedAt = now();
    const page = await fetch(() => target.exchange.fetchTrades(target.symbol, since, target.venue.pageSize, params));
    pages++;
    fetched += page.length;
    // from `since` on, and past the watermark: after its millisecond, or in it and not stored yet;
    // so a page normally holds only new trades (and goes in by COPY on a server)
    const mark = watermark;
    const latest = fetchedAt + AHEAD_TOLERANCE_MS;
    const offered = normalise(page, target);
    // since is inclusive, so a venue that still serves the watermark's trade hands it back first
    if (pages === 1 && mark && offered.length > 0 && offered[0]!.time > mark.time) gap = { from: mark.time, to: offered[0]!.time };
    const taken = offered.filter((r) => r.time.getTime() <= latest);
    ahead += offered.length - taken.length;
    const fresh = taken.filter(
      (r) => r.time.getTime() >= since && (!mark || r.time > mark.time || (r.time.getTime() === mark.time.getTime() && !markIds.has(r.tradeId))),
    );
    const pageNewest = fresh.length > 0 ? fresh[fresh.length - 1]!.time.getTime() : since;
    const rows = opts.until === undefined ? fresh : fresh.filter((r) => r.time.getTime() <= opts.until!);
    if (rows.length > 0) {
      const stored = await storeTrades(sql, rows, opts);
      inserted += stored.inserted;
      expired += stored.expired;
      late += stored.late;
      if (stored.lateOldest && (!lateOldest || stored.lateOldest < lateOldest)) lateOldest = stored.lateOldest;
      if (stored.from && (!from || stored.from < from)) from = stored.from;
      if (stored.to && (!to || stored.to > to)) to = stored.to;
      const newest = rows[rows.length - 1]!;
      const newestMs = newest.time.getTime();
      if (!watermark || newest.time > watermark.time) markIds = new Set();
      for (let i = rows.length - 1; i >= 0 && rows[i]!.time.getTime() === newestMs; i--) markIds.add(rows[i]!.tradeId);
      if (!watermark || newest.time > watermark.time || (newest.time.getTime() === watermark.time.getTime() && compareIds(newest.tradeId, watermark.id) > 0)) {
        watermark = { time: newest.time, id: newest.tradeId };
        if (track) await writeWatermark(sql, target.venue.id, target.pair, watermark);
      }
      opts.onPage?.(newest.time.getTime());
    }
    if (page.length < target.venue.pageSize || (opts.until !== undefined && pageNewest >= opts.until)) {
      caughtUp = true;
      collectedThrough = new Date(Math.min(fetchedAt, opts.until ?? Infinity) - PUBLISH_GRACE_MS);
      break;
    }
    // A venue whose full pages bring nothing from `since` on (it ignores `since`) would be asked a
    // millisecond further each time: a backfill's day is 86 million calls. Stop and say so.
    stalled = fresh.length === 0 ? stalled + 1 : 0;
    if (stalled >= STALLED_PAGES) {
      throw new Error(`${target.venue.id} ${target.pair}: ${STALLED_PAGES} full pages in a row held no trade from ${new Date(since).toISOString()} on; the venue's pages do not advance`);
    }
    // A full page: ask again from its newest trade (inclusive; repeats are dropped). A full page
    // within one millisecond would never advance, so step past that millisecond.
    since = pageNewest > since ? pageNewest : since + 1;
  }
  return { fetched, inserted, from, to, pages, caughtUp, watermark, collectedThrough, late, lateOldest, ahead, expired, gap };
}
