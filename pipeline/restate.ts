// Restatements (docs/methodology.md, "Restatements"): what each candle was when its window settled
// is kept (settled_values: every candle interval of lib/intervals.ts, the 1d candle being the
// end-of-day snapshot); after trades
// arrive late for a settled window, the candle as it now stands is compared with the value
// published (the settled one, or the last restatement), and a change beyond
// restatement_threshold_pct within restatement_window_hours of the window's end is restated: a
// record with the original, previous and new value, the change, and which venues' late trades, how
// many. A fixing is restated the same way, its window recomputed by the methodology. Below the
// threshold, late trades are only counted. Nothing published is changed.
import type { Sql, Tx } from '../lib/db/connect.js';
import * as x from '../lib/methodology/exact.js';
import { candleSubject, intervalOf, type IntervalName } from '../lib/intervals.js';
import { param } from '../lib/methodology/parameters.js';
import { publishedRate } from '../lib/methodology/rules.js';
import { computeWindow } from '../lib/methodology/window.js';
import { readWindowInputs } from './certify/inputs.js';
import type { SettledRange } from './settle.js';


export interface Restatement {
  readonly id: string;
  readonly pair: string;
  readonly subject: ReturnType<typeof candleSubject> | 'fixing';
  readonly time: Date;
  readonly ref: string | null;
  readonly original: string;
  readonly previous: string;
  readonly restated: string;
  readonly changePct: string;
  readonly lateTrades: { exchange: string; trades: number }[];
}

/** Recorded in the transaction that stores a restatement (the transparency log's append). */
export type OnRestated = (tx: Tx, r: Restatement) => Promise<void>;

const windowHours = () => param('restatement_window_hours');

/**
 * Keeps each candle of the newly settled ranges as it stands now (every interval's buckets ending
 * in the range), within the restatement window: older ones can no longer be restated.
 */
export async function recordSettledValues(sql: Sql | Tx, ranges: readonly SettledRange[], now: Date): Promise<void> {
  const horizon = new Date(now.getTime() - windowHours() * 3_600_000);
  for (const r of ranges) {
    const from = r.from && r.from > horizon ? r.from : horizon;
    await sql`
      INSERT INTO settled_values (pair, interval, bucket, pv, volume, trades)
      SELECT pair, interval, bucket, pv, volume, trades FROM candles
      WHERE pair = ${r.pair}
        AND bucket + candle_width(interval) > ${from}
        AND bucket + candle_width(interval) <= ${r.to}
        AND volume > 0
      ON CONFLICT DO NOTHING`;
  }
}

/** Settled values no restatement can reach any more (a day past the window). */
export async function pruneSettledValues(sql: Sql, now: Date): Promise<void> {
  await sql`DELETE FROM settled_values WHERE bucket < ${new Date(now.getTime() - (windowHours() + 48) * 3_600_000)}`;
}

/** The change from previous to restated, in percent, exact. */
const change = (previous: x.Rational, restated: x.Rational) => x.div(x.mul(x.sub(restated, previous), x.rational(100n)), previous);
const changePct = (previous: x.Rational, restated: x.Rational) => x.toFixedPlaces(change(previous, restated), param('divergence_pct_decimals'));

const THRESHOLD_PCT = x.parseDecimal(String(param('restatement_threshold_pct')));
const material = (previous: x.Rational, restated: x.Rational) => x.compare(x.abs(change(previous, restated)), THRESHOLD_PCT) > 0;

/** What one restatement check found, and the database's time it looked at (the next check's `since`). */
export interface RestateResult {
  readonly restated: Restatement[];
  readonly looked: Date;
}

/**
 * Restates what late trades noticed since `since` moved materially (candles and fixings of the
 * touched pairs, within the window). Idempotent: a value already restated is compared with its
 * restatement, so a check repeated over the same late trades records nothing twice.
 * `since` is on the database's clock, as late_trades.noticed_at is (null: the restatement window
 * before the database's now); `now` is the pipeline's clock, which settled the values.
 */
