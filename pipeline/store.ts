// The writer: the only code that inserts trades and FX observations. Every statement is kept under
// MAX_STATEMENT_BYTES of parameters (lib/db/batches.ts).
import type { TransactionSql } from 'postgres';
import { batchesUnder } from '../lib/db/batches.js';
import type { Sql } from '../lib/db/connect.js';

export interface TradeRow {
  readonly time: Date;
  readonly exchange: string;
  readonly pair: string;
  readonly tradeId: string;
  readonly price: string | number;
  readonly amount: string | number;
  readonly side: 'buy' | 'sell' | null;
}

export interface FxRow {
  readonly time: Date;
  readonly currency: string;
  /** A plain decimal (a number: its shortest text). */
  readonly unitsPerUsd: string | number;
  readonly source: string;
  readonly sourceUpdatedAt: Date;
}

export interface InsertResult {
  /** Rows new to the table (duplicates are skipped, not counted). */
  readonly inserted: number;
  /** Earliest and latest time among new rows: the range whose aggregates need a refresh. */
  readonly from: Date | null;
  readonly to: Date | null;
  /** The time of every new row (the collector counts those that arrived after settlement). */
  readonly times: readonly Date[];
}

function tradeParams(t: TradeRow): unknown[] {
  return [t.time, t.exchange, t.pair, t.tradeId, t.price, t.amount, t.side];
}

export interface InsertOptions {
  /**
   * COPY the rows in (a server: far cheaper than INSERT ... ON CONFLICT, which probes the unique
   * index row by row; docs/decisions.md, "Writing trades"), falling back to the INSERT when some of
   * them are stored already. Only where the database takes COPY (Database.takesCopy).
   */
  readonly copy?: boolean;
}

/** Batches from this many rows go in by COPY (when the database takes it). */
export const COPY_FROM_ROWS = 2_000;
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** COPY's text format: tab-separated, \N for NULL, backslash, tab, newline and CR escaped. */
function copyField(v: string | number | null): string {
  if (v === null) return '\\N';
  const text = String(v);
  return COPY_SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : text;
}

/**
 * COPYs the rows into trades, with their refresh request, in one transaction; true when all went
 * in, false when the server refused them (some are stored already, or a value is out of bounds).
 * postgres.js (3.4.9) never reports a COPY that the server refuses after its last row
 * (porsager/postgres#1173: the stream just stays open), so the COPY runs in a transaction on a
 * connection of its own, and the query behind it tells: it fails (25P02, transaction aborted)
 * after a refused COPY, and the transaction is rolled back.
 */
async function copyTrades(sql: Sql, trades: readonly TradeRow[], earliest: Date): Promise<boolean> {
  const conn = await sql.reserve();
  try {
    await conn`BEGIN`;
    await conn`INSERT INTO refresh_requests (from_time) VALUES (${earliest})`;
    const copy = await conn`COPY trades (time, exchange, pair, trade_id, price, amount, side) FROM STDIN`.writable();
    copy.on('error', () => {}); // a refusal is read from the query behind it
    const write = (chunk: string) => new Promise<void>((resolve, reject) => copy.write(chunk, (err) => (err ? reject(err) : resolve())));
    let chunk = '';
    for (const t of trades) {
      chunk += `${t.time.toISOString()}\t${copyField(t.exchange)}\t${copyField(t.pair)}\t${copyField(t.tradeId)}\t${copyField(t.price)}\t${copyField(t.amount)}\t${copyField(t.side)}\n`;
      if (chunk.length >= 65_536) {
        await write(chunk);
        chunk = '';
      }
    }
    if (chunk) await write(chunk);
    copy.end();
    // end() sends CopyDone on the next tick: the query behind it must follow it on the wire
    await new Promise((resolve) => setImmediate(resolve));
    try {
      await conn`SELECT 1`;
    } catch (err) {
      await conn`ROLLBACK`;
      if ((err as { code?: string }).code === '25P02') return false;
      throw err;
    }
    await conn`COMMIT`;
    return true;
  } finally {
    conn.release();
  }
}

