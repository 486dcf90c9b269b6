// Real volume through the real pipeline, on the embedded TimescaleDB in a data directory:
//   1. One simulated day with Binance's USDT legs at real volume (~1.66 million trades), collected
//      by the pipeline (ccxt against the simulated market) one 60-second cycle at a time: each
//      cycle's time = collect + insert + refresh + settle + certify, as production runs it.
//   2. Storage of that day before and after compression (the policy's job, run as the pipeline
//      runs it on the embedded database), and the process's RSS.
//   3. 29 more days copied from the first inside the database (compressed as they age, candles
//      refreshed), then the time to reopen the database directory after those 30 days.
// Limits (issue 7): cycle p50 < 5 s, < 60 MB per real-volume day compressed, reopen < 5 s.
//
// Run: node_modules/.bin/tsx bench/volume.bench.ts   (or `make bench`)
//   VOLUME_DAYS=30   days in the reopen step (1 skips the copies)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parametersInForce } from '../lib/methodology/parameters.js';
import { softwareIdentity } from '../lib/software.js';
import { Certifier } from '../pipeline/certify/issue.js';
import { createSigner } from '../lib/signer.js';
import { loadConfig } from '../lib/config.js';
import { openDatabase, type Database, type Sql } from '../lib/db/connect.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import { createLogger } from '../lib/log.js';
import { Pipeline } from '../pipeline/runner.js';
import { startSimMarket } from '../sim/index.js';
import { venues } from '../pipeline/venues/index.js';
import { check, fmt, header, limitRow, machine, median, round, runBench, since, table } from './support.js';

const MIN = 60_000;
const DAY = 86_400_000;
const DAYS = Number(process.env.VOLUME_DAYS ?? 30);
const LIMITS = { cycleP50Ms: 5_000, mbPerDayCompressed: 60, reopenMs: 5_000 };
const log = createLogger('silent');
const progressLog = (line: string) => process.stdout.write(`  ${line}\n`);

/** MB of the trades hypertable (table, indexes, compressed chunks) and of the whole database. */
async function sizes(sql: Sql): Promise<{ tradesMb: number; databaseMb: number }> {
  const [r] = await sql<{ trades: string; db: string }[]>`
    SELECT hypertable_size('trades')::text AS trades, pg_database_size(current_database())::text AS db`;
  return { tradesMb: Number(r!.trades) / 2 ** 20, databaseMb: Number(r!.db) / 2 ** 20 };
}

const dirMb = (dir: string): number => {
  let bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return bytes / 2 ** 20;
};

