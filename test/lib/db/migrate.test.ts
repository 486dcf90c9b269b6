// Migrations: applied once, a failing one leaves the database as it was, and a changed aggregate
// file rebuilds that aggregate (and what depends on it) from the raw trades, beside the live one:
// readers see the old one, complete, until the new one is swapped in. A change to settled candles
// needs the engineer's consent and is then restated; a comment is no change; a file names its
// aggregate; an error names its file and line. (Edits go to a copy of sql/, never the real files.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../../lib/db/connect.js';
import { migrate, SQL_DIR } from '../../../lib/db/migrate.js';
import { refreshAggregates } from '../../../lib/db/refresh.js';
import type { Logger } from '../../../lib/log.js';
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

/** A logger that keeps each line's message (and its fields) for the test to read. */
function listening(): { log: Logger; said: { msg: string; fields: Record<string, unknown> }[] } {
  const said: { msg: string; fields: Record<string, unknown> }[] = [];
  const keep = (fields: unknown, msg?: string) => void said.push(typeof fields === 'string' ? { msg: fields, fields: {} } : { msg: String(msg), fields: fields as Record<string, unknown> });
  return { said, log: { ...testLog, info: keep, warn: keep, error: keep, debug() {} } as unknown as Logger };
}

function edit(file: string, change: (text: string) => string): void {
  const at = path.join(sqlDir, file);
  const before = fs.readFileSync(at, 'utf8');
  const after = change(before);
  expect(after, `the edit of ${file} changed nothing`).not.toBe(before);
  fs.writeFileSync(at, after);
}

/** Every candle of every interval, as it is served (the candles view), in order. */
const allCandles = () =>
  query((sql) => sql`SELECT interval, pair, bucket, open::text, high::text, low::text, close::text, pv::text, volume::text, trades::text FROM candles ORDER BY interval, pair, bucket`);

afterAll(async () => {
  await database?.drop();
  fs.rmSync(sqlDir, { recursive: true, force: true });
});

