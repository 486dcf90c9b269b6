// Ingest throughput into the embedded TimescaleDB (in memory) through the real writer
// (pipeline/store.ts insertTrades), and the time refreshAggregates (lib/db/refresh.ts) takes for one
// collection cycle's touched range and for a whole day, at realistic volume (1x) and at 10x.
//
//   1x  = one day of trades for 20 venue-pairs at ~62 trades an hour each (~30k trades): what a
//         restart after a day's outage, or a one-day backfill, inserts in one go.
//   10x = the same day at ten times the rate (~300k trades).
//
// Each volume gets a fresh in-memory database. The day lies three days in the past and every
// refresh is given `now` just after the window it refreshes, so the windows are real (not cut
// short at the bucket still open at the real clock).
//
// On a server (BENCH_DATABASE_URL=postgres://...: a database is created and dropped) the writer uses
// COPY, and the same backlog is also COPYed raw into an identical table (same constraints, indexes,
// hypertable): insertTrades' throughput against that is the ratio printed (limit: 0.8).
//
// Run: node_modules/.bin/tsx bench/ingest.bench.ts   (or `make bench`)
import { batchesUnder, MAX_STATEMENT_BYTES } from '../lib/db/batches.js';
import type { Sql } from '../lib/db/connect.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import { createLogger } from '../lib/log.js';
import { insertTrades, type TradeRow } from '../pipeline/store.js';
import { openTestDatabase } from '../test/support/db.js';
import { generateTrades } from '../test/support/market.js';
import { check, fmt, header, limitRow, machine, median, round, runBench, since, table } from './support.js';

const ON_SERVER = Boolean(process.env.BENCH_DATABASE_URL);
const COPY_RATIO_LIMIT = 0.8;

/** COPYs the rows raw into a table identical to trades (the baseline of the writer on a server), in ms. */
async function rawCopyMs(sql: Sql, rows: readonly TradeRow[]): Promise<number> {
  await sql.unsafe(`
    DROP TABLE IF EXISTS trades_copy;
    CREATE TABLE trades_copy (LIKE trades INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
    ALTER TABLE trades_copy ADD FOREIGN KEY (pair) REFERENCES pairs (pair);
    SELECT create_hypertable('trades_copy', by_range('time', INTERVAL '1 day'), create_default_indexes => false);`);
  const t0 = performance.now();
  const copy = await sql`COPY trades_copy (time, exchange, pair, trade_id, price, amount, side) FROM STDIN`.writable();
  await new Promise<void>((resolve, reject) => {
    copy.on('error', reject);
    let i = 0;
    const more = () => {
      let ok = true;
      while (i < rows.length && ok) {
        const t = rows[i++]!;
        ok = copy.write(`${t.time.toISOString()}\t${t.exchange}\t${t.pair}\t${t.tradeId}\t${t.price}\t${t.amount}\t${t.side ?? '\\N'}\n`);
      }
      if (i < rows.length) copy.once('drain', more);
      else copy.end(resolve);
    };
    more();
  });
  const ms = since(t0);
  await sql`DROP TABLE trades_copy`;
  return ms;
}

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** 20 venue-pairs, roughly what the four venues list for afrates' pairs. */
const LISTINGS: Record<string, readonly string[]> = {
  BTCNGN: ['luno', 'quidax'],
  ETHNGN: ['luno', 'quidax'],
  USDTNGN: ['luno', 'quidax'],
  XRPNGN: ['luno'],
  SOLNGN: ['quidax'],
  USDCNGN: ['quidax'],
  BTCZAR: ['luno', 'valr'],
  ETHZAR: ['luno', 'valr'],
  XRPZAR: ['valr'],
  SOLZAR: ['valr'],
  USDTZAR: ['valr'],
  BTCUSDT: ['binance'],
  ETHUSDT: ['binance'],
  XRPUSDT: ['binance'],
  SOLUSDT: ['binance'],
};
const VENUE_PAIRS = Object.values(LISTINGS).reduce((n, v) => n + v.length, 0);
/** ~30,000 trades a day over the 20 venue-pairs */
const BASE_PER_HOUR = 62.5;
const CYCLE_REPEATS = 5;
const CYCLE_MS = 5 * MIN;

const log = createLogger('silent');
const DAY_START = new Date(Math.floor(Date.now() / DAY) * DAY - 3 * DAY);
const DAY_END = new Date(DAY_START.getTime() + DAY);

interface CycleFigures {
  readonly trades: number;
  readonly insertMs: number[];
  readonly refreshMs: number[];
}