/**
 * Stores trades once each (a repeated exchange, pair, id and time is skipped). With the rows, in
 * the same transaction, the earliest of their times is recorded in refresh_requests, so the next
 * refresh covers them even where an aggregate is already materialised (late trades): a refresh
 * sees the request and the trades together or neither (lib/db/refresh.ts). Written apart, a
 * refresh elsewhere could take the request before the trades were there, and leave them out of
 * the candles for good.
 */
export async function insertTrades(sql: Sql, trades: readonly TradeRow[], opts: InsertOptions = {}): Promise<InsertResult> {
  if (trades.length === 0) return { inserted: 0, from: null, to: null, times: [] };
  const earliest = trades.reduce((min, t) => (t.time < min ? t.time : min), trades[0]!.time);
  // COPY is all or nothing: refused (some stored already), the INSERT below stores the rest. Its
  // fixed cost (a transaction, a query behind it: tens of ms) pays off only for large batches.
  if (opts.copy && trades.length >= COPY_FROM_ROWS && (await copyTrades(sql, trades, earliest))) {
    const last = trades.reduce((max, t) => (t.time > max ? t.time : max), trades[0]!.time);
    return { inserted: trades.length, from: earliest, to: last, times: trades.map((t) => t.time) };
  }
  return sql.begin(async (tx) => {
    await tx`INSERT INTO refresh_requests (from_time) VALUES (${earliest})`;
    return insertRows(tx, trades);
  }) as Promise<InsertResult>;
}

/** INSERT ... ON CONFLICT DO NOTHING, in statements under the message limit; what went in. */
async function insertRows(sql: TransactionSql, trades: readonly TradeRow[]): Promise<InsertResult> {
  let inserted = 0;
  let from: Date | null = null;
  let to: Date | null = null;
  const times: Date[] = [];
  for (const batch of batchesUnder(trades, tradeParams)) {
    const rows = batch.map((t) => ({
      time: t.time,
      exchange: t.exchange,
      pair: t.pair,
      trade_id: t.tradeId,
      price: String(t.price),
      amount: String(t.amount),
      side: t.side,
    }));
    const stored = await sql<{ time: Date }[]>`
      INSERT INTO trades ${sql(rows)}
      ON CONFLICT (exchange, pair, trade_id, time) DO NOTHING
      RETURNING time`;
    inserted += stored.length;
    for (const { time } of stored) {
      times.push(time);
      if (!from || time < from) from = time;
      if (!to || time > to) to = time;
    }
  }
  return { inserted, from, to, times };
}

function fxParams(r: FxRow): unknown[] {
  return [r.time, r.currency, r.unitsPerUsd, r.source, r.sourceUpdatedAt];
}

/**
 * Stores FX observations once each. Observations older than the current hour change the rate in
 * force at hours already materialised in fx_in_force (sql/functions/35_fx_in_force.sql), so those are
 * recomputed from the earliest of them on; the pipeline adds each new hour as it begins.
 */
export async function insertFxRates(sql: Sql, rates: readonly FxRow[], now = new Date()): Promise<number> {
  let inserted = 0;
  for (const batch of batchesUnder(rates, fxParams)) {
    const rows = batch.map((r) => ({
      time: r.time,
      currency: r.currency,
      units_per_usd: String(r.unitsPerUsd),
      source: r.source,
      source_updated_at: r.sourceUpdatedAt,
    }));
    const stored = await sql`
      INSERT INTO fx_rates ${sql(rows)}
      ON CONFLICT (source, currency, source_updated_at, time) DO NOTHING
      RETURNING 1`;
    inserted += stored.length;
  }
  const earliest = rates.reduce<Date | null>((min, r) => (!min || r.time < min ? r.time : min), null);
  if (earliest && earliest.getTime() < Math.floor(now.getTime() / 3_600_000) * 3_600_000) {
    await sql`SELECT fx_in_force_refresh(${earliest}, ${now})`;
  }
  return inserted;
}