export async function restate(sql: Sql, since: Date | null, now: Date, onRestated?: OnRestated): Promise<RestateResult> {
  const horizon = new Date(now.getTime() - windowHours() * 3_600_000);
  // the database's time of this look comes with what it found (one row even when nothing is late)
  const found = await sql<{ looked: Date; pair: string | null; oldest: Date | null }[]>`
    SELECT c.looked, t.pair, t.oldest
    FROM (SELECT now() AS looked) c
    LEFT JOIN LATERAL (
      SELECT pair, min(oldest) AS oldest FROM late_trades
      WHERE noticed_at > coalesce(${since}::timestamptz, c.looked - make_interval(hours => ${windowHours()}))
      GROUP BY pair
    ) t ON true
    ORDER BY t.pair`;
  const looked = found[0]!.looked;
  const touched = found.filter((r): r is { looked: Date; pair: string; oldest: Date } => r.pair !== null);
  const out: Restatement[] = [];
  for (const t of touched) {
    const candles = await sql<{ interval: IntervalName; bucket: Date; settled_pv: string; settled_volume: string; pv: string; volume: string; previous: string | null; original: string | null; settled_at: Date }[]>`
      SELECT v.interval, v.bucket, v.pv::text AS settled_pv, v.volume::text AS settled_volume, c.pv::text AS pv, c.volume::text AS volume,
             r.restated::text AS previous, r.original::text AS original, v.settled_at
      FROM settled_values v
      JOIN candles c ON c.pair = v.pair AND c.interval = v.interval AND c.bucket = v.bucket
      LEFT JOIN LATERAL (
        SELECT restated, original FROM restatements
        WHERE pair = v.pair AND subject = 'candle_' || v.interval AND time = v.bucket ORDER BY id DESC LIMIT 1
      ) r ON true
      WHERE v.pair = ${t.pair}
        AND v.bucket + candle_width(v.interval) > ${t.oldest}
        AND v.bucket + candle_width(v.interval) > ${horizon}
        AND (c.pv <> v.pv OR c.volume <> v.volume)
      ORDER BY v.bucket, v.interval`;
    for (const c of candles) {
      const settled = publishedRate(x.div(x.parseDecimal(c.settled_pv), x.parseDecimal(c.settled_volume)));
      const previous = c.previous ?? settled;
      const restated = publishedRate(x.div(x.parseDecimal(c.pv), x.parseDecimal(c.volume)));
      if (!material(x.parseDecimal(previous), x.parseDecimal(restated))) continue;
      const { width } = intervalOf(c.interval);
      const late = await sql<{ exchange: string; trades: number }[]>`
        SELECT exchange, count(*)::int AS trades FROM trades
        WHERE pair = ${t.pair} AND time >= ${c.bucket} AND time < ${c.bucket}::timestamptz + ${width}::interval AND ingested_at > ${c.settled_at}
        GROUP BY exchange ORDER BY exchange`;
      out.push(await record(sql, { pair: t.pair, subject: candleSubject(c.interval), time: c.bucket, ref: null, original: c.original ?? settled, previous, restated, lateTrades: [...late] }, onRestated));
    }
    const fixings = await sql<{ id: string; time: Date; base: string; quote: string; rate: string; published_at: Date; previous: string | null; original: string | null }[]>`
      SELECT f.id, f.time, p.base, p.quote, f.rate::text AS rate, f.published_at, r.restated::text AS previous, r.original::text AS original
      FROM fixings f JOIN pairs p USING (pair)
      LEFT JOIN LATERAL (SELECT restated, original FROM restatements WHERE subject = 'fixing' AND ref = f.id ORDER BY id DESC LIMIT 1) r ON true
      WHERE f.pair = ${t.pair} AND f.rate IS NOT NULL AND f.time > ${t.oldest} AND f.time > ${horizon}
      ORDER BY f.time`;
    for (const f of fixings) {
      const start = new Date(f.time.getTime() - param('fixing_window_minutes') * 60_000);
      const inputs = await readWindowInputs(sql, { pair: t.pair, base: f.base, quote: f.quote }, start, f.time);
      const recomputed = computeWindow(inputs);
      const previous = f.previous ?? f.rate;
      if (!recomputed.rate || !material(x.parseDecimal(previous), x.parseDecimal(recomputed.rate))) continue;
      const counted = await sql<{ exchange: string; trades: number }[]>`
        SELECT exchange, count(*)::int AS trades FROM trades
        WHERE pair = ${t.pair} AND time >= ${start} AND time < ${f.time} AND ingested_at > ${f.published_at}
        GROUP BY exchange ORDER BY exchange`;
      out.push(await record(sql, { pair: t.pair, subject: 'fixing', time: f.time, ref: f.id, original: f.original ?? f.rate, previous, restated: recomputed.rate, lateTrades: [...counted] }, onRestated));
    }
  }
  return { restated: out, looked };
}

async function record(sql: Sql, r: Omit<Restatement, 'id' | 'changePct'>, onRestated?: OnRestated): Promise<Restatement> {
  const changed = changePct(x.parseDecimal(r.previous), x.parseDecimal(r.restated));
  return sql.begin(async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      INSERT INTO restatements (pair, subject, time, ref, original, previous, restated, change_pct, reason)
      VALUES (${r.pair}, ${r.subject}, ${r.time}, ${r.ref}, ${r.original}, ${r.previous}, ${r.restated}, ${changed}, ${tx.json({ late_trades: r.lateTrades })})
      RETURNING id::text`;
    const done = { ...r, id: row!.id, changePct: changed };
    await onRestated?.(tx, done);
    return done;
  });
}