interface ScenarioFigures {
  readonly label: string;
  readonly multiplier: number;
  readonly trades: number;
  readonly insertMs: number;
  /** The same rows COPYed raw into an identical table (on a server), ms. */
  readonly copyMs: number | null;
  readonly tradesPerSecond: number;
  readonly statements: number;
  readonly dayRefreshMs: number;
  readonly candles5m: number;
  readonly candles5mExpected: number;
  readonly midday: CycleFigures;
  readonly midnight: CycleFigures;
  readonly tableRows: number;
}

async function count5m(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: string }[]>`SELECT count(*)::text AS n FROM candles WHERE interval = '5m'`;
  return Number(row!.n);
}

/** Trades for one cycle's touched range [end - 5 min, end), with ids that can't collide with the backlog's. */
function cycleTrades(end: Date, perHour: number, seed: number): TradeRow[] {
  return generateTrades({ seed, start: new Date(end.getTime() - CYCLE_MS), hours: CYCLE_MS / HOUR, listings: LISTINGS, tradesPerHour: perHour }).map((t) => ({
    ...t,
    tradeId: `c${seed}-${t.tradeId}`,
  }));
}

/**
 * Cycles ending at `end`, each inserting 5 minutes' worth of new trades and refreshing the range
 * they touched with now = end + 30 s, as the pipeline does after a cycle (pipeline/runner.ts).
 */
async function cycles(sql: Sql, end: Date, perHour: number, seedBase: number): Promise<CycleFigures> {
  const insertMs: number[] = [];
  const refreshMs: number[] = [];
  let trades = 0;
  const now = new Date(end.getTime() + 30_000);
  for (let i = 0; i < CYCLE_REPEATS; i++) {
    const rows = cycleTrades(end, perHour, seedBase + i);
    trades = rows.length;
    let t0 = performance.now();
    const stored = await insertTrades(sql, rows, { copy: ON_SERVER });
    insertMs.push(since(t0));
    check(stored.inserted === rows.length, `cycle inserted ${stored.inserted} of ${rows.length}`);
    t0 = performance.now();
    await refreshAggregates(sql, { now });
    refreshMs.push(since(t0));
  }
  return { trades, insertMs, refreshMs };
}

