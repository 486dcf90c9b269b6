// One venue's session: its ccxt client under its own pacing (bottleneck, the venue's published
// limits), retries, the markets it lists (discovered daily, kept through a missing answer), one
// collection run over every pair it lists, and its health per pair (venue_health, read by
// GET /v1/status and settlement). A venue that keeps failing pauses for a growing time.
import Bottleneck from 'bottleneck';
import { BadSymbol, OperationFailed, type Exchange } from './ccxt.js';
import { isUnreachable, type Sql } from '../lib/db/connect.js';
import type { Logger } from '../lib/log.js';
import type { Trade } from 'ccxt';
import { Coalesced } from '../lib/coalesced.js';
import type { TradeNotices } from '../lib/db/notices.js';
import { AHEAD_TOLERANCE_MS, collect, normalise, PUBLISH_GRACE_MS, storeTrades, type CollectResult, type Stored } from './collect.js';
import { listingsOf, recordListings, type Listing, type PairRow } from './discover.js';
import { recordLateTrades } from './settle.js';
import type { Venue } from './venues/types.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** A market missing from a venue's list (maintenance, a partial answer, a rename) is kept, looked for again this soon ... */
const REDISCOVER_MS = 5 * 60_000;
/** ... and dropped only once missing this long. */
const MISSING_FOR_MS = HOUR_MS;

export interface RunError {
  readonly source: string;
  readonly pair?: string;
  readonly error: string;
}

export interface VenueSessionOptions {
  readonly sql: Sql;
  readonly log: Logger;
  readonly venue: Venue;
  readonly simUrl: string | undefined;
  readonly now: () => number;
  /** Retry pauses in ms; the number of entries is the number of retries. */
  readonly retryDelaysMs: readonly number[];
  readonly requestTimeoutMs: number;
  /** Drop the venue's published pacing (a simulated market without limits). */
  readonly unpaced: boolean;
  /** Without a watermark, start collecting this far back (ms). */
  readonly initialLookbackMs: number;
  readonly copyTrades: boolean;
  /** TRADES_RETENTION_DAYS: trades older than it are not stored (null: all are). */
  readonly retentionDays: number | null;
  /** The public and internal pairs (one load shared by every venue). */
  readonly pairs: () => Promise<PairRow[]>;
  /** A pair's settled_through now: trades stored below it are late. */
  readonly settledThrough: (pair: string) => Date | null;
  readonly stopped: () => boolean;
  /** Told of every pair whose trades were stored. */
  readonly notices?: TradeNotices;
}

/** What one run did: trades stored and what failed (each failed pair, or the market list). */
export interface VenueRun {
  readonly inserted: number;
  readonly errors: readonly RunError[];
  /** trades that arrived after their bucket was settled (stored, counted in late_trades) */
  readonly late: number;
  /** how long it took; 0 when skipped: the venue is pausing after repeated failures */
  readonly seconds: number;
  readonly skipped: boolean;
}

export class VenueSession {
  readonly exchange: Exchange;
  private readonly limiter: Bottleneck;
  listings: Listing[] = [];
  private discoveredAt = 0;
  /** pair -> since when its market has been missing from the venue's list */
  private readonly missingSince = new Map<string, number>();
  private failedCycles = 0;
  private nextAttemptAt = 0;
  /** The run under way, if any: a venue never runs two at once. */
  private running: Promise<VenueRun> | null = null;
  /** Whether this process has finished (or failed) a run of the venue. */
  ranOnce = false;

  constructor(private readonly o: VenueSessionOptions) {
    this.exchange = o.venue.create({ simUrl: o.simUrl, timeoutMs: o.requestTimeoutMs });
    this.limiter = new Bottleneck(o.unpaced ? { maxConcurrent: 4 } : { minTime: o.venue.limits.minTimeMs, maxConcurrent: o.venue.limits.maxConcurrent });
  }

  get id(): string {
    return this.o.venue.id;
  }

