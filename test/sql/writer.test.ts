// The writer on a database server: COPY for new trades, the INSERT ... ON CONFLICT path when some
// are stored already, every value round-tripping (COPY's text format escapes), each trade once.
// COPY does not go through the embedded database's socket, so this runs with TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { COPY_FROM_ROWS, insertTrades, type TradeRow } from '../../pipeline/store.js';
import { openTestDatabase } from '../support/db.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
let db: Database;
beforeAll(async () => {
  if (onServer) db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

const at = Date.UTC(2026, 10, 20, 10, 0, 0);
const trade = (i: number, id = `t${i}`): TradeRow => ({ time: new Date(at + i * 1_000), exchange: 'luno', pair: 'BTCNGN', tradeId: id, price: `${150_000_000 + i}.25`, amount: '0.0001', side: i % 3 ? 'buy' : null });

describe('insertTrades with COPY', () => {
  it.runIf(onServer)('stores new trades by COPY, falls back when some exist, and stores each once', async () => {
    const first = Array.from({ length: 3_000 }, (_, i) => trade(i));
    expect((await insertTrades(db.sql, first, { copy: true })).inserted).toBe(3_000);
    // 2,000 stored already and 500 new: the COPY is refused as a whole, the INSERT stores the 500
    const again = await insertTrades(db.sql, [...first.slice(1_000), ...Array.from({ length: 500 }, (_, i) => trade(3_000 + i))], { copy: true });
    expect(again.inserted).toBe(500);
    expect(again.times.every((t) => t.getTime() >= at + 3_000_000)).toBe(true);
    const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades`;
    expect(row!.n).toBe(3_500);
    // and the connection the refused COPY ran on is fine: the pool still answers, nothing is left open
    const [open] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`;
    expect(open!.n).toBe(0);
  });

  it.runIf(onServer)('round-trips ids with tabs, backslashes and newlines, and NULL sides', async () => {
    const odd = [trade(5_000, 'a\tb'), trade(5_001, 'c\\d'), trade(5_002, 'e\nf\rg'), trade(5_003, '\\N'), ...Array.from({ length: COPY_FROM_ROWS }, (_, i) => trade(10_000 + i))];
    expect((await insertTrades(db.sql, odd, { copy: true })).inserted).toBe(odd.length);
    const rows = await db.sql<{ trade_id: string; side: string | null; price: string }[]>`
      SELECT trade_id, side, price FROM trades WHERE time >= ${new Date(at + 5_000_000)} AND time < ${new Date(at + 5_004_000)} ORDER BY time`;
    expect(rows.map((r) => r.trade_id)).toEqual(['a\tb', 'c\\d', 'e\nf\rg', '\\N']);
    expect(rows.map((r) => r.side)).toEqual(odd.slice(0, 4).map((t) => t.side));
    expect(rows.map((r) => r.price)).toEqual(odd.slice(0, 4).map((t) => String(t.price)));
  });
});
