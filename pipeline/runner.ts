// The collector. Every venue runs its own loop (CYCLE_SECONDS), under its own bottleneck limiter:
// it collects every pair it lists, and a venue that fails, lags or floods delays no other. Each
// time a venue finishes (and at least once a cycle) the pipeline publishes: it refreshes the
// aggregates from their durable frontier (lib/db/refresh.ts), settles what can be settled
// (settle.ts: certificates through `certify`), runs the storage jobs where there is no job
// scheduler, records the cycle, and calls onCycle (the API's live snapshot). FX rates every
// FX_CYCLE_SECONDS. A venue that keeps failing is marked failing (venue_health, read by
// GET /v1/status) and retried after a growing pause.
import Bottleneck from 'bottleneck';
import { BadSymbol, OperationFailed, type Exchange } from './ccxt.js';
import type { Config } from '../lib/config.js';
import { withoutStatementTimeout, type Sql } from '../lib/db/connect.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import type { Logger } from '../lib/log.js';
import { AHEAD_TOLERANCE_MS, collect, PUBLISH_GRACE_MS, type CollectResult } from './collect.js';
import { listingsOf, loadPairs, recordListings, type Listing, type PairRow } from './discover.js';
import { fxSources, type FxSource } from './fx/index.js';
import { configureRetention, runStorageJobs } from './maintenance.js';
import { recordLateTrades, recordSettlement, settledPoints, settlementAt, type Certify } from './settle.js';
import { insertFxRates } from './store.js';
import type { Venue } from './venues/types.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/**
 * A market missing from a venue's list (maintenance, a partial answer, a rename) is kept, and
 * looked for again this soon; dropped only once missing this long. Taken at its word, one answer
 * without it stopped the pair's collection for a day, silently.
 */
const REDISCOVER_MS = 5 * 60_000;
const MISSING_FOR_MS = HOUR_MS;

export interface PipelineOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly sql: Sql;
  readonly venues: readonly Venue[];
  readonly fx?: readonly FxSource[];
  /** Called after every publish and FX cycle (the API's live snapshot refresh). */
  readonly onCycle?: () => Promise<void>;
  /** Certifies newly settled buckets, before their settlement is recorded. */
  readonly certify?: Certify;
  /**
   * Run the trades hypertable's compression and retention jobs in this process (about hourly):
   * for a database without a job scheduler (the embedded one). Default false.
   */
  readonly runStorageJobs?: boolean;
  /** Write trades with COPY (a database server; the embedded database cannot take it). */
  readonly copyTrades?: boolean;
  /** Without a watermark, start collecting this far back (ms). Default 1 hour. */
  readonly initialLookbackMs?: number;
  /** Retry pauses in ms; the number of entries is the number of retries. */
  readonly retryDelaysMs?: readonly number[];
  readonly requestTimeoutMs?: number;
  readonly now?: () => number;
  /** Drop the venues' published pacing: only for a simulated market that has no limits (tests). */
  readonly unpaced?: boolean;
}

interface VenueState {
  readonly venue: Venue;
  readonly exchange: Exchange;
  readonly limiter: Bottleneck;
  listings: Listing[];
  discoveredAt: number;
  /** pair -> since when its market has been missing from the venue's list */
  missingSince: Map<string, number>;
  failedCycles: number;
  nextAttemptAt: number;
  /** The collection under way, if any: a venue never runs two at once. */
  running: Promise<void> | null;
  /** Whether this process has finished (or failed) a collection of the venue. */
  ranOnce: boolean;
}

export interface CycleReport {
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly rowsBySource: Record<string, number>;
  readonly errors: { source: string; pair?: string; error: string }[];
}

type Unpublished = { startedAt: Date; rowsBySource: Record<string, number>; errors: CycleReport['errors'] };

export class Pipeline {
  private readonly states: VenueState[];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private pairsLoaded: Promise<PairRow[]> | null = null;
  private readonly inflight = new Set<Promise<unknown>>();
  private stopped = false;
  private started = false;
  private readonly now: () => number;
  private readonly retryDelays: readonly number[];
  /** What venues delivered since the last publish: the next cycle record. */
  private unpublished: Unpublished;
  private publishing: Promise<CycleReport> | null = null;
  private publishAgain = false;
  /** Each pair's settled_through, for counting late trades (loaded on first use, then kept by settle). */
  private settled: Map<string, Date> | null = null;
  private prunedAt = 0;
  private storageJobsAt = 0;

