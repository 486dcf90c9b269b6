// Replication bundles: what freezing a certified bucket's inputs costs, and what they take to keep.
// One 5-minute BTCZAR bucket at a time, with N trades over three venues (prices and amounts with
// the venues' decimals), certified by the real Certifier (read inputs, exact computation, bundle,
// gzip, store with the certificate): the time per bucket and the bundle's bytes, raw and stored.
// From the stored bytes per trade and per bucket: the bytes per pair-day at the simulated market's
// volumes (sim/catalog.ts) and at the busiest volume named, and a year of certificates for the 19
// public pairs. On a server with BENCH_DATABASE_URL=postgres://... (a database created and dropped).
// Limit: a bucket at 5,800 trades (a Binance USDT book's real 5 minutes, far above any African book
// today) certified in 1 s, so a cycle's certificates never hold up the next cycle.
// Then a backlog, as a restart after an outage meets it: BACKLOG_HOURS of BTCZAR at
// BACKLOG_PER_BUCKET trades a bucket, certified in one call (batched, pipeline/certify/issue.ts)
// while READERS customers at once each ask for the newest certificate every few milliseconds, as
// the API would: the backlog's trades a second, and the longest a read waited (on the embedded
// database a batch's transaction holds its one connection).
import path from 'node:path';
import os from 'node:os';
import fs from 'node:fs';
import { loadConfig } from '../lib/config.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import { parametersInForce } from '../lib/methodology/parameters.js';
import { createSigner } from '../lib/signer.js';
import { softwareIdentity } from '../lib/software.js';
import { Certifier } from '../pipeline/certify/issue.js';
import { LISTINGS } from '../sim/catalog.js';
import { insertFxRates, insertTrades, type TradeRow } from '../pipeline/store.js';
import { openTestDatabase } from '../test/support/db.js';
import { rng } from '../test/support/market.js';
import { check, header, limitRow, machine, median, percentile, round, runBench, since, table } from './support.js';
import type { Sql } from '../lib/db/connect.js';

const ON_SERVER = Boolean(process.env.BENCH_DATABASE_URL);

const BUCKET_MS = 300_000;
const SIZES = [10, 100, 1_000, 5_800];
const REPEATS = 5;
const LIMIT_MS = 1_000;
const PUBLIC_PAIRS = 19;
/** The busiest volume considered: a book trading 20,000 times a day (illustrative, stated as such). */
const BUSY_TRADES_PER_DAY = 20_000;
const BACKLOG_HOURS = 8;
const BACKLOG_PER_BUCKET = 500;
/** A backlog's trades certified a second, at least: a day of the busy book above in under 3 s. */
const BACKLOG_TRADES_PER_S = 7_000;
/** The longest an API read may wait behind a backlog being certified. */
const READ_WAIT_LIMIT_MS = 500;
/** Customers reading at once while the backlog is certified. */
const READERS = 4;

/** A bucket's n BTCZAR trades over three venues, and one BTCUSDT trade: the leg its synthetic check reads. */
function bucketTrades(bucket: number, n: number, seed: number): TradeRow[] {
  const random = rng(seed);
  const venues = ['luno', 'valr', 'binance'];
  const leg: TradeRow = { time: new Date(bucket + 1000), exchange: 'binance', pair: 'BTCUSDT', tradeId: `u${bucket}`, price: '93456.78', amount: '0.5', side: 'buy' };
  return [leg, ...Array.from({ length: n }, (_, i): TradeRow => ({
    time: new Date(bucket + Math.floor((i * BUCKET_MS) / n) + (i % 7)),
    exchange: venues[i % 3]!,
    pair: 'BTCZAR',
    tradeId: `${seed}-${i}`,
    price: (1_700_000 * (1 + (random() - 0.5) * 0.004)).toFixed(2),
    amount: (0.00001 + random() * 0.3).toFixed(8),
    side: random() < 0.5 ? 'buy' : 'sell',
  }))];
}

