// The collector's loops: every venue runs its own (CYCLE_SECONDS) through its session
// (venue-session.ts: pacing, retries, listings, health), so a venue that fails, lags or floods
// delays no other; each time one finishes (and at least once a cycle) the pipeline publishes
// (publish.ts: settle, refresh, certify, record the cycle); FX rates every FX_CYCLE_SECONDS.
import os from 'node:os';
import type { Config } from '../lib/config.js';
import { Paced, Coalesced } from '../lib/coalesced.js';
import type { Sql } from '../lib/db/connect.js';
import type { TradeNotices } from '../lib/db/notices.js';
import { within } from '../lib/within.js';
import type { Logger } from '../lib/log.js';
import type { Exchange } from './ccxt.js';
import { loadPairs, type Listing, type PairRow } from './discover.js';
import { fxSources, type FxSource } from './fx/index.js';
import type { PublishLease } from './lease.js';
import type { PipelineMetrics } from '../lib/metrics.js';
import { Publisher, type CycleReport } from './publish.js';
import type { OnRestated } from './restate.js';
import type { Certifier } from './settle.js';
import { insertFxRates } from './store.js';
import { VENUE_STREAMS, VenueStreamRunner, type StreamReport, type StreamTimings } from './streams/index.js';
import { recordStreams, REPORT_EVERY_MS } from './streams/state.js';
import { VenueSession } from './venue-session.js';
import type { Venue } from './venues/types.js';

export type { CycleReport } from './publish.js';

const HOUR_MS = 3_600_000;
/** The longest a stop waits to record its streams stopped (a database gone must not hold the stop). */
const STOP_REPORT_MS = 2_000;
/** This process as its rows name it (several pipelines may run, on several hosts). */
const PROCESS = `${os.hostname()}:${process.pid}`;

export interface PipelineOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly sql: Sql;
  readonly venues: readonly Venue[];
  readonly fx?: readonly FxSource[];
  /** Called after every publish and FX cycle (the API's live snapshot refresh). */
  readonly onCycle?: () => Promise<void>;
  /** Certifies newly settled buckets before their settlement is recorded, and publishes the fixings due. */
  readonly certifier?: Certifier;
  /** Recorded with each restatement, in its transaction (the transparency log). */
  readonly onRestated?: OnRestated;
  /** After everything of a publish is recorded (the transparency log's signed head). */
  readonly onPublished?: (now: Date) => Promise<unknown>;
  /** Run the trades hypertable's compression and retention jobs in this process (a database without a job scheduler). */
  readonly runStorageJobs?: boolean;
  /** Write large batches of trades with COPY (where the database takes it: Database.takesCopy). */
  readonly copyTrades?: boolean;
  /** Without a watermark, start collecting this far back (ms). Default 1 hour. */
  readonly initialLookbackMs?: number;
  /** Retry pauses in ms; the number of entries is the number of retries. */
  readonly retryDelaysMs?: readonly number[];
  readonly requestTimeoutMs?: number;
  readonly now?: () => number;
  /** Drop the venues' published pacing: only for a simulated market that has no limits (tests). */
  readonly unpaced?: boolean;
  /** Hears of every venue run, publish, FX cycle and settlement (the service's metrics). */
  readonly metrics?: PipelineMetrics;
  /** With several pipeline processes: this one publishes only while it holds the lease (pipeline/lease.ts). */
  readonly lease?: PublishLease;
  /** Told of every pair whose trades were stored (the live rate's listeners, in every process). */
  readonly notices?: TradeNotices;
  /** Shorter keep-alive and silence limits for the venue streams (tests). */
  readonly streamTimings?: StreamTimings;
}

export class Pipeline {
  private readonly sessions: VenueSession[];
  private readonly publisher: Publisher;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private pairsLoaded: Promise<PairRow[]> | null = null;
  private readonly inflight = new Set<Promise<unknown>>();
  private stopped = false;
  private started = false;
  /** Venues asked at least once by this process: their first run restarts the silence count (venue_health.watched_since). */
  private readonly watching = new Set<string>();
  private readonly now: () => number;
  /** The venue streams running beside the REST loops (STREAMS=1), by venue. */
  readonly streams = new Map<string, VenueStreamRunner>();
  private readonly reportJob = new Coalesced(() => recordStreams(this.o.sql, PROCESS, [...this.streams.values()].map((s) => s.report())));
  private readonly reportSoon = new Paced(this.reportJob, 1_000, (err) => this.o.log.warn({ err }, 'venue stream state not recorded'));

  constructor(private readonly o: PipelineOptions) {
    this.now = o.now ?? Date.now;
    const stopped = () => this.stopped;
    this.publisher = new Publisher({
      sql: o.sql,
      log: o.log,
      market: o.config.market,
      settleAfterSeconds: o.config.settleAfterSeconds,
      tradesRetentionDays: o.config.tradesRetentionDays,
      certifier: o.certifier,
      onRestated: o.onRestated,
      onPublished: o.onPublished,
      onCycle: o.onCycle,
      metrics: o.metrics,
      runStorageJobs: o.runStorageJobs ?? false,
      now: this.now,
      venuesRanOnce: () => this.sessions.every((s) => s.ranOnce),
      stopped,
      lease: o.lease,
    });
    this.sessions = o.venues.map(
      (venue) =>
        new VenueSession({
          sql: o.sql,
          log: o.log,
          venue,
          simUrl: o.config.simUrl,
          now: this.now,
          retryDelaysMs: o.retryDelaysMs ?? [500, 2_000, 5_000],
          requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
          unpaced: o.unpaced ?? false,
          initialLookbackMs: o.initialLookbackMs ?? HOUR_MS,
          copyTrades: o.copyTrades ?? false,
          retentionDays: o.config.tradesRetentionDays,
          // one load for all venues, even when they discover at the same moment
          pairs: () => (this.pairsLoaded ??= loadPairs(o.sql)),
          settledThrough: (pair) => this.publisher.settledThrough(pair),
          stopped,
          notices: o.notices,
        }),
    );
  }

