// Migrations: applied once, a failing one leaves the database as it was, and a changed aggregate
// file rebuilds that aggregate (and what depends on it) from the raw trades.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../../lib/db/connect.js';
import { migrate, SQL_DIR } from '../../../lib/db/migrate.js';
import { refreshAggregates } from '../../../lib/db/refresh.js';
import { freshDatabaseUrl, testLog } from '../../support/db.js';

let database: { url: string; drop(): Promise<void> };
let sqlDir: string;

async function query<T>(fn: (sql: ReturnType<typeof createPool>) => Promise<T>): Promise<T> {
  const sql = createPool(database.url, 1);
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

beforeAll(async () => {
  sqlDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-sql-'));
  fs.cpSync(SQL_DIR, sqlDir, { recursive: true });
  database = await freshDatabaseUrl(); // embedded, or a new database on TEST_DATABASE_URL's server
});

afterAll(async () => {
  await database?.drop();
  fs.rmSync(sqlDir, { recursive: true, force: true });
});

describe('migrate', () => {
  it('applies everything once, then nothing, saying which step it is on while it works', async () => {
    // what an operator sees of a long migration: a line every few seconds (here every 100 ms) naming its step
    const said: string[] = [];
    const log = { ...testLog, info: (_: unknown, msg?: string) => void said.push(String(msg)), debug() {}, warn() {}, error() {} } as unknown as typeof testLog;
    const first = await migrate(database.url, log, sqlDir, { progressMs: 100 });
    expect(first.applied).toContain('aggregates/20_candles_5m.sql');
    expect(first.applied.some((f) => f.startsWith('migrations/'))).toBe(true);
    const progress = said.filter((m) => m.startsWith('migrating the database: '));
    expect(progress.some((m) => m.includes('run-once migrations')), said.join('\n')).toBe(true);
    expect(progress.some((m) => /SQL object \d+ of \d+: (aggregates|functions|views)\//.test(m)), said.join('\n')).toBe(true);
    const lines = said.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(said.length, 'no line once it has finished').toBe(lines);
    const second = await migrate(database.url, testLog, sqlDir);
    expect(second.applied).toEqual([]);
  });

  it('rolls a failing migration back whole', async () => {
    const bad = path.join(sqlDir, 'migrations', '20991231000000000_broken.sql');
    fs.writeFileSync(bad, '-- Up Migration\nCREATE TABLE half_done (id int);\nSELECT no_such_function();\n-- Down Migration\n');
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/no_such_function/);
    const tables = await query((sql) => sql`SELECT 1 FROM pg_tables WHERE tablename = 'half_done'`);
    expect(tables).toHaveLength(0);
    const recorded = await query((sql) => sql`SELECT 1 FROM pgmigrations WHERE name LIKE '%broken'`);
    expect(recorded).toHaveLength(0);
    fs.rmSync(bad);
  });

  it('rebuilds a changed aggregate and its dependants from the raw trades', async () => {
    await query(async (sql) => {
      await sql`INSERT INTO trades (time, exchange, pair, trade_id, price, amount) VALUES
        ('2026-01-01T10:00:00Z', 'luno', 'BTCNGN', 'a', 100, 1), ('2026-01-01T10:01:00Z', 'luno', 'BTCNGN', 'b', 200, 3)`;
    });
    // A data engineer edits one file: 5-minute candles now also carry the buy volume.
    const file = path.join(sqlDir, 'aggregates', '20_candles_5m.sql');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(
      'count(*)             AS trades,',
      "count(*)             AS trades,\n       sum(amount) FILTER (WHERE side = 'buy') AS buy_volume,",
    ));
    const { applied } = await migrate(database.url, testLog, sqlDir);
    expect(applied[0]).toBe('aggregates/20_candles_5m.sql');
    expect(applied).toContain('aggregates/30_candles_1h.sql');
    expect(applied).toContain('views/20_candles.sql');
    expect(applied).not.toContain('aggregates/10_candles_5m_by_exchange.sql');
    const rows = await query((sql) => sql`SELECT vwap::float8 AS vwap FROM candles WHERE pair = 'BTCNGN' AND interval = '1h'`);
    expect(rows).toEqual([{ vwap: 175 }]);
    const materialized = await query((sql) => sql`
      SELECT count(*)::int AS n FROM _timescaledb_catalog.continuous_agg ca
      WHERE ca.user_view_name = 'candles_5m'`);
    expect(materialized[0]!.n).toBe(1);
  });

  // An upgrade that stops part-way (the process killed, or a file that fails) must be finished by
  // the next run. Each file commits on its own, so the first file's CASCADE has already dropped
  // objects of later, unchanged files: a rerun that compared checksums alone found everything "up
  // to date" with venue_spread_5m gone (5m pages failing for good), and the re-created
  // candles_5m_by_exchange kept its old frontier, so its past was never materialised again.
  it('finishes an aggregate upgrade that stopped part-way on the next run', async () => {
    // the pipeline's last pass materialised every aggregate up to 11:00, after the trades' bucket
    // (and a trade came at noon)
    await query(async (sql) => {
      await sql`UPDATE aggregate_frontier SET refreshed_to = '2026-01-01T11:00:00Z'`;
      await sql`INSERT INTO trades (time, exchange, pair, trade_id, price, amount) VALUES
        ('2026-01-01T12:00:00Z', 'luno', 'BTCNGN', 'c', 300, 1)`;
    });
    const first = path.join(sqlDir, 'aggregates', '10_candles_5m_by_exchange.sql');
    fs.appendFileSync(first, '\n-- edited: the first aggregate changes\n');
    const broken = path.join(sqlDir, 'aggregates', '15_broken.sql');
    fs.writeFileSync(broken, 'SELECT no_such_function();\n');
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/no_such_function/);
    fs.rmSync(broken); // the operator removes the bad file and runs again

    const { applied } = await migrate(database.url, testLog, sqlDir);
    expect(applied).toContain('aggregates/20_candles_5m.sql');
    expect(applied).toContain('aggregates/50_venue_spread_5m.sql');
    await query((sql) => refreshAggregates(sql)); // the pipeline's next pass
    const byVenue = await query((sql) => sql`
      SELECT (pv / volume)::float8 AS vwap FROM candles_5m_by_exchange
      WHERE pair = 'BTCNGN' AND exchange = 'luno' AND bucket = '2026-01-01T10:00:00Z'`);
    expect(byVenue).toEqual([{ vwap: 175 }]);
    const spread = await query((sql) => sql`
      SELECT venues::int FROM venue_spread_5m WHERE pair = 'BTCNGN' AND bucket = '2026-01-01T10:00:00Z'`);
    expect(spread).toEqual([{ venues: 1 }]);
    expect((await migrate(database.url, testLog, sqlDir)).applied).toEqual([]);
  });

  // A managed database often cancels long statements for every session (ALTER DATABASE ... SET
  // statement_timeout). Rebuilding an aggregate from a day of real volume takes seconds: the
  // migration must still run to the end. Only a server has per-database settings.
  it.runIf(Boolean(process.env.TEST_DATABASE_URL))('runs to the end on a database that cancels statements after 300 ms', async () => {
    const name = new URL(database.url).pathname.slice(1);
    const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`ALTER DATABASE ${name} SET statement_timeout = '300ms'`);
    } finally {
      await admin.end();
    }
    await query(async (sql) => {
      await sql`SET statement_timeout = 0`;
      // half a day of one busy pair: 432,000 trades, one every 100 ms
      await sql`INSERT INTO trades (time, exchange, pair, trade_id, price, amount)
        SELECT '2026-01-02T00:00:00Z'::timestamptz + i * INTERVAL '100 milliseconds', 'luno', 'BTCNGN', 'g' || i, 100 + i % 100, 1
        FROM generate_series(0, 431999) AS i`;
      const [cut] = await sql<{ ms: string }[]>`SELECT current_setting('statement_timeout') AS ms`;
      expect(cut!.ms).toBe('0');
    });
    const file = path.join(sqlDir, 'aggregates', '20_candles_5m.sql');
    fs.appendFileSync(file, '\n-- edited again\n');
    const { applied } = await migrate(database.url, testLog, sqlDir);
    expect(applied[0]).toBe('aggregates/20_candles_5m.sql');
    const [day] = await query((sql) => sql<{ trades: string }[]>`
      SELECT trades::text FROM candles WHERE pair = 'BTCNGN' AND interval = '1d' AND bucket = '2026-01-02T00:00:00Z'`);
    expect(day?.trades).toBe('432000');
  });
});