async function main(): Promise<void> {
  header('bundles: freezing a certified bucket, and keeping it', [
    `database: ${ON_SERVER ? 'TimescaleDB server (BENCH_DATABASE_URL)' : 'embedded TimescaleDB'}`,
    `each size: ${REPEATS} buckets of BTCZAR over luno, valr, binance, each certified by the Certifier (inputs read, exact rate, bundle, gzip, stored)`,
    `then a backlog: ${BACKLOG_HOURS} hours at ${BACKLOG_PER_BUCKET} trades a bucket, certified in one call while ${READERS} customers at once ask for the newest certificate every 5 ms`,
  ]);
  const db = await openTestDatabase();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-bundles-'));
  try {
    const config = loadConfig({ AFRATES_VAR_DIR: dir });
    const certifier = new Certifier(db.sql, {
      signer: createSigner({ keyDir: path.join(dir, 'keys') }),
      issuerUrl: config.publicUrl,
      market: 'real',
      software: softwareIdentity(),
      parameters: parametersInForce(config.settleAfterSeconds),
    });
    const start = Date.UTC(2026, 10, 2, 0, 0, 0);
    await insertFxRates(db.sql, [{ time: new Date(start - 3_600_000), currency: 'ZAR', unitsPerUsd: 18.2, source: 'coinbase', sourceUpdatedAt: new Date(start - 3_600_000) }]);
    for (const venue of ['luno', 'valr', 'binance']) await db.sql`INSERT INTO venue_markets (exchange, pair, symbol) VALUES (${venue}, 'BTCZAR', 'BTC/ZAR')`;
    const rows: { n: number; ms: number; raw: number; stored: number }[] = [];
    let bucket = start;
    for (const n of SIZES) {
      for (let r = 0; r < REPEATS; r++, bucket += BUCKET_MS) {
        await insertTrades(db.sql, bucketTrades(bucket, n, n * 100 + r));
        await refreshAggregates(db.sql);
        const t0 = performance.now();
        const issued = await certifier.issue([{ pair: 'BTCZAR', from: new Date(bucket), to: new Date(bucket + BUCKET_MS) }]);
        const ms = since(t0);
        check(issued === 1, `a bucket of ${n} trades was not certified`);
        const [b] = await db.sql<{ bytes: number; stored: number }[]>`
          SELECT b.bytes, sum(length(p.gzip))::int AS stored FROM bundles b JOIN bundle_parts p USING (id)
          WHERE b.id = (SELECT max(id) FROM bundles) GROUP BY b.bytes`;
        rows.push({ n, ms, raw: b!.bytes, stored: b!.stored });
      }
    }
    // the backlog's hours begin at the first whole hour an hour past the buckets above
    const backlog = await certifyBacklog(db.sql, certifier, (Math.floor(bucket / 3_600_000) + 2) * 3_600_000);
    const at = (n: number) => rows.filter((r) => r.n === n);
    // stored bytes = overhead + per trade x trades: least squares over every bucket
    const mx = rows.reduce((s, r) => s + r.n, 0) / rows.length;
    const my = rows.reduce((s, r) => s + r.stored, 0) / rows.length;
    const perTrade = rows.reduce((s, r) => s + (r.n - mx) * (r.stored - my), 0) / rows.reduce((s, r) => s + (r.n - mx) ** 2, 0);
    const overhead = my - perTrade * mx;
    const perPairDay = (tradesPerDay: number) => overhead * 288 + perTrade * tradesPerDay;
    // the simulated market's certified pairs: trades a day each, over every venue listing them
    const simPerPair = new Map<string, number>();
    for (const listings of Object.values(LISTINGS)) {
      for (const l of listings) if (!l.pair.endsWith('USDT')) simPerPair.set(l.pair, (simPerPair.get(l.pair) ?? 0) + l.perMinute * 1440);
    }
    const simYear = [...simPerPair.values()].reduce((s, t) => s + perPairDay(t) * 365, 0);
    const busyYear = PUBLIC_PAIRS * perPairDay(BUSY_TRADES_PER_DAY) * 365;
    console.log(
      table([
        ['figure', 'value', 'limit', 'ratio'],
        ...SIZES.map((n) => [`certify one bucket of ${n.toLocaleString('en-US')} trades, median ms`, median(at(n).map((r) => r.ms)), '-', '-'] as [string, number, string, string]),
        limitRow('certify one bucket of 5,800 trades, slowest ms', Math.max(...at(5_800).map((r) => r.ms)), LIMIT_MS),
        ...SIZES.map((n) => [`bundle of ${n.toLocaleString('en-US')} trades, KB raw / stored (gzip)`, `${round(median(at(n).map((r) => r.raw)) / 1024, 1)} / ${round(median(at(n).map((r) => r.stored)) / 1024, 1)}`, '-', '-'] as [string, string, string, string]),
        ['stored bytes per trade / per bucket (fit)', `${round(perTrade, 1)} / ${Math.round(overhead)}`, '-', '-'],
        ['per pair-day, simulated BTCZAR volume, KB', round(perPairDay(simPerPair.get('BTCZAR')!) / 1024, 1), '-', '-'],
        [`per pair-day at ${BUSY_TRADES_PER_DAY.toLocaleString('en-US')} trades, KB`, round(perPairDay(BUSY_TRADES_PER_DAY) / 1024, 1), '-', '-'],
        [`a year, the simulated market's ${simPerPair.size} traded pairs, MB`, round(simYear / 2 ** 20, 1), '-', '-'],
        [`a year, ${PUBLIC_PAIRS} pairs at ${BUSY_TRADES_PER_DAY.toLocaleString('en-US')} trades a day each, MB`, round(busyYear / 2 ** 20, 1), '-', '-'],
        [`backlog of ${backlog.buckets} buckets (${backlog.trades.toLocaleString('en-US')} trades), s`, round(backlog.ms / 1000), '-', '-'],
        limitRow('backlog, trades certified a second (at least)', backlog.tradesPerS, BACKLOG_TRADES_PER_S, true),
        ['a read during the backlog, p50 / p99 ms', `${backlog.readWaitMs.p50} / ${backlog.readWaitMs.p99}`, '-', '-'],
        limitRow(`a read during the backlog, longest of ${backlog.readWaitMs.reads}, ms`, backlog.readWaitMs.max, READ_WAIT_LIMIT_MS),
      ]),
    );
    console.log('');
    console.log(
      JSON.stringify({
        bench: 'bundles',
        at: new Date().toISOString(),
        machine: machine(),
        database: ON_SERVER ? 'server' : 'embedded',
        certify_ms: Object.fromEntries(SIZES.map((n) => [n, round(median(at(n).map((r) => r.ms)))])),
        stored_bytes: Object.fromEntries(SIZES.map((n) => [n, median(at(n).map((r) => r.stored))])),
        per_trade_bytes: round(perTrade, 1),
        per_bucket_bytes: Math.round(overhead),
        year_mb: { simulated: round(simYear / 2 ** 20, 1), busy: round(busyYear / 2 ** 20, 1) },
        backlog: { buckets: backlog.buckets, trades: backlog.trades, ms: Math.round(backlog.ms), trades_per_s: backlog.tradesPerS, readers: READERS, read_wait_ms: backlog.readWaitMs },
        limits: { certify_ms_at_5800: LIMIT_MS, backlog_trades_per_s: BACKLOG_TRADES_PER_S, read_wait_ms: READ_WAIT_LIMIT_MS },
      }),
    );
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Backlog {
  buckets: number;
  trades: number;
  ms: number;
  tradesPerS: number;
  readWaitMs: { p50: number; p99: number; max: number; reads: number };
}

/** Certifies BACKLOG_HOURS of BTCZAR from `start` in one call, with READERS customers reading beside it. */
async function certifyBacklog(sql: Sql, certifier: Certifier, start: number): Promise<Backlog> {
  const buckets = BACKLOG_HOURS * 12;
  await insertTrades(sql, Array.from({ length: buckets }, (_, i) => bucketTrades(start + i * BUCKET_MS, BACKLOG_PER_BUCKET, 900_000 + i)).flat());
  await refreshAggregates(sql);
  const waits: number[] = [];
  let certifying = true;
  const reader = async () => {
    while (certifying) {
      const t0 = performance.now();
      await sql`SELECT bucket, rate, body FROM certificates WHERE pair = 'BTCZAR' ORDER BY bucket DESC LIMIT 1`;
      waits.push(since(t0));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const readers = Promise.all(Array.from({ length: READERS }, reader));
  const t0 = performance.now();
  const issued = await certifier.issue([{ pair: 'BTCZAR', from: new Date(start), to: new Date(start + buckets * BUCKET_MS) }]).finally(() => {
    certifying = false;
  });
  const ms = since(t0);
  await readers;
  check(issued === buckets, `the backlog certified ${issued} of ${buckets} buckets`);
  check(waits.length > 0, 'no read ran beside the backlog');
  const trades = buckets * BACKLOG_PER_BUCKET;
  const readWaitMs = { p50: round(percentile(waits, 50)), p99: round(percentile(waits, 99)), max: round(Math.max(...waits)), reads: waits.length };
  return { buckets, trades, ms, tradesPerS: Math.round((trades * 1000) / ms), readWaitMs };
}

runBench(main);