  get venue(): Venue {
    return this.o.venue;
  }

  /** The run under way, or a new one; after a run ends, `onDone` hears of it. */
  run(onDone: (run: VenueRun) => void): Promise<VenueRun> {
    this.running ??= this.collect().then(
      (run) => {
        this.running = null;
        this.ranOnce = true;
        onDone(run);
        return run;
      },
      (err: unknown) => {
        this.running = null;
        this.ranOnce = true;
        throw err;
      },
    );
    return this.running;
  }

  /** The run under way, for a stop to wait on. */
  get current(): Promise<unknown> | null {
    return this.running;
  }

  /**
   * Retries network errors, timeouts, 429s and 5xx with backoff: ccxt's OperationFailed and its
   * subclasses (NetworkError, RequestTimeout, RateLimitExceeded, DDoSProtection, ExchangeNotAvailable).
   */
  async withRetry<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.o.stopped()) throw new Error('pipeline stopped');
      try {
        return await this.limiter.schedule(work);
      } catch (err) {
        if (!(err instanceof OperationFailed) || attempt >= this.o.retryDelaysMs.length || this.o.stopped()) throw err;
        await new Promise((r) => setTimeout(r, this.o.retryDelaysMs[attempt]));
      }
    }
  }

  /** Loads markets and records listings; daily, or when the venue has none yet. */
  async discover(): Promise<void> {
    const { sql, venue, log } = this.o;
    const pairs = await this.o.pairs();
    try {
      await this.withRetry(() => this.exchange.loadMarkets(true));
      const found = listingsOf(venue.id, this.exchange, pairs);
      const now = this.o.now();
      // what was listed before (after a restart: as recorded) and is missing now is kept a while
      const before = this.listings.length > 0 ? this.listings : await sql<Listing[]>`SELECT pair, symbol FROM venue_markets WHERE exchange = ${venue.id}`;
      const kept = before.filter((l) => {
        if (found.some((f) => f.pair === l.pair)) return false;
        const since = this.missingSince.get(l.pair) ?? now;
        this.missingSince.set(l.pair, since);
        return now - since < MISSING_FOR_MS;
      });
      for (const pair of this.missingSince.keys()) if (!kept.some((l) => l.pair === pair)) this.missingSince.delete(pair);
      this.listings = [...found, ...kept];
      this.discoveredAt = kept.length > 0 ? now - DAY_MS + REDISCOVER_MS : now;
      await recordListings(sql, venue.id, this.listings);
      log.info({ venue: venue.id, pairs: found.map((l) => l.pair) }, 'venue markets discovered');
      if (kept.length > 0) {
        log.warn({ venue: venue.id, pairs: kept.map((l) => l.pair) }, "markets missing from the venue's list: kept, and looked for again in 5 minutes (dropped after an hour missing)");
      }
    } catch (err) {
      // keep serving what was discovered before (also across restarts, from venue_markets)
      if (this.listings.length === 0) this.listings = await sql<Listing[]>`SELECT pair, symbol FROM venue_markets WHERE exchange = ${venue.id}`;
      throw err;
    }
  }

  private async recordHealth(pair: string, ok: boolean, result: CollectResult | null, error?: string) {
    const collected = result?.collectedThrough ?? null;
    await this.o.sql`
      INSERT INTO venue_health AS h (exchange, pair, last_attempt_at, last_success_at, last_trade_at, consecutive_failures, last_error, collected_through)
      VALUES (${this.id}, ${pair}, now(), ${ok ? new Date() : null}, ${result?.to ?? null}, ${ok ? 0 : 1}, ${error ?? null},
              -- never ahead of the database's clock: trades still to come would count as collected
              CASE WHEN ${collected}::timestamptz IS NULL THEN NULL ELSE LEAST(${collected}::timestamptz, now() - make_interval(secs => ${PUBLISH_GRACE_MS / 1000})) END)
      ON CONFLICT (exchange, pair) DO UPDATE SET
        last_attempt_at = now(),
        last_success_at = CASE WHEN ${ok} THEN now() ELSE h.last_success_at END,
        last_trade_at = GREATEST(h.last_trade_at, excluded.last_trade_at),
        consecutive_failures = CASE WHEN ${ok} THEN 0 ELSE h.consecutive_failures + 1 END,
        last_error = CASE WHEN ${ok} THEN NULL ELSE excluded.last_error END,
        collected_through = GREATEST(h.collected_through, excluded.collected_through)`;
  }

  /**
   * Collects one pair by REST from its watermark; its health recorded, its warnings logged. A
   * failure is returned, not thrown.
   */
  private async collectListing(listing: Listing): Promise<CollectResult | { error: RunError; database: boolean }> {
    const { sql, log, now } = this.o;
    try {
      const result = await collect(sql, { venue: this.o.venue, exchange: this.exchange, symbol: listing.symbol, pair: listing.pair }, (w) => this.withRetry(w), {
        startAt: now() - this.o.initialLookbackMs,
        // read at each insert, not once per run: another venue's publish may settle meanwhile
        settledThrough: () => this.o.settledThrough(listing.pair),
        now,
        copy: this.o.copyTrades,
        keepFrom: () => this.keepFrom(),
        notices: this.o.notices,
      });
      await this.recordHealth(listing.pair, true, result);
      if (result.gap) {
        // nothing can fetch them any more; not an error of this run (the venue delivered)
        log.warn({ venue: this.id, pair: listing.pair, from: result.gap.from, to: result.gap.to }, 'trades lost: the venue no longer serves them (it keeps only its latest trades)');
      }
      if (result.ahead > 0) {
        log.warn(
          { venue: this.id, pair: listing.pair, trades: result.ahead, toleranceMs: AHEAD_TOLERANCE_MS },
          'trades stamped ahead of our clock held back until it reaches them (a venue clock, or ours, is wrong)',
        );
      }
      await this.reportStored(listing.pair, result);
      return result;
    } catch (err) {
      // a market the venue no longer knows by that name: look at its list again soon
      if (err instanceof BadSymbol) this.discoveredAt = Math.min(this.discoveredAt, now() - DAY_MS + REDISCOVER_MS);
      const message = `${(err as Error).constructor.name}: ${(err as Error).message}`.slice(0, 500);
      await this.recordHealth(listing.pair, false, null, message).catch(() => {});
      return { error: { source: this.id, pair: listing.pair, error: message }, database: isUnreachable(err) };
    }
  }

  private keepFrom(): Date | null {
    return this.o.retentionDays === null ? null : new Date(this.o.now() - this.o.retentionDays * DAY_MS);
  }

  /** Logs what a write held back, and records the late trades it stored. */
  private async reportStored(pair: string, stored: Stored): Promise<void> {
    const { sql, log } = this.o;
    if (stored.expired > 0) {
      log.warn({ venue: this.id, pair, trades: stored.expired, retentionDays: this.o.retentionDays }, 'trades older than raw-trade retention keeps were not stored (their candles stand as they are)');
    }
    if (stored.late > 0) {
      await recordLateTrades(sql, this.id, pair, stored.late, stored.lateOldest!);
      log.warn({ venue: this.id, pair, trades: stored.late, oldest: stored.lateOldest }, 'trades arrived after their bucket was settled: candles corrected, certificates unchanged');
    }
  }

  /**
   * Trades a stream delivered, in ccxt's unified shape, stored by the same rules as a REST page:
   * held back when stamped too far ahead (the REST reconciler takes them once the clock reaches
   * them), kept once, late ones counted. The watermark is the REST walk's alone: a stream that
   * missed trades never moves it past them.
   */
  async storeStreamed(pair: string, trades: readonly Trade[]): Promise<Stored> {
    const listing = this.listings.find((l) => l.pair === pair);
    if (!listing) return { inserted: 0, from: null, to: null, late: 0, lateOldest: null, expired: 0 };
    const latest = this.o.now() + AHEAD_TOLERANCE_MS;
    const rows = normalise(trades, { venue: this.o.venue, exchange: this.exchange, symbol: listing.symbol, pair }).filter((r) => r.time.getTime() <= latest);
    const stored = await storeTrades(this.o.sql, rows, {
      copy: this.o.copyTrades,
      settledThrough: () => this.o.settledThrough(pair),
      keepFrom: () => this.keepFrom(),
      notices: this.o.notices,
    });
    await this.reportStored(pair, stored);
    return stored;
  }

  private readonly pairRuns = new Map<string, Coalesced<unknown>>();

  /**
   * Collects one pair by REST now (a stream said it traded, and carries no usable trade of its
   * own: Luno's). Calls meanwhile fold into one more run after it.
   */
  wake(pair: string): Promise<unknown> {
    let run = this.pairRuns.get(pair);
    if (!run) {
      run = new Coalesced(async () => {
        const listing = this.listings.find((l) => l.pair === pair);
        if (listing && !this.o.stopped()) await this.collectListing(listing);
      }, () => !this.o.stopped());
      this.pairRuns.set(pair, run);
    }
    return run.run();
  }

  /** Collects every pair the venue lists, unless it is pausing after repeated failures. */
  private async collect(): Promise<VenueRun> {
    const { log, now } = this.o;
    const started = now();
    const timer = performance.now(); // elapsed time, whatever the pipeline's clock says
    if (now() < this.nextAttemptAt) return { inserted: 0, errors: [], late: 0, seconds: 0, skipped: true };
    const errors: RunError[] = [];
    let discoveryFailed = false;
    // the database, not the venue, failed (down, failing over): that says nothing of the venue
    let databaseFailed = false;
    let inserted = 0;
    let late = 0;
    try {
      if (this.listings.length === 0 || now() - this.discoveredAt > DAY_MS) await this.discover();
    } catch (err) {
      discoveryFailed = true;
      databaseFailed ||= isUnreachable(err);
      errors.push({ source: this.id, error: `loadMarkets: ${(err as Error).message}`.slice(0, 500) });
    }
    for (const listing of this.listings) {
      if (this.o.stopped()) break;
      const result = await this.collectListing(listing);
      if ('error' in result) {
        errors.push(result.error);
        databaseFailed ||= result.database;
      } else {
        inserted += result.inserted;
        late += result.late;
      }
    }
    const failures = errors.filter((e) => e.pair !== undefined).length; // pairs that failed (not the market list)
    const allFailed = this.listings.length === 0 ? discoveryFailed : failures === this.listings.length;
    // after 3 runs in a row that the venue failed: pause 1, 2, 4 ... up to 10 minutes before trying
    // again. A run that failed for the database leaves the count as it was: a venue paused for the
    // database's outage would not be read when it is back, and a venue that keeps only its latest
    // trades would have lost those of the pause for good.
    if (!allFailed || !databaseFailed) {
      this.failedCycles = allFailed ? this.failedCycles + 1 : 0;
      this.nextAttemptAt = this.failedCycles >= 3 ? now() + Math.min(600_000, 60_000 * 2 ** (this.failedCycles - 3)) : 0;
    }
    // what failed and why, in the line an operator reads (venue_health and ingest_cycles keep it too)
    log[errors.length ? 'warn' : 'info'](
      { venue: this.id, pairs: this.listings.length, inserted, failures, ms: now() - started, failedCycles: this.failedCycles, ...(errors.length ? { errors } : {}) },
      'venue cycle',
    );
    return { inserted, errors, late, seconds: (performance.now() - timer) / 1000, skipped: false };
  }

  async stop(): Promise<void> {
    await this.limiter.stop({ dropWaitingJobs: true }).catch(() => {});
  }
}