describe('migrate', () => {
  it('applies everything once, then nothing, saying which step it is on while it works', async () => {
    // what an operator sees of a long migration: a line every few seconds (here every 100 ms) naming its step
    const { log, said } = listening();
    const first = await migrate(database.url, log, sqlDir, { progressMs: 100 });
    expect(first.applied).toContain('aggregates/20_candles_5m.sql');
    expect(first.applied.some((f) => f.startsWith('migrations/'))).toBe(true);
    const progress = said.map((l) => l.msg).filter((m) => m.startsWith('migrating the database: '));
    const all = said.map((l) => l.msg).join('\n');
    expect(progress.some((m) => m.includes('run-once migrations')), all).toBe(true);
    // a later step, whichever a tick fell in (a new database's aggregates take a moment only)
    expect(progress.some((m) => /SQL objects|beside the live one|rebuilt aggregates/.test(m)), all).toBe(true);
    const lines = said.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(said.length, 'no line once it has finished').toBe(lines);
    const second = await migrate(database.url, testLog, sqlDir);
    expect(second.applied).toEqual([]);
  });

  it('rolls a failing migration back whole, naming its file and line', async () => {
    const bad = path.join(sqlDir, 'migrations', '20991231000000000_broken.sql');
    fs.writeFileSync(bad, '-- Up Migration\nCREATE TABLE half_done (id int);\nSELECT no_such_function();\n-- Down Migration\n');
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/^migrations\/20991231000000000_broken\.sql:3: .*no_such_function/);
    const tables = await query((sql) => sql`SELECT 1 FROM pg_tables WHERE tablename = 'half_done'`);
    expect(tables).toHaveLength(0);
    const recorded = await query((sql) => sql`SELECT 1 FROM pgmigrations WHERE name LIKE '%broken'`);
    expect(recorded).toHaveLength(0);
    fs.rmSync(bad);
  });

  it('rebuilds a changed aggregate and its dependants beside the live ones, which are served whole until the swap', async () => {
    await query(async (sql) => {
      await sql`INSERT INTO trades (time, exchange, pair, trade_id, price, amount) VALUES
        ('2026-01-01T10:00:00Z', 'luno', 'BTCNGN', 'a', 100, 1), ('2026-01-01T10:01:00Z', 'luno', 'BTCNGN', 'b', 200, 3)`;
      await refreshAggregates(sql);
    });
    const before = await allCandles();
    expect(before.length).toBeGreaterThan(0);
    // A data engineer edits one file: 5-minute candles now also carry the buy volume.
    edit('aggregates/20_candles_5m.sql', (t) => t.replace('count(*)             AS trades,', "count(*)             AS trades,\n       sum(amount) FILTER (WHERE side = 'buy') AS buy_volume,"));
    const { log, said } = listening();
    let servedMeanwhile: unknown = null;
    const { applied } = await migrate(database.url, log, sqlDir, {
      // the new ones are complete beside the live ones; what a reader gets now is the old candles, all of them
      beforeSwap: async (sql) => {
        servedMeanwhile = await sql`SELECT interval, pair, bucket, open::text, high::text, low::text, close::text, pv::text, volume::text, trades::text FROM candles ORDER BY interval, pair, bucket`;
        const [shadow] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM afrates_next.candles_5m`;
        expect(shadow!.n).toBe(before.filter((c) => c.interval === '5m').length);
      },
    });
    expect(servedMeanwhile).toEqual(before);
    expect(applied[0]).toBe('aggregates/20_candles_5m.sql');
    expect(applied).toContain('aggregates/30_candles_1h.sql');
    expect(applied).toContain('views/20_candles.sql');
    expect(applied).not.toContain('aggregates/10_candles_5m_by_exchange.sql');
    expect(await allCandles()).toEqual(before);
    const rows = await query((sql) => sql`SELECT vwap::float8 AS vwap FROM candles WHERE pair = 'BTCNGN' AND interval = '1h'`);
    expect(rows).toEqual([{ vwap: 175 }]);
    const [buy] = await query((sql) => sql`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'candles_5m' AND column_name = 'buy_volume'`);
    expect(buy!.n).toBe(1);
    const schemas = await query((sql) => sql`SELECT 1 FROM pg_namespace WHERE nspname = 'afrates_next'`);
    expect(schemas, 'the build schema is gone once swapped in').toHaveLength(0);
    // its progress, and how long it took
    const done = said.find((l) => l.msg.startsWith('aggregates rebuilt and swapped in: candles_5m'));
    expect(done?.fields.duration_s, said.map((l) => l.msg).join('\n')).toEqual(expect.any(Number));
    expect(said.some((l) => l.msg.startsWith('rebuilt candles_5m beside the live one'))).toBe(true);
    // the next pass of the pipeline starts from the rebuild's frontier, and loses nothing
    await query((sql) => refreshAggregates(sql));
    expect(await allCandles()).toEqual(before);
  });

  it('changes nothing when a rebuild fails, names the file and line, and builds again on the next run', async () => {
    const before = await allCandles();
    edit('aggregates/10_candles_5m_by_exchange.sql', (t) => t.replace('count(*)             AS trades,', 'count(*)             AS trades,\n       count(DISTINCT side) AS sides,'));
    const broken = path.join(sqlDir, 'aggregates', '15_broken.sql');
    fs.writeFileSync(broken, '-- aggregate: broken\nCREATE MATERIALIZED VIEW broken WITH (timescaledb.continuous) AS\nSELECT time_bucket(INTERVAL \'5 minutes\', time) AS bucket, no_such_function(price) FROM trades GROUP BY 1 WITH NO DATA;\n');
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/^aggregates\/15_broken\.sql:3: .*no_such_function/);
    const [recorded] = await query((sql) => sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sql_objects WHERE file = 'aggregates/15_broken.sql'`);
    expect(recorded!.n).toBe(0);
    expect(await query((sql) => sql`SELECT 1 FROM pg_namespace WHERE nspname = 'afrates_next'`)).toHaveLength(0);
    expect(await allCandles()).toEqual(before);
    fs.rmSync(broken); // the operator removes the bad file and runs again

    const { applied } = await migrate(database.url, testLog, sqlDir);
    expect(applied).toContain('aggregates/10_candles_5m_by_exchange.sql');
    expect(applied).toContain('aggregates/50_venue_spread_5m.sql');
    expect(applied).not.toContain('aggregates/20_candles_5m.sql');
    const spread = await query((sql) => sql`SELECT venues::int FROM venue_spread_5m WHERE pair = 'BTCNGN' AND bucket = '2026-01-01T10:00:00Z'`);
    expect(spread).toEqual([{ venues: 1 }]);
    expect((await migrate(database.url, testLog, sqlDir)).applied).toEqual([]);
  });

  it('names the file and line of a failing function file, and applies none of it', async () => {
    const bad = path.join(sqlDir, 'functions', '99_bad.sql');
    fs.writeFileSync(bad, '-- a function with a typo\nCREATE FUNCTION half_done() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\nSELEC 1;\n');
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/^functions\/99_bad\.sql:3: syntax error/);
    expect(await query((sql) => sql`SELECT 1 FROM pg_proc WHERE proname = 'half_done'`)).toHaveLength(0);
    fs.rmSync(bad);
  });

  it('refuses an aggregate file whose header is missing or names another aggregate than it creates', async () => {
    const fifteen = path.join(sqlDir, 'aggregates', '60_fifteen.sql');
    const create = fs.readFileSync(path.join(sqlDir, 'aggregates', '30_candles_1h.sql'), 'utf8').split('\n').slice(1).join('\n').replaceAll('candles_1h', 'candles_2h').replaceAll("'1 hour'", "'2 hours'");
    fs.writeFileSync(fifteen, `-- aggregate: fifteen\n${create}`);
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/60_fifteen\.sql: its header names the aggregate fifteen, but it creates candles_2h/);
    fs.writeFileSync(fifteen, create);
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/60_fifteen\.sql: the first line must name the aggregate/);
    fs.rmSync(fifteen);
    expect(await query((sql) => sql`SELECT 1 FROM pg_class WHERE relname = 'candles_2h' AND relnamespace = 'public'::regnamespace`)).toHaveLength(0);
  });

  it('rebuilds nothing and loses nothing for an edit of comments and layout', async () => {
    const before = await allCandles();
    edit('aggregates/20_candles_5m.sql', (t) => t.replace('-- Source: trades', '-- Where it comes from: trades').replace('AS bucket,', 'AS bucket,   ').replace('FROM trades', 'FROM   trades -- raw'));
    expect((await migrate(database.url, testLog, sqlDir)).applied).toEqual([]);
    await query((sql) => refreshAggregates(sql)); // and a cycle
    expect(await allCandles()).toEqual(before);
    // a checksum recorded of another text (a release that counted comments): the aggregate the
    // database reads is the same, so nothing is rebuilt either
    await query((sql) => sql`UPDATE sql_objects SET checksum = 'of another text' WHERE file = 'aggregates/20_candles_5m.sql'`);
    const { log, said } = listening();
    expect((await migrate(database.url, log, sqlDir)).applied).toEqual([]);
    expect(said.some((l) => l.msg.startsWith('rebuilt '))).toBe(false);
    expect(await allCandles()).toEqual(before);
  });

  it('refuses a change to settled candles without consent, with a preview; with it, restates every changed value', async () => {
    // two settled hours and an open one, with 5-minute buckets of different weight: the hourly VWAP
    // as a mean of 5-minute VWAPs differs from the exact one
    await query(async (sql) => {
      await sql`INSERT INTO trades (time, exchange, pair, trade_id, price, amount)
        SELECT '2026-01-03T10:00:00Z'::timestamptz + i * INTERVAL '90 seconds', 'luno', 'BTCNGN', 'f' || i, 1000 + (i % 7) * 10, 1 + (i % 5)
        FROM generate_series(0, 119) AS i`;
      await sql`INSERT INTO refresh_requests (from_time) VALUES ('2026-01-03T10:00:00Z')`; // as the pipeline's writer does
      await refreshAggregates(sql);
      await sql`INSERT INTO pair_settlement (pair, settled_through) VALUES ('BTCNGN', '2026-01-03T12:00:00Z')
        ON CONFLICT (pair) DO UPDATE SET settled_through = excluded.settled_through`;
    });
    const before = await allCandles();
    edit('aggregates/30_candles_1h.sql', (t) => t.replace('sum(pv)                     AS pv,', 'avg(pv / volume) * sum(volume) AS pv,'));

    const { log, said } = listening();
    await expect(migrate(database.url, log, sqlDir)).rejects.toThrow(/refused: this change alters settled, published candles: candles_1h: 2 settled candles change \(.*largest change: .*vwap [\d.]+ %.*RESTATE=/);
    const preview = said.find((l) => l.msg.includes('refused'))?.fields.preview as { aggregate: string; settled_candles_changed: number }[];
    expect(preview.find((p) => p.aggregate === 'candles_1h')?.settled_candles_changed).toBe(2);
    expect(await allCandles(), 'nothing changed').toEqual(before);
    expect(await query((sql) => sql`SELECT 1 FROM restatements`)).toHaveLength(0);

    // services starting never consent; the engineer does, with a reason
    const { applied } = await migrate(database.url, testLog, sqlDir, { restate: 'hourly VWAP as the mean of 5-minute VWAPs' });
    expect(applied).toEqual(expect.arrayContaining(['aggregates/30_candles_1h.sql', 'aggregates/40_candles_1d.sql']));
    const after = await allCandles();
    const settled = (c: (typeof before)[number]) => c.interval === '1h' && c.bucket.getTime() + 3_600_000 <= Date.parse('2026-01-03T12:00:00Z');
    const same = (a: (typeof before)[number], b: (typeof before)[number] | undefined) => b !== undefined && (['open', 'high', 'low', 'close', 'pv', 'volume', 'trades'] as const).every((k) => Number(a[k]) === Number(b[k]));
    const changed = after.filter((c) => settled(c) && !same(c, before.find((b) => b.pair === c.pair && b.interval === c.interval && +b.bucket === +c.bucket)));
    expect(changed.length).toBeGreaterThan(1);
    const restated = await query((sql) => sql<{ pair: string; subject: string; time: Date; previous: string; restated: string; reason: { aggregate_change: { reason: string; files: string[]; changed: Record<string, unknown> } } }[]>`
      SELECT pair, subject, time, previous::text, restated::text, reason FROM restatements ORDER BY time`);
    expect(restated.map((r) => `${r.subject} ${r.time.toISOString()}`)).toEqual(changed.map((c) => `candle_1h ${c.bucket.toISOString()}`));
    for (const r of restated) {
      const [was, now] = [before, after].map((set) => set.find((c) => c.interval === '1h' && +c.bucket === +r.time)!);
      expect(Number(r.previous)).toBeCloseTo(Number(was!.pv) / Number(was!.volume), 6);
      expect(Number(r.restated)).toBeCloseTo(Number(now!.pv) / Number(now!.volume), 6);
      expect(r.reason.aggregate_change.reason).toBe('hourly VWAP as the mean of 5-minute VWAPs');
      expect(r.reason.aggregate_change.files).toEqual(['aggregates/30_candles_1h.sql']);
      expect(r.reason.aggregate_change.changed).toHaveProperty('pv');
    }
    // each in the transparency log, as every restatement is
    const logged = await query((sql) => sql<{ entry: string }[]>`SELECT entry FROM transparency_entries WHERE kind = 'restatement' ORDER BY leaf_index`);
    expect(logged.map((l) => JSON.parse(l.entry).aggregate_change.reason)).toEqual(restated.map(() => 'hourly VWAP as the mean of 5-minute VWAPs'));
    // the open hour changed too, unrestated: nothing was published of it
    const open = after.find((c) => c.interval === '1h' && c.bucket.toISOString() === '2026-01-03T12:00:00.000Z');
    expect(open).toBeDefined();
  });

  it('refuses a rebuild that would lose candles whose raw trades are gone', async () => {
    const before = await allCandles();
    // a bucket's trades dropped (as retention would), its candle still materialised
    await query((sql) => sql.unsafe(`
      CREATE TABLE gone AS SELECT * FROM trades WHERE time >= '2026-01-03T10:30:00Z' AND time < '2026-01-03T10:35:00Z';
      DELETE FROM trades WHERE time >= '2026-01-03T10:30:00Z' AND time < '2026-01-03T10:35:00Z'`));
    edit('aggregates/20_candles_5m.sql', (t) => t.replace('count(*)             AS trades,', 'count(*)             AS trades,\n       count(*) FILTER (WHERE amount > 1) AS big_trades,'));
    await expect(migrate(database.url, testLog, sqlDir)).rejects.toThrow(/refused: rebuilding the aggregates would lose candles \(candles_5m: .*1 candles would be lost/);
    expect(await allCandles()).toEqual(before);
    // the operator takes the edit back; the trades come back (for the tests after this one)
    edit('aggregates/20_candles_5m.sql', (t) => t.replace('\n       count(*) FILTER (WHERE amount > 1) AS big_trades,', ''));
    await query((sql) => sql.unsafe('INSERT INTO trades SELECT * FROM gone; DROP TABLE gone'));
  });

  it('leaves SQL objects newer than its own alone', async () => {
    // this process's SQL is the database's; then another release is applied
    expect((await migrate(database.url, testLog, sqlDir)).applied).toEqual([]);
    const newer = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-sql-newer-'));
    fs.cpSync(sqlDir, newer, { recursive: true });
    fs.appendFileSync(path.join(newer, 'functions', '94_cycle_worked.sql'), '\nCREATE OR REPLACE FUNCTION newer_release() RETURNS int LANGUAGE sql AS $$ SELECT 2 $$;\n');
    expect((await migrate(database.url, testLog, newer)).applied).toContain('functions/94_cycle_worked.sql');

    // a process of this release starting now leaves the database as it is, and says so
    const { log, said } = listening();
    expect((await migrate(database.url, log, sqlDir, { older: 'skip' })).applied).toEqual([]);
    expect(said.some((l) => /older than the database's .*not applying them; going on/.test(l.msg))).toBe(true);
    await expect(migrate(database.url, testLog, sqlDir, { older: 'refuse' })).rejects.toThrow(/older than the database's.*make migrate ROLLBACK=1/);
    expect((await migrate(database.url, testLog, newer)).applied, 'the newer release is still the one recorded').toEqual([]);
    // going back on purpose
    expect((await migrate(database.url, testLog, sqlDir, { older: 'apply' })).applied).toContain('functions/94_cycle_worked.sql');
    expect((await migrate(database.url, testLog, sqlDir, { older: 'refuse' })).applied).toEqual([]);
    fs.rmSync(newer, { recursive: true, force: true });
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
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('count(*)             AS trades,', 'count(*)             AS trades,\n       max(amount)          AS largest,'));
    const { applied } = await migrate(database.url, testLog, sqlDir);
    expect(applied[0]).toBe('aggregates/20_candles_5m.sql');
    const [day] = await query((sql) => sql<{ trades: string }[]>`
      SELECT trades::text FROM candles WHERE pair = 'BTCNGN' AND interval = '1d' AND bucket = '2026-01-02T00:00:00Z'`);
    expect(day?.trades).toBe('432000');
  });
});
