// Backfill: fetch a past range from every venue that offers it, idempotently (stored trades are
// skipped, watermarks untouched), then refresh the aggregates (the writer has recorded the range
// in refresh_requests). Each venue and pair is read a UTC day at a time, so a venue that walks back
// from the end of its window (VALR) reads one day per walk, not everything since, and progress
// shows per day. Venues that only serve recent trades, or history shorter than asked, are reported
// once per venue, not silently skipped; as notes (make backfill prints them beside its progress, a
// service logs them at info), never warnings: a venue keeping what it keeps is no fault, and the
// demo's every start would otherwise warn 17 times.
// Backfilled trades in buckets that were settled already correct the candles; certificates are
// made at settlement only (docs/decisions.md), so history fetched later is not certified.
import { withoutStatementTimeout, type Sql } from '../lib/db/connect.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import type { FxReport } from '../lib/fx-report.js';
import type { Logger } from '../lib/log.js';
import { collect } from './collect.js';
import { FX_CURRENCIES } from './fx/index.js';
import type { CycleReport, Pipeline } from './runner.js';
import { insertFxRates } from './store.js';

const DAY_MS = 86_400_000;

export interface BackfillRequest {
  readonly pairs?: readonly string[];
  readonly from: Date;
  readonly to: Date;
}

export interface BackfillProgress {
  /** called once per venue+pair with the number of ms of history it will cover */
  start(task: string, totalMs: number): void;
  /** how much of it is done (ms), and the trades stored so far */
  update(task: string, doneMs: number, inserted: number): void;
  finish(task: string, inserted: number): void;
  /** what was not fetched and why (a venue's history), once per venue */
  note?(text: string): void;
}

export async function backfill(pipeline: Pipeline, sql: Sql, log: Logger, req: BackfillRequest, progress?: BackfillProgress, now = Date.now): Promise<CycleReport> {
  const report: CycleReport = { startedAt: new Date(now()), finishedAt: new Date(), rowsBySource: {}, errors: [] };
  const to = Math.min(req.to.getTime(), now());
  const targets = await pipeline.venueTargets();
  await Promise.all(
    targets.map(async (t) => {
      if (t.error) report.errors.push({ source: t.venue.id, error: `loadMarkets: ${t.error}` });
      let inserted = 0;
      const listings = t.listings.filter((l) => !req.pairs || req.pairs.includes(l.pair));
      const pairs = listings.map((l) => l.pair);
      const note = (fields: Record<string, unknown>, text: string) => (progress?.note ? progress.note(text) : log.info({ venue: t.venue.id, pairs, ...fields }, text));
      if (listings.length && t.venue.historyMs === 0) note({}, `${t.venue.id} serves only its most recent trades: nothing to backfill (${pairs.join(', ')})`);
      const earliest = t.venue.historyMs === undefined ? -Infinity : now() - t.venue.historyMs;
      if (listings.length && t.venue.historyMs && req.from.getTime() < earliest) {
        note({ from: new Date(earliest) }, `${t.venue.id} keeps ${Math.round(t.venue.historyMs / 3_600_000)} hours of trades: backfilled from ${new Date(earliest).toISOString()} (${pairs.join(', ')})`);
      }
      for (const listing of listings) {
        const task = `${t.venue.id} ${listing.pair}`;
        let from = req.from.getTime();
        if (t.venue.historyMs === 0) continue;
        if (from < earliest) from = earliest;
        if (from >= to) continue;
        progress?.start(task, to - from);
        let stored = 0;
        try {
          for (let day = from; day < to; day = Math.floor(day / DAY_MS) * DAY_MS + DAY_MS) {
            const until = Math.min(to, Math.floor(day / DAY_MS) * DAY_MS + DAY_MS - 1);
            const result = await collect(sql, { venue: t.venue, exchange: t.exchange, symbol: listing.symbol, pair: listing.pair }, t.fetch, {
              startAt: day,
              until,
              maxPages: Number.POSITIVE_INFINITY,
              trackWatermark: false,
              copy: pipeline.copyTrades,
              onPage: (last) => progress?.update(task, Math.min(to, last) - from, stored),
            });
            stored += result.inserted;
            progress?.update(task, until - from, stored);
          }
          inserted += stored;
          progress?.finish(task, stored);
        } catch (err) {
          inserted += stored;
          report.errors.push({ source: t.venue.id, pair: listing.pair, error: (err as Error).message.slice(0, 500) });
          progress?.finish(task, stored);
        }
      }
      report.rowsBySource[t.venue.id] = inserted;
    }),
  );
  await withoutStatementTimeout(sql, (conn) => refreshAggregates(conn, { now: new Date(now()) }));
  const done = { ...report, finishedAt: new Date(now()) };
  await pipeline.recordBackfill(done);
  log.info({ rows: done.rowsBySource, errors: done.errors.length }, 'backfill finished');
  return done;
}

/**
 * Past FX reports stored as rates (the FX sources' real endpoints have no history to fetch; the
 * simulated market's do): `reportsAfter` is asked for those after the newest rate already stored
 * (null: none stored yet), so a second run changes no hour already recorded.
 */
export async function backfillFx(sql: Sql, reportsAfter: (newest: Date | null) => readonly FxReport[]): Promise<void> {
  const [{ newest } = { newest: null }] = await sql<{ newest: Date | null }[]>`SELECT max(time) AS newest FROM fx_rates`;
  const reports = reportsAfter(newest);
  await insertFxRates(
    sql,
    reports.flatMap((report) =>
      FX_CURRENCIES.filter((c) => report.rates[c] !== undefined).map((currency) => ({
        time: new Date(report.observedAt),
        currency,
        unitsPerUsd: report.rates[currency]!,
        source: report.source,
        sourceUpdatedAt: new Date(report.updatedAt),
      })),
    ),
  );
}