async function main(): Promise<void> {
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-volume-'));
  const dayStart = Math.floor(Date.now() / DAY) * DAY - (DAYS + 3) * DAY;
  header('volume: one real-volume day through the pipeline on the embedded TimescaleDB (data directory)', [
    `market: the simulator with SIM_VOLUME=real (Binance BTC/ETH/SOL/XRP-USDT at 400/300/250/200 trades a minute) and every other book as usual`,
    `day: ${new Date(dayStart).toISOString().slice(0, 10)}, 1,440 cycles of 60 s on the simulated clock; each cycle collects every venue, then refreshes, settles and certifies`,
    `then: compression (the policy job), sizes, and ${DAYS} days in all (copies of the first) before timing a reopen`,
  ]);

  let clock = dayStart;
  const sim = await startSimMarket({ seed: 5, now: () => clock, historyStart: dayStart - 5 * MIN, volume: 'real', retainMs: 30 * MIN });
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, AFRATES_VAR_DIR: varDir, LOG_LEVEL: 'silent' });
  let db: Database = await openDatabase(config, log);
  const signer = createSigner({ keyDir: path.join(varDir, 'keys') });
  const pipeline = new Pipeline({
    config,
    log,
    sql: db.sql,
    venues,
    unpaced: true,
    now: () => clock,
    initialLookbackMs: 5 * MIN,
    certifier: new Certifier(db.sql, { signer, issuerUrl: config.publicUrl, market: 'simulated', software: softwareIdentity(), parameters: parametersInForce(config.settleAfterSeconds), now: () => new Date(clock) }),
  });

  // 1. the day, cycle by cycle
  const cycleMs: number[] = [];
  let printed = performance.now();
  let stored = 0;
  const rssStart = process.memoryUsage().rss;
  for (clock = dayStart + MIN; clock <= dayStart + DAY; clock += MIN) {
    const t0 = performance.now();
    const report = await pipeline.runTradeCycle();
    cycleMs.push(since(t0));
    check(report.errors.length === 0, `cycle at ${new Date(clock).toISOString()}: ${JSON.stringify(report.errors)}`);
    stored += Object.values(report.rowsBySource).reduce((a, b) => a + b, 0);
    if (performance.now() - printed > 5_000) {
      printed = performance.now();
      progressLog(`${new Date(clock).toISOString().slice(11, 16)} UTC  cycle ${cycleMs.length}/1440  ${fmt(stored)} trades  last cycle ${fmt(cycleMs.at(-1)!)} ms  rss ${fmt(process.memoryUsage().rss / 2 ** 20)} MB`);
    }
  }
  await pipeline.stop();
  const rssDay = process.memoryUsage().rss;
  const [count] = await db.sql<{ n: string }[]>`SELECT count(*)::text AS n FROM trades`;
  check(Number(count!.n) === stored, `stored ${stored} but the table holds ${count!.n}`);

  // 2. storage before and after compression
  const uncompressed = await sizes(db.sql);
  const t0 = performance.now();
  await db.sql`SELECT compress_chunk(c, if_not_compressed => true) FROM show_chunks('trades', older_than => ${new Date(dayStart + DAY + 1)}::timestamptz) c`;
  const compressMs = since(t0);
  const compressed = await sizes(db.sql);
  const candlesBefore = await db.sql`SELECT bucket, pair, pv, volume FROM candles WHERE interval = '1h' ORDER BY bucket, pair`;

  // 3. thirty days: copies of the first, each compressed, candles refreshed
  const copyMs: number[] = [];
  for (let d = 1; d < DAYS; d++) {
    const t1 = performance.now();
    await db.sql`INSERT INTO refresh_requests (from_time) VALUES (${new Date(dayStart + d * DAY)})`;
    await db.sql`
      INSERT INTO trades (time, exchange, pair, trade_id, price, amount, side)
      SELECT time + make_interval(days => ${d}), exchange, pair, trade_id || ':' || ${d}, price, amount, side
      FROM trades WHERE time >= ${new Date(dayStart)} AND time < ${new Date(dayStart + DAY)}`;
    await db.sql`SELECT compress_chunk(c, if_not_compressed => true) FROM show_chunks('trades', older_than => ${new Date(dayStart + (d + 1) * DAY + 1)}::timestamptz) c`;
    await refreshAggregates(db.sql, { now: new Date(dayStart + (d + 1) * DAY) });
    await db.sql`CHECKPOINT`; // as the pipeline's hourly storage jobs do: pg_wal is recycled, not kept
    copyMs.push(since(t1));
    progressLog(`day ${d + 1}/${DAYS} copied in ${fmt(copyMs.at(-1)! / 1000)} s`);
  }
  const thirty = await sizes(db.sql);
  const candlesAfter = await db.sql`SELECT bucket, pair, pv, volume FROM candles WHERE interval = '1h' AND bucket < ${new Date(dayStart + DAY)} ORDER BY bucket, pair`;
  check(JSON.stringify(candlesAfter) === JSON.stringify(candlesBefore), 'the first day\'s candles changed through compression and the copies');
  await db.close();
  const dataDirMb = dirMb(config.dataDir);

  const t2 = performance.now();
  db = await openDatabase(config, log);
  await db.sql`SELECT count(*) FROM candles WHERE interval = '1d'`;
  const reopenMs = since(t2);
  await db.close();
  await sim.stop();
  fs.rmSync(varDir, { recursive: true, force: true });

  const p50 = median(cycleMs);
  const perDayCompressedMb = compressed.tradesMb;
  console.log('');
  console.log(
    table([
      ['figure', 'value', 'limit', 'ratio'],
      limitRow('cycle p50 (collect + insert + refresh + settle), ms', p50, LIMITS.cycleP50Ms),
      ['cycle max, ms', Math.max(...cycleMs), '-', '-'],
      ['trades in the day', stored, '-', '-'],
      ['trades hypertable, MB, uncompressed', uncompressed.tradesMb, '-', '-'],
      limitRow('trades hypertable, MB per day, compressed', perDayCompressedMb, LIMITS.mbPerDayCompressed),
      ['compression ratio', uncompressed.tradesMb / compressed.tradesMb, '-', '-'],
      ['compressing the day, ms', compressMs, '-', '-'],
      [`database after ${DAYS} days, MB (data directory ${fmt(dataDirMb)} MB)`, thirty.databaseMb, '-', '-'],
      limitRow(`reopen after ${DAYS} days, ms`, reopenMs, LIMITS.reopenMs),
      ['RSS after the day (sim + pipeline + database), MB', rssDay / 2 ** 20, '-', '-'],
    ]),
  );
  console.log(`\nRSS at start ${fmt(rssStart / 2 ** 20)} MB; copying a day took ${fmt(median(copyMs) / 1000)} s (p50)`);
  console.log(
    JSON.stringify({
      bench: 'volume',
      at: new Date().toISOString(),
      machine: machine(),
      volume: {
        trades_day: stored,
        cycle_p50_ms: round(p50),
        cycle_max_ms: round(Math.max(...cycleMs)),
        trades_mb_uncompressed: round(uncompressed.tradesMb),
        trades_mb_compressed: round(perDayCompressedMb),
        database_mb_days: round(thirty.databaseMb),
        days: DAYS,
        reopen_ms: round(reopenMs),
        rss_mb: round(rssDay / 2 ** 20),
      },
    }),
  );
}

runBench(main);