  constructor(private readonly o: PipelineOptions) {
    this.now = o.now ?? Date.now;
    this.retryDelays = o.retryDelaysMs ?? [500, 2_000, 5_000];
    this.unpublished = { startedAt: new Date(this.now()), rowsBySource: {}, errors: [] };
    this.states = o.venues.map((venue) => ({
      venue,
      exchange: venue.create({ simUrl: o.config.simUrl, timeoutMs: o.requestTimeoutMs ?? 10_000 }),
      limiter: new Bottleneck(o.unpaced ? { maxConcurrent: 4 } : { minTime: venue.limits.minTimeMs, maxConcurrent: venue.limits.maxConcurrent }),
      listings: [],
      discoveredAt: 0,
      missingSince: new Map(),
      failedCycles: 0,
      nextAttemptAt: 0,
      running: null,
      ranOnce: false,
    }));
  }

  private get market() {
    return this.o.config.market;
  }

  /**
   * Retries network errors, timeouts, 429s and 5xx with backoff: ccxt's OperationFailed and its
   * subclasses (NetworkError, RequestTimeout, RateLimitExceeded, DDoSProtection, ExchangeNotAvailable).
   */
  private async withRetry<T>(state: VenueState, work: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) throw new Error('pipeline stopped');
      try {
        return await state.limiter.schedule(work);
      } catch (err) {
        if (!(err instanceof OperationFailed) || attempt >= this.retryDelays.length || this.stopped) throw err;
        await new Promise((r) => setTimeout(r, this.retryDelays[attempt]));
      }
    }
  }

  /** Loads markets and records listings; daily, or when a venue has none yet. */
  private async discover(state: VenueState): Promise<void> {
    // one load for all venues, even when they discover at the same moment
    this.pairsLoaded ??= loadPairs(this.o.sql);
    const pairs = await this.pairsLoaded;
    try {
      await this.withRetry(state, () => state.exchange.loadMarkets(true));
      const found = listingsOf(state.venue.id, state.exchange, pairs);
      const now = this.now();
      // what was listed before (after a restart: as recorded) and is missing now is kept a while
      const before = state.listings.length > 0 ? state.listings : await this.o.sql<Listing[]>`SELECT pair, symbol FROM venue_markets WHERE exchange = ${state.venue.id}`;
      const kept = before.filter((l) => {
        if (found.some((f) => f.pair === l.pair)) return false;
        const since = state.missingSince.get(l.pair) ?? now;
        state.missingSince.set(l.pair, since);
        return now - since < MISSING_FOR_MS;
      });
      for (const pair of state.missingSince.keys()) if (!kept.some((l) => l.pair === pair)) state.missingSince.delete(pair);
      state.listings = [...found, ...kept];
      state.discoveredAt = kept.length > 0 ? now - DAY_MS + REDISCOVER_MS : now;
      await recordListings(this.o.sql, state.venue.id, state.listings);
      this.o.log.info({ venue: state.venue.id, pairs: found.map((l) => l.pair) }, 'venue markets discovered');
      if (kept.length > 0) {
        this.o.log.warn(
          { venue: state.venue.id, pairs: kept.map((l) => l.pair) },
          'markets missing from the venue\'s list: kept, and looked for again in 5 minutes (dropped after an hour missing)',
        );
      }
    } catch (err) {
      // keep serving what was discovered before (also across restarts, from venue_markets)
      if (state.listings.length === 0) {
        state.listings = await this.o.sql<Listing[]>`SELECT pair, symbol FROM venue_markets WHERE exchange = ${state.venue.id}`;
      }
      throw err;
    }
  }

  private async recordHealth(venue: string, pair: string, ok: boolean, result: CollectResult | null, error?: string) {
    const collected = result?.collectedThrough ?? null;
    await this.o.sql`
      INSERT INTO venue_health AS h (exchange, pair, last_attempt_at, last_success_at, last_trade_at, consecutive_failures, last_error, collected_through)
      VALUES (${venue}, ${pair}, now(), ${ok ? new Date() : null}, ${result?.to ?? null}, ${ok ? 0 : 1}, ${error ?? null},
              -- never ahead of the database's clock: a host clock running fast claimed trades still to come
              CASE WHEN ${collected}::timestamptz IS NULL THEN NULL ELSE LEAST(${collected}::timestamptz, now() - make_interval(secs => ${PUBLISH_GRACE_MS / 1000})) END)
      ON CONFLICT (exchange, pair) DO UPDATE SET
        last_attempt_at = now(),
        last_success_at = CASE WHEN ${ok} THEN now() ELSE h.last_success_at END,
        last_trade_at = GREATEST(h.last_trade_at, excluded.last_trade_at),
        consecutive_failures = CASE WHEN ${ok} THEN 0 ELSE h.consecutive_failures + 1 END,
        last_error = CASE WHEN ${ok} THEN NULL ELSE excluded.last_error END,
        collected_through = GREATEST(h.collected_through, excluded.collected_through)`;
  }

  /** Collects one venue, unless it is already collecting (then waits for that run) or pausing. */
  private collectVenue(state: VenueState): Promise<void> {
    state.running ??= this.runVenue(state).finally(() => {
      state.running = null;
      state.ranOnce = true;
      if (this.started && !this.stopped) void this.publish().catch(() => {}); // errors are recorded in the cycle
    });
    return state.running;
  }

  private async runVenue(state: VenueState): Promise<void> {
    const started = this.now();
    const id = state.venue.id;
    if (this.now() < state.nextAttemptAt) return;
    // this run's errors: for the cycle's record (published with others' runs) and this run's log line
    const errors: CycleReport['errors'] = [];
    const failed = (error: CycleReport['errors'][number]) => {
      errors.push(error);
      this.unpublished.errors.push(error);
    };
    let discoveryFailed = false;
    let inserted = 0;
    try {
      if (state.listings.length === 0 || this.now() - state.discoveredAt > DAY_MS) await this.discover(state);
    } catch (err) {
      discoveryFailed = true;
      failed({ source: id, error: `loadMarkets: ${(err as Error).message}`.slice(0, 500) });
    }
    if (!this.settled) {
      const recorded = await settledPoints(this.o.sql).catch(() => null);
      this.settled ??= recorded; // a settle that finished meanwhile is newer
    }
    for (const listing of state.listings) {
      if (this.stopped) break;
      try {
        const result = await collect(this.o.sql, { venue: state.venue, exchange: state.exchange, symbol: listing.symbol, pair: listing.pair }, (w) => this.withRetry(state, w), {
          startAt: this.now() - (this.o.initialLookbackMs ?? HOUR_MS),
          // read at each insert, not once per run: another venue's publish may settle meanwhile
          settledThrough: () => this.settled?.get(listing.pair) ?? null,
          now: this.now,
          copy: this.o.copyTrades,
        });
        inserted += result.inserted;
        await this.recordHealth(id, listing.pair, true, result);
        if (result.gap) {
          // nothing can fetch them any more; not an error of this cycle (the venue delivered)
          this.o.log.warn({ venue: id, pair: listing.pair, from: result.gap.from, to: result.gap.to }, 'trades lost: the venue no longer serves them (it keeps only its latest trades)');
        }
        if (result.ahead > 0) {
          this.o.log.warn(
            { venue: id, pair: listing.pair, trades: result.ahead, toleranceMs: AHEAD_TOLERANCE_MS },
            'trades stamped ahead of our clock held back until it reaches them (a venue clock, or ours, is wrong)',
          );
        }
        if (result.late > 0) {
          await recordLateTrades(this.o.sql, id, listing.pair, result.late, result.lateOldest!);
          this.o.log.warn(
            { venue: id, pair: listing.pair, trades: result.late, oldest: result.lateOldest },
            'trades arrived after their bucket was settled: candles corrected, certificates unchanged',
          );
        }
      } catch (err) {
        // a market the venue no longer knows by that name: look at its list again soon
        if (err instanceof BadSymbol) state.discoveredAt = Math.min(state.discoveredAt, this.now() - DAY_MS + REDISCOVER_MS);
        const message = `${(err as Error).constructor.name}: ${(err as Error).message}`.slice(0, 500);
        failed({ source: id, pair: listing.pair, error: message });
        await this.recordHealth(id, listing.pair, false, null, message).catch(() => {});
      }
    }
    const rows = this.unpublished.rowsBySource;
    rows[id] = (rows[id] ?? 0) + inserted;
    // all failed: discovery failed with nothing listed, or every listed pair failed
    const failures = errors.filter((e) => e.pair !== undefined).length; // pairs that failed (not the market list)
    const allFailed = state.listings.length === 0 ? discoveryFailed : failures === state.listings.length;
    state.failedCycles = allFailed ? state.failedCycles + 1 : 0;
    // after 3 failed cycles in a row: pause 1, 2, 4 ... up to 10 minutes before trying again
    state.nextAttemptAt = state.failedCycles >= 3 ? this.now() + Math.min(600_000, 60_000 * 2 ** (state.failedCycles - 3)) : 0;
    // what failed and why, in the line an operator reads (venue_health and ingest_cycles keep it too)
    this.o.log[errors.length ? 'warn' : 'info'](
      { venue: id, pairs: state.listings.length, inserted, failures, ms: this.now() - started, failedCycles: state.failedCycles, ...(errors.length ? { errors } : {}) },
      'venue cycle',
    );
  }

  private async record(kind: 'trades' | 'fx' | 'backfill', report: CycleReport): Promise<void> {
    await this.o.sql`
      INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source, errors)
      VALUES (${kind}, ${this.market}, ${report.startedAt}, ${report.finishedAt}, ${this.o.sql.json(report.rowsBySource)}, ${this.o.sql.json(report.errors)})`;
  }

  /**
   * Publishes what the venues stored since the last time: refresh, settle (and certify), storage
   * jobs, the cycle record, onCycle. Calls while one runs are folded into one more run after it.
   */
  publish(): Promise<CycleReport> {
    if (this.publishing) {
      this.publishAgain = true;
      return this.publishing;
    }
    this.publishing = (async () => {
      try {
        let report: CycleReport;
        do {
          this.publishAgain = false;
          report = await this.publishOnce();
        } while (this.publishAgain && !this.stopped);
        return report;
      } finally {
        this.publishing = null;
      }
    })();
    return this.publishing;
  }

  private async publishOnce(): Promise<CycleReport> {
    const { startedAt, rowsBySource, errors } = this.unpublished;
    this.unpublished = { startedAt: new Date(this.now()), rowsBySource: {}, errors: [] };
    const now = new Date(this.now());
    /** Runs one step; a failure is reported in the cycle record and leaves undefined. */
    const step = async <T>(source: string, work: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await work();
      } catch (err) {
        errors.push({ source, error: (err as Error).message.slice(0, 500) });
        this.o.log.error({ err, step: source }, 'publish step failed; the next cycle retries it');
        return undefined;
      }
    };
    // What may settle is read before the refresh. A venue records how far it has collected only
    // once those trades are stored, so every trade that lets a bucket settle is in the refreshed
    // candles its certificate is made from. Read after the refresh, a venue that stored a closing
    // bucket's trades in between let it settle from candles without them: a certificate off by
    // those trades for good, and none counted late. Not before every venue has had its first
    // collection in this process: after downtime longer than the lag, every venue's
    // collected_through is old and the lag rule would settle (and certify for good) the buckets of
    // the outage from whatever was stored before the stop, while the venues were still fetching them.
    const settledBefore = this.settled;
    const settlement = this.states.every((s) => s.ranOnce)
      ? await step('settle', () => settlementAt(this.o.sql, now, this.o.config.settleAfterSeconds))
      : undefined;
    if (settlement) this.settled = settlement.settledThrough; // trades stored from here on below it are late
    // settlement reads the refreshed candles, so a failed refresh skips it (the frontier stays)
    const refreshed = await step('refresh', async () => {
      await withoutStatementTimeout(this.o.sql, (conn) => refreshAggregates(conn, { now }));
      return true;
    });
    // each new hour's FX rate in force, for the synthetic prices of its candles
    await step('fx', () => withoutStatementTimeout(this.o.sql, (conn) => conn`SELECT fx_in_force_refresh(NULL, ${now})`));
    if (settlement) {
      const recorded = refreshed && (await step('settle', async () => {
        await recordSettlement(this.o.sql, settlement, this.o.certify);
        return true;
      }));
      if (!recorded) this.settled = settledBefore; // the next publish settles it again
    }
    if (this.now() - this.storageJobsAt > HOUR_MS) {
      this.storageJobsAt = this.now();
      await step('storage', async () => {
        await configureRetention(this.o.sql, this.o.config.tradesRetentionDays);
        if (this.o.runStorageJobs) this.o.log.info({ jobs: await withoutStatementTimeout(this.o.sql, runStorageJobs) }, 'storage jobs ran');
      });
    }
    const done = { startedAt, finishedAt: new Date(this.now()), rowsBySource, errors };
    await this.record('trades', done);
    if (this.now() - this.prunedAt > DAY_MS) {
      // health and status need only the recent cycles
      await this.o.sql`DELETE FROM ingest_cycles WHERE finished_at < now() - INTERVAL '30 days'`;
      this.prunedAt = this.now();
    }
    await this.o.onCycle?.();
    return done;
  }

  /** One trade cycle by hand (tests, one-shot runs): every venue collects, then one publish. */
  async runTradeCycle(): Promise<CycleReport> {
    await Promise.all(this.states.map((s) => this.collectVenue(s)));
    return this.publish();
  }

  /** One FX cycle: every source, each stored with its own update time. */
  async runFxCycle(): Promise<CycleReport> {
    const report: CycleReport = { startedAt: new Date(this.now()), finishedAt: new Date(), rowsBySource: {}, errors: [] };
    for (const source of this.o.fx ?? fxSources) {
      try {
        const obs = await source.fetch({ simUrl: this.o.config.simUrl, timeoutMs: this.o.requestTimeoutMs ?? 10_000 });
        const stored = await insertFxRates(
          this.o.sql,
          obs.rates.map((r) => ({ time: obs.observedAt, currency: r.currency, unitsPerUsd: r.unitsPerUsd, source: obs.source, sourceUpdatedAt: r.sourceUpdatedAt })),
        );
        report.rowsBySource[source.id] = stored;
        if (obs.missing.length) report.errors.push({ source: source.id, error: `no rate for ${obs.missing.join(', ')}` });
      } catch (err) {
        report.errors.push({ source: source.id, error: (err as Error).message.slice(0, 500) });
      }
    }
    const done = { ...report, finishedAt: new Date(this.now()) };
    this.o.log[done.errors.length ? 'warn' : 'info']({ rows: done.rowsBySource, errors: done.errors }, 'fx cycle');
    await this.record('fx', done);
    await this.o.onCycle?.();
    return done;
  }

  /**
   * Runs until stop(): a loop per venue, a publish at least once a cycle (also when every venue is
   * failing, so settlement by lag and the storage jobs go on), and the FX loop. Each loop waits for
   * its own previous run (no overlap) and for nothing else.
   */
  start(): void {
    if (this.stopped || this.started) return;
    this.started = true;
    const loop = (every: number, run: () => Promise<unknown>, name: string) => {
      const tick = async () => {
        if (this.stopped) return;
        const started = this.now();
        const running = run().catch((err) => this.o.log.error({ err, loop: name }, 'cycle failed'));
        this.inflight.add(running);
        await running;
        this.inflight.delete(running);
        if (!this.stopped) this.timers.set(name, setTimeout(() => void tick(), Math.max(0, every - (this.now() - started))));
      };
      void tick();
    };
    const cycleMs = this.o.config.cycleSeconds * 1000;
    loop(this.o.config.fxCycleSeconds * 1000, () => this.runFxCycle(), 'fx');
    for (const s of this.states) loop(cycleMs, () => this.collectVenue(s), `venue:${s.venue.id}`);
    loop(cycleMs, () => this.publish(), 'publish');
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    await Promise.allSettled([...this.inflight, ...this.states.map((s) => s.running), this.publishing]);
    await Promise.all(this.states.map((s) => s.limiter.stop({ dropWaitingJobs: true }).catch(() => {})));
  }

  /** Each venue with what it lists (discovered now if not yet) and a paced, retrying fetch. */
  /** Whether trades are written with COPY (backfill writes as the pipeline does). */
  get copyTrades(): boolean {
    return this.o.copyTrades ?? false;
  }

  async venueTargets(): Promise<Array<{ venue: Venue; exchange: Exchange; listings: readonly Listing[]; fetch: <T>(work: () => Promise<T>) => Promise<T>; error?: string }>> {
    return Promise.all(
      this.states.map(async (s) => {
        let error: string | undefined;
        if (s.listings.length === 0) await this.discover(s).catch((err) => (error = (err as Error).message));
        return { venue: s.venue, exchange: s.exchange, listings: s.listings, fetch: <T>(w: () => Promise<T>) => this.withRetry(s, w), error };
      }),
    );
  }

  /** Records a backfill run like a cycle, so health and status see it. */
  async recordBackfill(report: CycleReport): Promise<void> {
    await this.record('backfill', report);
  }
}
