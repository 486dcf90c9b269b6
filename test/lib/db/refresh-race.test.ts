// Trades stored while a refresh runs elsewhere (another venue's loop publishing, a backfill beside
// the service, a second process) must all reach the candles. A writer records a refresh request
// and stores its trades; a refresh that read and deleted the request before the trades were there
// left them below the frontier for good: candles (and the certificates made from them) without them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Sql } from '../../../lib/db/connect.js';
import { refreshAggregates } from '../../../lib/db/refresh.js';
import { insertTrades, type TradeRow } from '../../../pipeline/store.js';
import { openTestDatabase } from '../../support/db.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);
let db: Database;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

const trades = (from: number, n: number, prefix: string): TradeRow[] =>
  Array.from({ length: n }, (_, i) => ({ time: new Date(from + i * 1_000), exchange: 'luno', pair: 'BTCNGN', tradeId: `${prefix}${i}`, price: 100_000_000 + i, amount: 0.01, side: 'buy' }));

/**
 * `sql` (and any transaction begun on it) whose INSERTs into trades wait for `gate`: the writer is
 * held at the point where another process's refresh can run, however the writer is built.
 * `held` is called when the writer gets there.
 */
function holdTradeInserts(sql: Sql, gate: Promise<void>, held: () => void): Sql {
  const wrap = (target: Sql): Sql =>
    new Proxy(target, {
      apply(fn, self, args: unknown[]) {
        const query = Reflect.apply(fn as unknown as (...a: unknown[]) => unknown, self, args) as PromiseLike<unknown>;
        const text = Array.isArray(args[0]) ? (args[0] as string[]).join('?') : '';
        if (!text.includes('INSERT INTO trades')) return query;
        held();
        return gate.then(() => query);
      },
      get(obj, key, receiver) {
        const value = Reflect.get(obj, key, receiver);
        if (key === 'begin') return (work: (tx: Sql) => Promise<unknown>) => (value as (cb: (tx: Sql) => Promise<unknown>) => Promise<unknown>).call(obj, (tx) => work(wrap(tx)));
        return typeof value === 'function' ? value.bind(obj) : value;
      },
    });
  return wrap(sql);
}

async function candleAndRaw(bucket: number) {
  const [row] = await db.sql<{ candle: number | null; raw: number }[]>`
    SELECT (SELECT trades::int FROM candles_5m WHERE pair = 'BTCNGN' AND bucket = ${new Date(bucket)}) AS candle,
           (SELECT count(*)::int FROM trades WHERE pair = 'BTCNGN' AND time >= ${new Date(bucket)} AND time < ${new Date(bucket + 5 * MIN)}) AS raw`;
  return row!;
}

describe('a refresh that runs while a writer stores trades', () => {
  it('leaves none of them out of the candles', async () => {
    // the hour 10:00-11:00 is materialised, as the live pipeline leaves it
    for (let m = 0; m < 60; m += 5) await insertTrades(db.sql, trades(T0 + m * MIN, 3, `live-${m}-`));
    await refreshAggregates(db.sql, { now: new Date(T0 + 61 * MIN) });
    const bucket = T0 + 20 * MIN;
    expect(await candleAndRaw(bucket)).toEqual({ candle: 3, raw: 3 });

    // late trades for 10:20 (a backfill); another loop's refresh runs while they are being written
    let open!: () => void;
    let held!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const writerHeld = new Promise<void>((resolve) => (held = resolve));
    const writing = insertTrades(holdTradeInserts(db.sql, gate, held), trades(bucket + 10_000, 50, 'late-'));
    await writerHeld; // the writer has begun: its refresh request recorded, its trades not yet
    const refreshing = refreshAggregates(db.sql, { now: new Date(T0 + 61 * MIN) });
    // the refresh ends, or waits for the writer: then write. On the embedded database it waits from
    // the start (the writer's transaction holds the one connection); on a server it runs beside the
    // writer, and the second is a bound for a refresh that waits on the writer's locks.
    if (db.kind === 'server') await Promise.race([refreshing, new Promise((r) => setTimeout(r, 1_000))]);
    open();
    expect((await writing).inserted).toBe(50);
    await refreshing;
    await refreshAggregates(db.sql, { now: new Date(T0 + 62 * MIN) }); // the next cycle's pass
    expect(await candleAndRaw(bucket)).toEqual({ candle: 53, raw: 53 });
  });
});
