// Publishing: what the venues stored since the last time becomes final. One step, in this order:
// read what may settle, refresh the aggregates from their durable frontier (lib/db/refresh.ts),
// the FX rate in force for each new hour, settle and certify (settle.ts hands the newly settled
// ranges to the certifier), the fixings whose hour has settled, restatements of what late trades
// moved, the storage jobs where there is no job scheduler, the cycle record, then onCycle. Calls
// while one runs are folded into one more run after it.
// With several pipeline processes only the holder of the publisher lease (pipeline/lease.ts) does
// more than record its cycle; its settlement is fenced in the transaction that records it.
// Stopping ends a publish between two of its transactions (a backlog of certificates included):
// steps not begun are skipped, and what is left is done by the next run.
import { Coalesced } from '../lib/coalesced.js';
import type { Sql, Tx } from '../lib/db/connect.js';
import { withoutStatementTimeout } from '../lib/db/connect.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import type { Logger } from '../lib/log.js';
import { configureRetention, runStorageJobs } from './maintenance.js';
import { dueFixings } from './fixings.js';
import type { PipelineMetrics } from '../lib/metrics.js';
import { pruneSettledValues, recordSettledValues, restate, type OnRestated } from './restate.js';
import { FencedOut, type PublishLease } from './lease.js';
import { recordSettlement, settledPoints, settlementAt, StoppedPartWay, type Certifier, type Settlement } from './settle.js';
import type { RunError } from './venue-session.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface CycleReport {
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly rowsBySource: Record<string, number>;
  readonly errors: RunError[];
}

export interface PublisherOptions {
  readonly sql: Sql;
  readonly log: Logger;
  readonly market: 'real' | 'simulated';
  readonly settleAfterSeconds: number;
  readonly tradesRetentionDays: number | null;
  /** Certifies newly settled ranges before their settlement is recorded, and publishes the fixings due. */
  readonly certifier?: Certifier;
  /** Recorded with each restatement, in its transaction (the transparency log). */
  readonly onRestated?: OnRestated;
  /** After everything of a publish is recorded: the transparency log's signed head. */
  readonly onPublished?: (now: Date) => Promise<unknown>;
  /** Called after every publish (and FX cycle). */
  readonly onCycle?: () => Promise<void>;
  /** Hears of each publish and each settlement recorded. */
  readonly metrics?: PipelineMetrics;
  /** Run compression and retention in this process (a database without a job scheduler). */
  readonly runStorageJobs: boolean;
  readonly now: () => number;
  /** Whether every venue has finished a collection in this process: settlement waits for it. */
  readonly venuesRanOnce: () => boolean;
  readonly stopped: () => boolean;
  /** With several pipeline processes: publish only while holding it (absent: this process alone publishes). */
  readonly lease?: PublishLease;
}

export class Publisher {
  /** What venues delivered since the last publish: the next cycle record. */
  private unpublished: { startedAt: Date; rowsBySource: Record<string, number>; errors: RunError[] };
  private readonly publishes = new Coalesced(() => this.publishOnce(), () => !this.o.stopped());
  /** Each pair's settled_through, for counting late trades (loaded before the first run, then kept by settling). */
  private settled: Map<string, Date> | null = null;
  private storageJobsAt = 0;
  private prunedAt = 0;
  /** Late trades noticed after this are looked at for restatements (a margin before the last look). */
  private restatedSince: Date | null = null;

  constructor(private readonly o: PublisherOptions) {
    this.unpublished = { startedAt: new Date(o.now()), rowsBySource: {}, errors: [] };
  }

  /** A pair's settled_through as this process knows it. */
  settledThrough(pair: string): Date | null {
    return this.settled?.get(pair) ?? null;
  }

  /** Loads every pair's recorded settled_through once (before the first collection). */
  async loadSettled(): Promise<void> {
    if (this.settled) return;
    const recorded = await settledPoints(this.o.sql).catch(() => null);
    this.settled ??= recorded; // a settle that finished meanwhile is newer
    if (this.settled) this.o.metrics?.settled(this.settled);
  }

  /** A venue's run, to be published next. */
  delivered(source: string, inserted: number, errors: readonly RunError[]): void {
    const rows = this.unpublished.rowsBySource;
    rows[source] = (rows[source] ?? 0) + inserted;
    this.unpublished.errors.push(...errors);
  }

  get current(): Promise<unknown> | null {
    return this.publishes.current;
  }

  publish(): Promise<CycleReport> {
    return this.publishes.run();
  }

  async record(kind: 'trades' | 'fx' | 'backfill', report: CycleReport): Promise<void> {
    await this.o.sql`
      INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source, errors)
      VALUES (${kind}, ${this.o.market}, ${report.startedAt}, ${report.finishedAt}, ${this.o.sql.json(report.rowsBySource)}, ${this.o.sql.json(report.errors as never)})`;
  }

