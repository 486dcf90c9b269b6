// Backfill: fetch a past range from every venue that offers it, idempotently (stored trades are
// skipped, watermarks untouched), then refresh the aggregates for that range.
// Venues that only serve recent trades are reported, not silently skipped.
import type { Sql } from '../lib/db/connect.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import type { Logger } from '../lib/log.js';
import { collect } from './collect.js';
import type { CycleReport, Pipeline } from './runner.js';

export interface BackfillRequest {
  readonly pairs?: readonly string[];
  readonly from: Date;
  readonly to: Date;
}

export interface BackfillProgress {
  /** called once per venue+pair with the number of ms of history it will cover */
  start(task: string, totalMs: number): void;
  update(task: string, doneMs: number): void;
  finish(task: string, inserted: number): void;
}

export async function backfill(pipeline: Pipeline, sql: Sql, log: Logger, req: BackfillRequest, progress?: BackfillProgress, now = Date.now): Promise<CycleReport> {
  const report: CycleReport = { startedAt: new Date(now()), finishedAt: new Date(), rowsBySource: {}, errors: [] };
  const to = Math.min(req.to.getTime(), now());
  const targets = await pipeline.venueTargets();
  await Promise.all(
    targets.map(async (t) => {
      if (t.error) report.errors.push({ source: t.venue.id, error: `loadMarkets: ${t.error}` });
      let inserted = 0;
      for (const listing of t.listings.filter((l) => !req.pairs || req.pairs.includes(l.pair))) {
        const task = `${t.venue.id} ${listing.pair}`;
        let from = req.from.getTime();
        if (t.venue.historyMs === 0) {
          log.warn({ venue: t.venue.id, pair: listing.pair }, 'venue serves only its most recent trades: no backfill possible');
          continue;
        }
        if (t.venue.historyMs !== undefined && from < now() - t.venue.historyMs) {
          from = now() - t.venue.historyMs;
          log.warn({ venue: t.venue.id, pair: listing.pair, from: new Date(from) }, 'venue history starts later than requested');
        }
        if (from >= to) continue;
        progress?.start(task, to - from);
        try {
          const result = await collect(sql, { venue: t.venue, exchange: t.exchange, symbol: listing.symbol, pair: listing.pair }, t.fetch, {
            startAt: from,
            until: to,
            maxPages: Number.POSITIVE_INFINITY,
            trackWatermark: false,
            onPage: (last) => progress?.update(task, Math.min(to, last) - from),
          });
          inserted += result.inserted;
          progress?.finish(task, result.inserted);
        } catch (err) {
          report.errors.push({ source: t.venue.id, pair: listing.pair, error: (err as Error).message.slice(0, 500) });
          progress?.finish(task, 0);
        }
      }
      report.rowsBySource[t.venue.id] = inserted;
    }),
  );
  await refreshAggregates(sql, req.from, new Date(to), new Date(now()));
  const done = { ...report, finishedAt: new Date(now()) };
  await pipeline.recordBackfill(done);
  log.info({ rows: done.rowsBySource, errors: done.errors.length }, 'backfill finished');
  return done;
}