  /** Collects one venue (or joins its run under way), then publishes once it is started. */
  private async collectVenue(session: VenueSession): Promise<void> {
    await this.publisher.loadSettled();
    if (!this.watching.has(session.id)) {
      // silence is counted from here: the time this process was not running is not the venue's
      await this.o.sql`UPDATE venue_health SET watched_since = now() WHERE exchange = ${session.id}`;
      this.watching.add(session.id);
    }
    await session
      .run((run) => {
        this.publisher.delivered(session.id, run.inserted, run.errors);
        if (!run.skipped) this.o.metrics?.venueRun(session.id, run);
      })
      .finally(() => {
        // the stream follows the markets the run found (the first run discovers them)
        this.streams.get(session.id)?.sync();
        if (this.started && !this.stopped) void this.publisher.publish().catch(() => {}); // errors are in the cycle record
      });
  }

  publish(): Promise<CycleReport> {
    return this.publisher.publish();
  }

  /** Every pair of every venue collected once by REST from its watermark, with no publish (tests, tools). */
  async collectTrades(): Promise<void> {
    await Promise.all(this.sessions.flatMap((s) => s.listings.map((l) => s.wake(l.pair))));
  }

  /** One trade cycle by hand (tests, one-shot runs): every venue collects, then one publish. */
  async runTradeCycle(): Promise<CycleReport> {
    await Promise.all(this.sessions.map((s) => this.collectVenue(s)));
    return this.publisher.publish();
  }

  /** One FX cycle: every source, each stored with its own update time. */
  async runFxCycle(): Promise<CycleReport> {
    const timer = performance.now();
    const report: CycleReport = { startedAt: new Date(this.now()), finishedAt: new Date(), rowsBySource: {}, errors: [] };
    for (const source of this.o.fx ?? fxSources) {
      try {
        const obs = await source.fetch({ simUrl: this.o.config.simUrl, timeoutMs: this.o.requestTimeoutMs ?? 10_000, now: this.now });
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
    await this.publisher.record('fx', done);
    this.o.metrics?.cycle('fx', (performance.now() - timer) / 1000, done.errors.map((e) => e.source));
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
    for (const s of this.sessions) loop(cycleMs, () => this.collectVenue(s), `venue:${s.id}`);
    loop(cycleMs, () => this.publisher.publish(), 'publish');
    if (this.o.config.streams) this.startStreams();
  }

  /**
   * A stream for every venue that publishes one (Luno's with a key), beside its REST loop; start()
   * calls it, a tool or test driving the cycles by hand calls it alone. A venue's stream opens once
   * its markets are known (after its first run).
   */
  startStreams(): void {
    if (this.streams.size > 0 || this.stopped) return; // once: start() after a caller's own call opens no second set
    for (const session of this.sessions) {
      const stream = VENUE_STREAMS.find((s) => s.venue === session.id);
      if (!stream?.available(this.o.config.lunoApiKey)) continue;
      const runner = new VenueStreamRunner({
        session,
        stream,
        log: this.o.log,
        simUrl: this.o.config.simUrl,
        credentials: this.o.config.lunoApiKey,
        timings: this.o.streamTimings,
        onReport: () => this.reportSoon.ask(),
      });
      this.streams.set(session.id, runner);
      runner.sync(); // opens once the venue's markets are known (after its first run)
    }
    if (this.streams.size === 0) return;
    const heartbeat = setInterval(() => this.reportSoon.ask(), REPORT_EVERY_MS);
    heartbeat.unref();
    this.timers.set('stream reports', heartbeat);
  }

  /** What each venue stream of this process is doing (health, tests). */
  streamReports(): StreamReport[] {
    return [...this.streams.values()].map((s) => s.report());
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.reportSoon.stop();
    await Promise.all([...this.streams.values()].map((s) => s.stop()));
    // the streams seen stopped, not left open (readers drop a row unwritten for 90 s in any case)
    await within(STOP_REPORT_MS, this.reportJob.run()).catch(() => {});
    await Promise.allSettled([...this.inflight, ...this.sessions.map((s) => s.current), this.publisher.current]);
    await Promise.all(this.sessions.map((s) => s.stop()));
  }

  /** Whether trades are written with COPY (backfill writes as the pipeline does). */
  get copyTrades(): boolean {
    return this.o.copyTrades ?? false;
  }

  /** Each venue with what it lists (discovered now if not yet) and a paced, retrying fetch. */
  async venueTargets(): Promise<Array<{ venue: Venue; exchange: Exchange; listings: readonly Listing[]; fetch: <T>(work: () => Promise<T>) => Promise<T>; error?: string }>> {
    return Promise.all(
      this.sessions.map(async (s) => {
        let error: string | undefined;
        if (s.listings.length === 0) await s.discover().catch((err) => (error = (err as Error).message));
        return { venue: s.venue, exchange: s.exchange, listings: s.listings, fetch: <T>(w: () => Promise<T>) => s.withRetry(w), error };
      }),
    );
  }

  /** Records a backfill run like a cycle, so health and status see it. */
  async recordBackfill(report: CycleReport): Promise<void> {
    await this.publisher.record('backfill', report);
  }
}
