// Settlement: when a pair's 5-minute buckets are final enough to certify. Every publish reads what
// may settle (sql/functions/87_settlement.sql says when a bucket settles), refreshes the candles, then
// moves each pair's settled_through forward, handing the newly settled range to `certify` first:
// certificates are made from
// the data as it stands at settlement, once, and a crash between the two steps only makes the
// next pass certify the same range again (certificates are stored at most once per bucket).
// Trades that arrive later for a settled bucket still correct its candle; the collector counts them
// (late_trades), and they never touch a certificate.
import type { Sql, Tx } from '../lib/db/connect.js';
import type { DueFixing } from './fixings.js';

export interface SettledRange {
  readonly pair: string;
  /** Buckets starting at or after this (null: from the very first) ... */
  readonly from: Date | null;
  /** ... and ending at or before this are newly settled. */
  readonly to: Date;
}

/**
 * Thrown by long publishing work that saw the process stopping between two of its transactions:
 * what it stored stays, and the next run does the rest.
 */
export class StoppedPartWay extends Error {
  constructor(what: string) {
    super(`stopped part-way (${what}): the rest is left for the next run`);
    this.name = 'StoppedPartWay';
  }
}

/** Issues what settling makes due: certificates of settled buckets, and the fixings whose hour has settled. */
export interface Certifier {
  /** `stopped` is asked between certificates: true ends the work (StoppedPartWay), the rest left for the next run. */
  issue(ranges: readonly SettledRange[], stopped?: () => boolean): Promise<number>;
  fix(pair: DueFixing['pair'], slot: DueFixing['slot']): Promise<boolean>;
}

/** What may settle now: the ranges newly settled, and every pair's settled_through once they are. */
export interface Settlement {
  readonly ranges: readonly SettledRange[];
  readonly settledThrough: Map<string, Date>;
}

/**
 * What can be settled at `now`, never past the database's clock: a pipeline host whose clock runs
 * fast would settle, and certify for good, buckets whose trades are still to come (settlement only
 * moves forward). Read before the refresh whose candles certify it (pipeline/publish.ts says why).
 */
export async function settlementAt(sql: Sql, now: Date, lagSeconds: number): Promise<Settlement> {
  const rows = await sql<{ pair: string; settled_through: Date | null; candidate: Date }[]>`
    SELECT pair, settled_through, candidate FROM settlement_candidates(LEAST(${now}::timestamptz, now()), make_interval(secs => ${lagSeconds}))`;
  const ranges: SettledRange[] = rows
    .filter((r) => !r.settled_through || r.candidate > r.settled_through)
    .map((r) => ({ pair: r.pair, from: r.settled_through, to: r.candidate }));
  return { ranges, settledThrough: new Map(rows.map((r) => [r.pair, ranges.find((x) => x.pair === r.pair)?.to ?? r.settled_through!])) };
}

/**
 * Records a settlement, after `before` has done what settling makes due for its newly settled ranges
 * (certify them): a failure there leaves them unsettled, for the next publish to settle again.
 * `within` runs in the transaction that records it (the publisher's fence, the settled values kept).
 */
export async function recordSettlement(
  sql: Sql,
  settlement: Settlement,
  before?: (ranges: readonly SettledRange[]) => Promise<unknown>,
  within?: (tx: Tx, ranges: readonly SettledRange[]) => Promise<unknown>,
): Promise<void> {
  if (settlement.ranges.length === 0) return;
  await before?.(settlement.ranges);
  await sql.begin(async (tx) => {
    await within?.(tx, settlement.ranges);
    for (const r of settlement.ranges) {
      await tx`
        INSERT INTO pair_settlement (pair, settled_through) VALUES (${r.pair}, ${r.to})
        ON CONFLICT (pair) DO UPDATE
          SET settled_through = GREATEST(pair_settlement.settled_through, excluded.settled_through), updated_at = now()`;
    }
  });
}

/** Every pair's settled_through as recorded (a process that has not settled anything yet). */
export async function settledPoints(sql: Sql): Promise<Map<string, Date>> {
  const rows = await sql<{ pair: string; settled_through: Date }[]>`SELECT pair, settled_through FROM pair_settlement`;
  return new Map(rows.map((r) => [r.pair, r.settled_through]));
}

/** Records trades that arrived after their bucket was settled (GET /v1/status reports them). */
export async function recordLateTrades(sql: Sql, exchange: string, pair: string, trades: number, oldest: Date): Promise<void> {
  await sql`INSERT INTO late_trades (exchange, pair, trades, oldest) VALUES (${exchange}, ${pair}, ${trades}, ${oldest})`;
}