  private async publishOnce(): Promise<CycleReport> {
    const { sql, log } = this.o;
    const { startedAt, rowsBySource, errors } = this.unpublished;
    this.unpublished = { startedAt: new Date(this.o.now()), rowsBySource: {}, errors: [] };
    const now = new Date(this.o.now());
    const timer = performance.now();
    const failed: string[] = [];
    const lease = this.o.lease;
    if (lease && !(await lease.check().catch(() => false))) {
      // another process publishes: this one records what its venues collected, and follows the
      // settlement it records (late trades are counted against it)
      this.settled = (await settledPoints(sql).catch(() => null)) ?? this.settled;
      return this.finish({ startedAt, finishedAt: new Date(this.o.now()), rowsBySource, errors }, timer, failed);
    }
    const fence = lease?.fence;
    const stopped = this.o.stopped;
    let fenced = false;
    /**
     * Runs one step (none once the process is stopping, or once another process has taken the
     * lease: the rest is that one's); a failure is reported in the cycle record and leaves undefined.
     */
    const step = async <T>(source: string, work: () => Promise<T>): Promise<T | undefined> => {
      if (stopped() || fenced) return undefined;
      try {
        return await work();
      } catch (err) {
        if (err instanceof StoppedPartWay) {
          log.info({ step: source }, err.message);
          return undefined;
        }
        if (err instanceof FencedOut) {
          fenced = true; // already told by the lease
          return undefined;
        }
        failed.push(source);
        errors.push({ source, error: (err as Error).message.slice(0, 500) });
        log.error({ err, step: source }, 'publish step failed; the next cycle retries it');
        return undefined;
      }
    };
    // What may settle is read before the refresh: a venue records how far it has collected only
    // once those trades are stored, so every trade that lets a bucket settle is in the refreshed
    // candles (docs/decisions.md, "Certificates are issued at settlement"). Not before every venue
    // has had its first collection in this process: after downtime every venue's collected_through
    // is old, and the lag rule would settle the outage's buckets from what was stored before the stop.
    const settledBefore = this.settled;
    const settlement = this.o.venuesRanOnce() ? await step('settle', () => settlementAt(sql, now, this.o.settleAfterSeconds)) : undefined;
    if (settlement) this.settled = settlement.settledThrough; // trades stored from here on below it are late
    // settlement reads the refreshed candles, so a failed refresh skips it (the frontier stays)
    const refreshed = await step('refresh', async () => {
      await withoutStatementTimeout(sql, (conn) => refreshAggregates(conn, { now }));
      return true;
    });
    // each new hour's FX rate in force, for the synthetic prices of its candles
    await step('fx', () => withoutStatementTimeout(sql, (conn) => conn`SELECT fx_in_force_refresh(NULL, ${now})`));
    if (settlement) {
      const recorded =
        refreshed &&
        (await step('settle', async () => {
          await settle(sql, settlement, this.o.certifier, now, { stopped, fence });
          return true;
        }));
      if (!recorded) this.settled = settledBefore; // the next publish settles it again
      else this.o.metrics?.settled(settlement.settledThrough);
    }
    const certifier = this.o.certifier;
    if (certifier && refreshed) {
      await step('fixings', async () => {
        const published = await publishDueFixings(sql, certifier, now, stopped);
        if (published > 0) log.info({ published }, 'fixings published');
      });
      // late trades look back from the last look (the database's clock, as noticed_at is), with a
      // margin for inserts still committing then
      const result = await step('restate', () => restate(sql, this.restatedSince, now, this.o.onRestated));
      if (result) {
        const restated = result.restated;
        this.restatedSince = new Date(result.looked.getTime() - 5 * 60_000);
        if (restated.length > 0) this.o.metrics?.restated(restated.length);
        for (const r of restated) log.warn({ pair: r.pair, subject: r.subject, time: r.time, previous: r.previous, restated: r.restated, change_pct: r.changePct, late_trades: r.lateTrades }, 'restated: late trades moved a settled value beyond the threshold');
      }
    }
    if (this.o.onPublished) await step('transparency', () => this.o.onPublished!(now));
    if (this.o.now() - this.storageJobsAt > HOUR_MS) {
      this.storageJobsAt = this.o.now();
      await step('storage', async () => {
        await configureRetention(sql, this.o.tradesRetentionDays);
        if (this.o.runStorageJobs) log.info({ jobs: await withoutStatementTimeout(sql, runStorageJobs) }, 'storage jobs ran');
      });
    }
    if (!stopped() && this.o.now() - this.prunedAt > DAY_MS) {
      // health and status need only the recent cycles
      await sql`DELETE FROM ingest_cycles WHERE finished_at < now() - INTERVAL '30 days'`;
      await sql`DELETE FROM processes WHERE last_seen < now() - INTERVAL '1 day'`;
      await pruneSettledValues(sql, now);
      this.prunedAt = this.o.now();
    }
    return this.finish({ startedAt, finishedAt: new Date(this.o.now()), rowsBySource, errors }, timer, failed);
  }

  /** The cycle record, then onCycle (not while stopping). */
  private async finish(done: CycleReport, timer: number, failed: string[]): Promise<CycleReport> {
    try {
      await this.record('trades', done);
    } catch (err) {
      failed.push('record');
      throw err;
    } finally {
      this.o.metrics?.cycle('publish', (performance.now() - timer) / 1000, failed);
    }
    if (!this.o.stopped()) await this.o.onCycle?.();
    return done;
  }
}

/**
 * Records a settlement once its newly settled ranges are certified and their settled values kept
 * (what restatements compare with); a failure leaves them unsettled for the next publish.
 */
export function settle(
  sql: Sql,
  settlement: Settlement,
  certifier: Certifier | undefined,
  now: Date,
  o: { readonly stopped?: () => boolean; readonly fence?: (tx: Tx) => Promise<void> } = {},
): Promise<void> {
  return recordSettlement(
    sql,
    settlement,
    (ranges) => certifier?.issue(ranges, o.stopped) ?? Promise.resolve(0),
    async (tx, ranges) => {
      await o.fence?.(tx);
      await recordSettledValues(tx, ranges, now);
    },
  );
}

/** Publishes every fixing due at `now` whose hour has settled; how many were published. Stopping ends it between two (StoppedPartWay). */
export async function publishDueFixings(sql: Sql, certifier: Certifier, now: Date, stopped: () => boolean = () => false): Promise<number> {
  let published = 0;
  for (const due of await dueFixings(sql, now)) {
    if (stopped()) throw new StoppedPartWay('fixings');
    if (await certifier.fix(due.pair, due.slot)) published++;
  }
  return published;
}
