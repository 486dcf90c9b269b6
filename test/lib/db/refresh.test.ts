// The refresh pass against a refresh already running elsewhere. TimescaleDB 2.27+ refuses an
// overlapping refresh with SQLSTATE 55P03 instead of waiting; refreshAggregates must wait and
// retry, not fail the cycle. Only a server can run two refreshes at once (the embedded database
// admits one connection), so this runs with TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Database } from '../../../lib/db/connect.js';
import { refreshAggregates } from '../../../lib/db/refresh.js';
import { insertTrades } from '../../../pipeline/store.js';
import { openTestDatabase } from '../../support/db.js';
import { generateTrades } from '../../support/market.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
let db: Database;

beforeAll(async () => {
  if (!onServer) return;
  db = await openTestDatabase();
  const start = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 3 * 86_400_000);
  await insertTrades(db.sql, generateTrades({ seed: 3, start, hours: 48, listings: { BTCNGN: ['luno', 'quidax'], BTCUSDT: ['binance'] }, tradesPerHour: 2_000 }));
});
afterAll(async () => {
  await db?.close();
});

describe('refreshAggregates', () => {
  it.runIf(onServer)('waits out a concurrent refresh of the same aggregate (55P03) and completes', async () => {
    const other = createPool(db.url, 1);
    try {
      // another session refreshes everything; ours starts while it runs
      const [theirConnection] = await other<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`; // its one connection
      const pid = theirConnection!.pid;
      let theirsEnded = false;
      const theirs = other`CALL refresh_continuous_aggregate('candles_5m', NULL, now())`.execute().finally(() => (theirsEnded = true));
      // ours starts once theirs is under way in the database (a loaded machine may take a while)
      let running = false;
      while (!running && !theirsEnded) {
        const [seen] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE pid = ${pid} AND state = 'active' AND query LIKE 'CALL refresh_continuous_aggregate(%'`;
        running = seen!.n > 0;
        if (!running) await new Promise((r) => setTimeout(r, 10));
      }
      const refused: string[] = [];
      const ours = refreshAggregates(db.sql, { retryWaitsMs: [200, 400, 800, 1_600, 3_200, 6_400] }).catch((err) => {
        refused.push((err as { code?: string }).code ?? String(err));
        throw err;
      });
      expect(running).toBe(true); // ours began while theirs ran
      await Promise.all([theirs, ours]);
      expect(refused).toEqual([]);
      // every aggregate refreshed: each has its frontier
      const [row] = await db.sql<{ frontiers: number; aggregates: number }[]>`
        SELECT (SELECT count(*)::int FROM aggregate_frontier) AS frontiers,
               (SELECT count(*)::int FROM timescaledb_information.continuous_aggregates) AS aggregates`;
      expect(row!.frontiers).toBe(row!.aggregates);
      expect(row!.aggregates).toBeGreaterThanOrEqual(4);
    } finally {
      await other.end();
    }
  });
});
