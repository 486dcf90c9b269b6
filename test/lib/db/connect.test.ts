// The app's connections read the same instants and numbers whatever the server's defaults. A DBA
// may set a database to `DateStyle = 'SQL, DMY'` and its own time zone; postgres.js reads
// timestamps with new Date(text), which reads 01/03/2026 (1 March in DMY) as 3 January. Only a
// server has per-database defaults (the embedded database takes no settings), so this runs with
// TEST_DATABASE_URL.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../lib/config.js';
import { openDatabase, type Database } from '../../../lib/db/connect.js';
import { refreshAggregates } from '../../../lib/db/refresh.js';
import { insertTrades, type TradeRow } from '../../../pipeline/store.js';
import { freshDatabaseUrl, testLog } from '../../support/db.js';
import { generateTrades } from '../../support/market.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
let fresh: Awaited<ReturnType<typeof freshDatabaseUrl>> | undefined;
let db: Database | undefined;

beforeAll(async () => {
  if (!onServer) return;
  fresh = await freshDatabaseUrl();
  const name = new URL(fresh.url).pathname.slice(1);
  const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`ALTER DATABASE ${name} SET datestyle = 'SQL, DMY'`);
    await admin.unsafe(`ALTER DATABASE ${name} SET timezone = 'Asia/Kolkata'`);
  } finally {
    await admin.end();
  }
  db = await openDatabase(loadConfig({ DATABASE_URL: fresh.url }), testLog);
});
afterAll(async () => {
  await db?.close();
  await fresh?.drop();
});

describe('connections to a server with other date defaults', () => {
  it.runIf(onServer)('read every timestamp as the instant stored, and candles where their trades are', async () => {
    // the database's defaults are in force for a session that does not set its own
    const other = postgres(fresh!.url, { max: 1, onnotice: () => {} });
    try {
      const [raw] = await other<{ t: string }[]>`SELECT '2026-03-01T00:00:00Z'::timestamptz::text AS t`;
      expect(raw!.t).toBe('01/03/2026 05:30:00 IST');
    } finally {
      await other.end();
    }
    const at = new Date('2026-03-01T00:00:00Z');
    const [back] = await db!.sql<{ t: Date }[]>`SELECT ${at}::timestamptz AS t`;
    expect(back!.t.toISOString()).toBe(at.toISOString());
    const trades: TradeRow[] = generateTrades({ seed: 5, start: at, hours: 2, listings: { BTCNGN: ['luno'] }, tradesPerHour: 30 });
    await insertTrades(db!.sql, trades);
    await refreshAggregates(db!.sql);
    const candles = await db!.sql<{ bucket: Date; first_trade_at: Date }[]>`
      SELECT bucket, first_trade_at FROM candles WHERE interval = '1h' AND pair = 'BTCNGN' ORDER BY bucket`;
    const hours = [...new Set(trades.map((t) => Math.floor(t.time.getTime() / 3_600_000) * 3_600_000))].sort((a, b) => a - b);
    expect(candles.map((c) => c.bucket.getTime())).toEqual(hours);
    const firstTrade = Math.min(...trades.map((t) => t.time.getTime()));
    expect(candles[0]!.first_trade_at.getTime()).toBe(firstTrade);
  });
});

describe('a new connection on a stalled server', () => {
  it.runIf(onServer)('does not end the process when postgres.js cannot read the array types', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/support/type-fetch-child.ts', fresh!.url], {
      cwd: new URL('../../..', import.meta.url).pathname,
      encoding: 'utf8',
      timeout: 30_000,
    });
    // the statement itself is cancelled and answered as such; the process lives on, and says why
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ answer: '57014', alive: true });
    expect(stdout + stderr).toContain('could not read the array types');
  });
});