async function scenario(label: string, multiplier: number): Promise<ScenarioFigures> {
  const perHour = BASE_PER_HOUR * multiplier;
  const trades = generateTrades({ seed: 42 + multiplier, start: DAY_START, hours: 24, listings: LISTINGS, tradesPerHour: perHour });
  const db = await openTestDatabase();
  try {
    const { sql } = db;
    await sql`SELECT 1`; // the pool's first connection, outside the timing

    let t0 = performance.now();
    const stored = await insertTrades(sql, trades, { copy: ON_SERVER });
    const insertMs = since(t0);
    check(stored.inserted === trades.length, `${label}: inserted ${stored.inserted} of ${trades.length} trades`);
    const copyMs = ON_SERVER ? await rawCopyMs(sql, trades) : null;

    // Backfill case: the whole day in one refresh, `now` a minute after the day (every level closed).
    t0 = performance.now();
    await refreshAggregates(sql, { now: new Date(DAY_END.getTime() + MIN) });
    const dayRefreshMs = since(t0);
    const candles5m = await count5m(sql);
    const pairs = Object.keys(LISTINGS).length;
    const candles5mExpected = pairs * (DAY / (5 * MIN));
    check(candles5m > 0.95 * candles5mExpected && candles5m <= candles5mExpected, `${label}: ${candles5m} 5m candles, expected about ${candles5mExpected}`);

    // Live cycles: mid-day (only 5m buckets close) and at midnight (5m, 1h and 1d buckets close).
    const midday = await cycles(sql, new Date(DAY_START.getTime() + 14 * HOUR + 37 * MIN), perHour, 1000 * multiplier);
    const midnight = await cycles(sql, DAY_END, perHour, 2000 * multiplier);

    const [rows] = await sql<{ n: string }[]>`SELECT count(*)::text AS n FROM trades`;
    const tableRows = Number(rows!.n);
    check(tableRows === trades.length + CYCLE_REPEATS * (midday.trades + midnight.trades), `${label}: trades table holds ${tableRows} rows`);
    // statements the writer needed: on a server one COPY (the backlog is one batch of 2,000 rows or
    // more); on the embedded database its own batching (parameters under MAX_STATEMENT_BYTES each)
    const statements = ON_SERVER ? 1 : batchesUnder(trades, (t) => [t.time, t.exchange, t.pair, t.tradeId, t.price, t.amount, t.side]).length;
    return {
      label,
      multiplier,
      trades: trades.length,
      insertMs,
      copyMs,
      tradesPerSecond: trades.length / (insertMs / 1000),
      statements,
      dayRefreshMs,
      candles5m,
      candles5mExpected,
      midday,
      midnight,
      tableRows,
    };
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  header(`ingest: insertTrades into ${ON_SERVER ? 'a TimescaleDB server (BENCH_DATABASE_URL)' : 'the embedded TimescaleDB (PGlite, in memory)'} and refreshAggregates`, [
    `data: one UTC day (${DAY_START.toISOString().slice(0, 10)}) of seeded trades for ${VENUE_PAIRS} venue-pairs (${Object.keys(LISTINGS).length} pairs); 1x = ${BASE_PER_HOUR} trades/h per venue-pair`,
    ON_SERVER
      ? 'insert: one insertTrades call for the whole backlog, by COPY; then the same rows COPYed raw into an identical table'
      : `insert: one insertTrades call for the whole backlog; the writer splits it into INSERTs of at most ${MAX_STATEMENT_BYTES} parameter bytes`,
    `refresh: whole day once after the insert; then ${CYCLE_REPEATS} cycles each inserting 5 min of new trades and refreshing that range`,
    '  mid-day cycle: only 5m buckets close (1h/1d still open at `now`); midnight cycle: 5m, 1h and 1d buckets close',
    ON_SERVER ? 'the server runs on this machine, sharing its cores; times are wall clock' : 'the database runs in this process (WASM, single connection); times are wall clock',
  ]);

  const results: ScenarioFigures[] = [];
  for (const [label, multiplier] of [['1x', 1], ['10x', 10]] as const) {
    const t0 = performance.now();
    results.push(await scenario(label, multiplier));
    console.log(`  ${label} done in ${fmt(since(t0) / 1000)} s`);
  }
  console.log('');

  console.log(
    table([
      ['volume', 'trades', 'insert s', 'trades/s', 'statements', 'day refresh ms', '5m candles', 'cycle trades', 'cycle insert ms', 'mid-day refresh ms (p50/max)', 'midnight refresh ms (p50/max)'],
      ...results.map((r) => [
        r.label,
        r.trades,
        r.insertMs / 1000,
        r.tradesPerSecond,
        r.statements,
        r.dayRefreshMs,
        `${fmt(r.candles5m)} / ${fmt(r.candles5mExpected)}`,
        r.midday.trades,
        median([...r.midday.insertMs, ...r.midnight.insertMs]),
        `${fmt(median(r.midday.refreshMs))} / ${fmt(Math.max(...r.midday.refreshMs))}`,
        `${fmt(median(r.midnight.refreshMs))} / ${fmt(Math.max(...r.midnight.refreshMs))}`,
      ]),
    ]),
  );
  console.log('');
  console.log('5m candles: count(*) FROM candles WHERE interval = \'5m\' after the day refresh / pairs x 288 buckets');
  console.log('');
  if (ON_SERVER) {
    console.log(
      table([
        ['figure', 'value', 'limit', 'ratio'],
        ...results.map((r) => limitRow(`${r.label}: insertTrades / raw COPY into an identical table (throughput)`, r.copyMs! / r.insertMs, COPY_RATIO_LIMIT, true)),
      ]),
    );
    console.log('');
  }

  const json = {
    bench: 'ingest',
    database: ON_SERVER ? 'server' : 'embedded',
    at: new Date().toISOString(),
    machine: machine(),
    results: Object.fromEntries(
      results.map((r) => [
        r.label,
        {
          trades: r.trades,
          insert_ms: round(r.insertMs),
          raw_copy_ms: r.copyMs === null ? null : round(r.copyMs),
          trades_per_s: round(r.tradesPerSecond, 0),
          statements: r.statements,
          refresh_day_ms: round(r.dayRefreshMs),
          candles_5m: r.candles5m,
          cycle_trades: r.midday.trades,
          cycle_insert_ms_p50: round(median([...r.midday.insertMs, ...r.midnight.insertMs])),
          refresh_cycle_midday_ms_p50: round(median(r.midday.refreshMs)),
          refresh_cycle_midday_ms_max: round(Math.max(...r.midday.refreshMs)),
          refresh_cycle_midnight_ms_p50: round(median(r.midnight.refreshMs)),
          refresh_cycle_midnight_ms_max: round(Math.max(...r.midnight.refreshMs)),
        },
      ]),
    ),
  };
  console.log(JSON.stringify(json));
}

runBench(main);
