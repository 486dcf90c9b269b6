// How long a migration that rebuilds the 5-minute aggregate (and the 15m, 1h and 1d ones on it)
// takes at real volume: Binance's four USDT legs, about 1.66 million trades a day (docs/decisions.md,
// SIM_VOLUME=real), REBUILD_DAYS of them stored and materialised, every bucket settled (so the
// comparison with the live candles reads them all), then `migrate` with 20_candles_5m.sql given one
// more column (a copy of sql/: nothing published changes, so no consent is needed). The time is the
// whole migration: the build beside the live aggregates, the catch-up, the comparison, the swap.
// Limit: a day of real volume rebuilt in under 60 s (docs/aggregates.md quotes the figure).
//
// Run: node_modules/.bin/tsx bench/rebuild.bench.ts
//   BENCH_DATABASE_URL=postgres://...    a server to create a scratch database on (default: the
//                                        embedded database in memory)
//   REBUILD_DAYS=2                       days of real volume (default 2 on a server, 1 embedded)
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { createPool } from '../lib/db/pool.js';
import { startEmbedded } from '../lib/db/embedded/index.js';
import { migrate, SQL_DIR } from '../lib/db/migrate.js';
import { refreshAggregates } from '../lib/db/refresh.js';
import { createLogger, type Logger } from '../lib/log.js';
import { check, header, limitRow, round, runBench, since, table } from './support.js';

const serverUrl = process.env.BENCH_DATABASE_URL;
const DAYS = Number(process.env.REBUILD_DAYS ?? (serverUrl ? 2 : 1));
const TRADES_PER_DAY = 1_660_000;
const LEGS = { BTCUSDT: 90_000, ETHUSDT: 3_200, SOLUSDT: 180, XRPUSDT: 2.2 } as const;
const LIMIT_S_PER_DAY = 60;

/** A scratch database and how to get rid of it. */
async function scratch(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!serverUrl) {
    const embedded = await startEmbedded(undefined);
    return { url: embedded.url, drop: () => embedded.stop() };
  }
  const name = `afrates_rebuild_${crypto.randomBytes(4).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: async () => { await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.end(); } };
}

runBench(async () => {
  header('aggregate rebuild at real volume', [`${DAYS} day(s) of ${TRADES_PER_DAY.toLocaleString('en')} trades on ${serverUrl ? 'a server' : 'the embedded database'}`]);
  const db = await scratch();
  const sqlDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-rebuild-sql-'));
  try {
    fs.cpSync(SQL_DIR, sqlDir, { recursive: true });
    const quiet = createLogger('silent');
    await migrate(db.url, quiet);
    const sql = createPool(db.url, 1);
    const start = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - DAYS * 86_400_000);
    let t0 = performance.now();
    const perLeg = Math.floor(TRADES_PER_DAY / Object.keys(LEGS).length);
    for (let d = 0; d < DAYS; d++) {
      for (const [pair, level] of Object.entries(LEGS)) {
        // one trade every 86,400 / perLeg seconds, the price wandering 1 % around its level
        await sql`SET statement_timeout = 0`;
        await sql`
          INSERT INTO trades (time, exchange, pair, trade_id, price, amount, side)
          SELECT ${start}::timestamptz + ${d} * INTERVAL '1 day' + i * (INTERVAL '1 day' / ${perLeg}), 'binance', ${pair}, ${`${d}-`} || i,
                 round((${level} * (1 + 0.01 * sin(i / 5000.0)) * (1 + (random() - 0.5) / 1000))::numeric, 8), round((0.001 + random())::numeric, 8),
                 CASE WHEN random() < 0.5 THEN 'buy' ELSE 'sell' END
          FROM generate_series(0, ${perLeg - 1}) AS i`;
      }
      process.stdout.write(`  day ${d + 1} of ${DAYS} stored (${round(since(t0) / 1000, 1)} s)\n`);
    }
    await sql`INSERT INTO refresh_requests (from_time) VALUES (${start})`;
    t0 = performance.now();
    await refreshAggregates(sql);
    const materialiseS = since(t0) / 1000;
    await sql`INSERT INTO pair_settlement (pair, settled_through) SELECT p, now() FROM unnest(${Object.keys(LEGS)}::text[]) AS p`;
    const [counts] = await sql<{ trades: number; candles: number }[]>`
      SELECT (SELECT count(*)::int FROM trades) AS trades, (SELECT count(*)::int FROM candles_5m) AS candles`;
    await sql.end();

    const file = path.join(sqlDir, 'aggregates', '20_candles_5m.sql');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('count(*)             AS trades,', "count(*)             AS trades,\n       sum(amount) FILTER (WHERE side = 'buy') AS buy_volume,"));
    // the migration's own lines: its progress printed as it goes, each aggregate's duration kept
    const steps: { aggregate: string; duration_s: number }[] = [];
    const said = (fields: Record<string, unknown>, msg: string) => {
      if (typeof fields.aggregate === 'string' && typeof fields.duration_s === 'number') steps.push({ aggregate: fields.aggregate, duration_s: fields.duration_s });
      process.stdout.write(`  ${msg}\n`);
    };
    const log = { info: said, warn: said, error: said, debug() {} } as unknown as Logger;
    t0 = performance.now();
    const { applied } = await migrate(db.url, log, sqlDir, { progressMs: 10_000 });
    const rebuildS = since(t0) / 1000;
    check(applied.includes('aggregates/20_candles_5m.sql'), `the rebuild applied ${applied.join(', ')}`);

    console.log(table([
      ['figure', 'value'],
      ['trades', counts!.trades.toLocaleString('en')],
      ['5-minute candles', counts!.candles.toLocaleString('en')],
      ['materialising them first (s)', round(materialiseS, 1)],
      ...steps.map((s) => [`rebuilding ${s.aggregate} beside the live one (s)`, round(s.duration_s, 1)] as [string, number]),
      ['whole migration (s)', round(rebuildS, 1)],
    ]));
    console.log('');
    console.log(table([['limit', 'value', 'limit', 'verdict'], limitRow('rebuild, s per day of real volume', round(rebuildS / DAYS, 1), LIMIT_S_PER_DAY)]));
    console.log('');
    console.log(JSON.stringify({
      bench: 'rebuild',
      database: serverUrl ? 'server' : 'embedded',
      days: DAYS,
      trades: counts!.trades,
      materialiseS: round(materialiseS, 1),
      aggregatesS: Object.fromEntries(steps.map((s) => [s.aggregate, round(s.duration_s, 1)])),
      rebuildS: round(rebuildS, 1),
      rebuildSPerDay: round(rebuildS / DAYS, 1),
      limitSPerDay: LIMIT_S_PER_DAY,
    }));
  } finally {
    await db.drop();
    fs.rmSync(sqlDir, { recursive: true, force: true });
  }
});
