// postgres.js reads the server's array types when a connection opens. When that read fails (the
// server stalled past statement_timeout as the connection opened; lib/db/connect.ts lets the
// process go on), the connection reads every array column as its text, '{luno,valr}', until it
// closes: on the embedded database's single connection, until the process restarts. What the API
// answers must not depend on that read.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { recordListings } from '../../pipeline/discover.js';
import { insertTrades } from '../../pipeline/store.js';
import { LISTINGS, seedMarket, startTestApi, type TestApi } from '../support/api.js';
import { openTestDatabase } from '../support/db.js';

let db: Database;
let t: TestApi;

beforeAll(async () => {
  db = await openTestDatabase();
  await seedMarket(db, 2);
  // the service's pool gives way to one whose connections never read the array types, as after
  // the failed read (the embedded database admits one connection at a time)
  await db.sql.end();
  const typeless = postgres(db.url, { max: 1, fetch_types: false, onnotice: () => {} });
  t = await startTestApi({ db: { ...db, sql: typeless } });
});
afterAll(async () => {
  await t?.close();
  await t?.db.sql.end();
  await db?.close().catch(() => {}); // its pool is already ended; this stops the database
});

describe('a connection that could not read the array types', () => {
  it('lists each pair\'s venues as an array', async () => {
    const res = await t.get('/v1/pairs', t.keys.builder);
    expect(res.status).toBe(200);
    const pairs = (res.body as { pairs: { pair: string; exchanges: unknown }[] }).pairs;
    const listed = Object.entries(LISTINGS).filter(([pair]) => pairs.some((p) => p.pair === pair));
    expect(listed.length).toBeGreaterThan(0);
    for (const [pair, venues] of listed) {
      expect(pairs.find((p) => p.pair === pair)!.exchanges).toEqual([...venues].sort());
    }
  });

  it('records what a venue lists, dropping what it no longer lists', async () => {
    const sql = t.db.sql;
    await recordListings(sql, 'luno', [{ pair: 'BTCNGN', symbol: 'BTC/NGN' }]);
    const rows = await sql<{ pair: string }[]>`SELECT pair FROM venue_markets WHERE exchange = 'luno' ORDER BY pair`;
    expect(rows.map((r) => r.pair)).toEqual(['BTCNGN']);
  });

  it('refreshes the aggregates and clears the requests it covered', async () => {
    const sql = t.db.sql;
    await insertTrades(sql, [{ exchange: 'luno', pair: 'BTCNGN', tradeId: 'typeless-1', time: new Date(Date.now() - 3_600_000), price: '100000000', amount: '0.01', side: 'buy' }]);
    expect((await sql`SELECT 1 FROM refresh_requests`).length).toBeGreaterThan(0);
    await refreshAggregates(sql);
    expect(await sql`SELECT 1 FROM refresh_requests`).toHaveLength(0);
  });

  it('writes the request counts and a key\'s last use', async () => {
    const sql = t.db.sql;
    expect((await t.get('/v1/pairs', t.keys.professional)).status).toBe(200);
    await t.api.deps.metrics.flush();
    const [minutes] = await sql<{ requests: string }[]>`SELECT coalesce(sum(requests), 0)::text AS requests FROM api_request_minutes`;
    expect(Number(minutes!.requests)).toBeGreaterThan(0);
    await t.api.deps.keys.flushLastUsed();
    const [used] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM api_keys WHERE tier = 'professional' AND last_used_at IS NOT NULL`;
    expect(used!.n).toBe(1);
  });
});
