// Rebuilding aggregates beside the live ones (lib/db/migrate.ts): a changed aggregate, and every
// one that reads it, is created in the schema SHADOW under its own name and refreshed there in full
// from raw trades while the API keeps reading the live ones; then it is compared with the live one
// (what settled values it would change, which candles it would lose), and swapped in by one short
// transaction (the live one dropped, the new one moved to public). A reader sees the old aggregate
// or the new one, complete, never one part-built.

import { restatementId, timestamp } from '../format.js';
import { INTERVALS, candleSubject, type IntervalName } from '../intervals.js';
import type { Logger } from '../log.js';
import * as x from '../methodology/exact.js';
import { divergence, figureRules, publishedRate } from '../methodology/rules.js';
import { appendEntries } from '../transparency/log.js';
import { batchesUnder } from './batches.js';
import type { Sql, Tx } from './pool.js';
import { intervalMs, refreshWindow } from './refresh.js';
import { inFile, type AggregateFile } from './sql-files.js';

/** Where changed aggregates are built: a schema of their own, dropped once they are swapped in. */
export const SHADOW = 'afrates_next';
/** The span of one refresh call of a rebuild: a progress line can say how far it is. */
const WINDOW_MS = 7 * 86_400_000;
/** A candle's published columns: a change to any of them in a settled bucket is a restatement. */
const PUBLISHED = ['open', 'high', 'low', 'close', 'pv', 'volume', 'trades'] as const;
const { percentText } = figureRules(x.EXACT);



export interface Built {
  /** Each rebuilt aggregate and the bucket its materialisation reaches (its frontier once swapped in). */
  readonly ends: ReadonlyMap<string, Date>;
}

/** Creates the aggregates of `files` in SHADOW, empty (WITH NO DATA), after dropping whatever is there. */
async function createBeside(sql: Sql, files: readonly AggregateFile[], at: (step: string) => void): Promise<void> {
  await sql.unsafe(`DROP SCHEMA IF EXISTS ${SHADOW} CASCADE`);
  await sql.unsafe(`CREATE SCHEMA ${SHADOW}`);
  for (const f of files) {
    at(`creating ${f.aggregate} beside the live one (${f.name})`);
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL search_path = ${SHADOW}, public`);
        await tx.unsafe(f.create);
      });
    } catch (err) {
      throw inFile(err, f);
    }
  }
}

/**
 * Which of the aggregates of `files` define something else than the live ones: those without a live
 * one, and those whose definition, as the database keeps it (normalised: no comments, its own
 * layout), differs. A file whose text changed but whose aggregate is the same (a checksum recorded
 * of another text, an edit PostgreSQL reads the same way) then costs no rebuild. Each is created
 * empty beside the live one to be asked, and dropped again.
 */
export async function definitionsChanged(sql: Sql, files: readonly AggregateFile[], at: (step: string) => void): Promise<Set<string>> {
  const definitions = async (schema: string) =>
    new Map(
      (await sql<{ name: string; definition: string }[]>`
        SELECT view_name::text AS name, view_definition AS definition FROM timescaledb_information.continuous_aggregates
        WHERE view_schema = ${schema}`).map((r) => [r.name, r.definition.replaceAll(`${SHADOW}.`, '').replaceAll('public.', '').replace(/\s+/g, ' ').trim()]),
    );
  const live = await definitions('public');
  const differ = new Set(files.filter((f) => !live.has(f.aggregate)).map((f) => f.aggregate));
  if (differ.size === files.length) return differ;
  try {
    await createBeside(sql, files, at);
    const built = await definitions(SHADOW);
    for (const f of files) if (built.get(f.aggregate) !== live.get(f.aggregate)) differ.add(f.aggregate);
  } finally {
    await dropBuild(sql);
  }
  return differ;
}

/**
 * Creates the aggregates of `files` (in order: a file reading another finds the new one first) in
 * SHADOW and materialises them from the first trade up to their newest closed bucket, a week per
 * call; `at` is told how far each is. A build left part-way by an earlier run is dropped first.
 */
export async function buildBeside(sql: Sql, files: readonly AggregateFile[], log: Logger, at: (step: string) => void): Promise<Built> {
  await createBeside(sql, files, at);
  const widths = new Map(
    (await sql<{ name: string; width: string }[]>`
      SELECT ca.user_view_name::text AS name, bf.bucket_width::interval::text AS width
      FROM _timescaledb_catalog.continuous_agg ca
      JOIN _timescaledb_catalog.continuous_aggs_bucket_function bf USING (mat_hypertable_id)
      WHERE ca.user_view_schema = ${SHADOW}`).map((r) => [r.name, intervalMs(r.width)]),
  );
  const [first] = await sql<{ at: Date | null }[]>`SELECT min(time) AS at FROM trades`;
  const now = Date.now();
  const ends = new Map<string, Date>();
  for (const f of files) {
    // no trades yet: nothing to materialise, and no frontier, so the pipeline's first pass (by its
    // own clock) materialises from the first trade; a frontier or watermark set here by this clock
    // would hide every bucket before it
    if (!first?.at) continue;
    const width = widths.get(f.aggregate)!;
    const end = Math.floor(now / width) * width;
    ends.set(f.aggregate, new Date(end));
    const started = Date.now();
    const from = Math.floor(first.at.getTime() / 86_400_000) * 86_400_000;
    for (let s = from; s < end; s += WINDOW_MS) {
      const e = Math.min(s + WINDOW_MS, end);
      at(`rebuilding ${f.aggregate} beside the live one: ${Math.round(((s - from) / (end - from)) * 100)} %, at ${new Date(s).toISOString()} of ${new Date(end).toISOString()}`);
      await refreshWindow(sql, `${SHADOW}.${f.aggregate}`, new Date(s), new Date(e));
    }
    log.info({ aggregate: f.aggregate, from: new Date(from), to: new Date(end), duration_s: (Date.now() - started) / 1000 }, `rebuilt ${f.aggregate} beside the live one`);
  }
  return { ends };
}

/**
 * Refreshes the built aggregates again over their whole span: TimescaleDB re-materialises only what
 * trades stored since touched, so this is quick, and it brings in what arrived during the build.
 */
export async function catchUp(sql: Sql, built: Built, schema = SHADOW): Promise<void> {
  for (const [name, end] of built.ends) await refreshWindow(sql, `${schema}.${name}`, null, end);
}

/** A settled candle the rebuild changes: each published column that differs, before and after. */
export interface SettledChange {
  readonly aggregate: string;
  readonly interval: string;
  readonly pair: string;
  readonly bucket: Date;
  readonly before: Record<string, string | null>;
  readonly after: Record<string, string | null>;
}

/** What a rebuild would change of what is published, per aggregate. */
export interface Preview {
  readonly aggregate: string;
  /** Settled candles whose published values change. */
  readonly settled_candles_changed: number;
  /** Candles there now that the rebuild would not have (their trades are gone, or the new formula drops them). */
  readonly candles_lost: number;
  /** The largest relative change of each published value (and the VWAP) among them, in percent. */
  readonly largest_change_pct: Record<string, number>;
  readonly first_bucket: Date | null;
  readonly last_bucket: Date | null;
}

/**
 * Compares each rebuilt candle aggregate that exists live with its new build: the settled candles
 * (bucket ended at or before its pair's settled_through) whose published columns differ, and the
 * candles the new build lacks. Columns only one of the two has are not compared (a new column
 * changes nothing published).
 */
export async function compare(sql: Sql, files: readonly AggregateFile[]): Promise<{ changes: SettledChange[]; previews: Preview[] }> {
  const changes: SettledChange[] = [];
  const previews: Preview[] = [];
  for (const f of files) {
    // the candle aggregates (lib/intervals.ts): their settled buckets are published values
    const interval = INTERVALS.find((i) => i.aggregate === f.aggregate);
    if (!interval) continue;
    const [live] = await sql<{ exists: boolean }[]>`SELECT to_regclass(${`public.${f.aggregate}`}) IS NOT NULL AS exists`;
    if (!live!.exists) continue;
    const both = await sql<{ column_name: string }[]>`
      SELECT column_name FROM information_schema.columns WHERE table_name = ${f.aggregate} AND table_schema IN ('public', ${SHADOW})
      GROUP BY column_name HAVING count(*) = 2`;
    const cols = PUBLISHED.filter((c) => both.some((b) => b.column_name === c));
    const json = (t: string) => `json_build_object(${cols.map((c) => `'${c}', ${t}.${c}::text`).join(', ')})`;
    const tuple = (t: string) => `(${cols.map((c) => `${t}.${c}`).join(', ')})`;
    const rows = await sql.unsafe<{ pair: string; bucket: Date; before: Record<string, string | null>; after: Record<string, string | null> }[]>(`
      SELECT o.pair, o.bucket, ${json('o')} AS before, ${json('n')} AS after
      FROM public.${f.aggregate} o
      JOIN ${SHADOW}.${f.aggregate} n ON n.pair = o.pair AND n.bucket = o.bucket
      JOIN pair_settlement s ON s.pair = o.pair AND o.bucket + INTERVAL '${interval.width}' <= s.settled_through
      WHERE ${tuple('o')} IS DISTINCT FROM ${tuple('n')}
      ORDER BY o.bucket, o.pair`);
    const [lost] = await sql.unsafe<{ n: number }[]>(`
      SELECT count(*)::int AS n FROM public.${f.aggregate} o
      WHERE NOT EXISTS (SELECT 1 FROM ${SHADOW}.${f.aggregate} n WHERE n.pair = o.pair AND n.bucket = o.bucket)`);
    const largest: Record<string, number> = {};
    for (const r of rows) {
      changes.push({ aggregate: f.aggregate, interval: interval.name, pair: r.pair, bucket: r.bucket, before: r.before, after: r.after });
      const values = (v: Record<string, string | null>) => ({ ...v, vwap: v.pv && v.volume && Number(v.volume) > 0 ? String(Number(v.pv) / Number(v.volume)) : null });
      const [b, a] = [values(r.before), values(r.after)];
      for (const k of Object.keys(b)) {
        const [p, q] = [Number(b[k as keyof typeof b]), Number(a[k as keyof typeof a])];
        if (!Number.isFinite(p) || !Number.isFinite(q) || p === q) continue;
        const pct = p === 0 ? Infinity : (Math.abs(q - p) / Math.abs(p)) * 100;
        largest[k] = Math.max(largest[k] ?? 0, Number(pct.toPrecision(3)));
      }
    }
    previews.push({
      aggregate: f.aggregate,
      settled_candles_changed: rows.length,
      candles_lost: lost!.n,
      largest_change_pct: largest,
      first_bucket: rows[0]?.bucket ?? null,
      last_bucket: rows.at(-1)?.bucket ?? null,
    });
  }
  return { changes, previews };
}

/** The preview as an engineer reads it: one line per aggregate. */
export function describe(previews: readonly Preview[]): string {
  return previews
    .filter((p) => p.settled_candles_changed > 0 || p.candles_lost > 0)
    .map((p) => {
      const largest = Object.entries(p.largest_change_pct).map(([k, v]) => `${k} ${v} %`).join(', ');
      return `${p.aggregate}: ${p.settled_candles_changed} settled candles change${p.settled_candles_changed ? ` (${p.first_bucket!.toISOString()} to ${p.last_bucket!.toISOString()}; largest change: ${largest})` : ''}` +
        (p.candles_lost ? `, ${p.candles_lost} candles would be lost` : '');
    })
    .join('; ');
}

/**
 * Records each changed settled candle as a restatement (GET /v1/restatements): subject
 * candle_<interval>; original, previous and restated are its VWAP as published (the first value,
 * the value published until now: the last restatement's or the candle's, and the new one), and the
 * reason holds the engineer's reason, the files changed, and every published column that changed,
 * before and after. Each is appended to the transparency log. Runs in the transaction that swaps
 * the aggregates in.
 */
export async function recordRestatements(tx: Tx, changes: readonly SettledChange[], reason: string, files: readonly string[]): Promise<number> {
  if (changes.length === 0) return 0;
  const subjects = [...new Set(changes.map((c) => candleSubject(c.interval as IntervalName)))];
  const last = new Map(
    (await tx<{ key: string; original: string; restated: string }[]>`
      SELECT DISTINCT ON (pair, subject, time) pair || ' ' || subject || ' ' || (extract(epoch FROM time) * 1000)::bigint AS key, original::text, restated::text
      FROM restatements WHERE subject IN (SELECT jsonb_array_elements_text(${tx.json(subjects)}))
      ORDER BY pair, subject, time, id DESC`).map((r) => [r.key, r]),
  );
  const settled = new Map(
    (await tx<{ key: string; pv: string; volume: string }[]>`
      SELECT pair || ' candle_' || interval || ' ' || (extract(epoch FROM bucket) * 1000)::bigint AS key, pv::text, volume::text
      FROM settled_values v
      JOIN jsonb_to_recordset(${tx.json(changes.map((c) => ({ pair: c.pair, interval: c.interval, bucket: c.bucket.toISOString() })))}) AS k(pair text, interval text, bucket timestamptz)
        USING (pair, interval, bucket)`).map((r) => [r.key, r]),
  );
  const vwap = (v: Record<string, string | null>) => (v.pv && v.volume && Number(v.volume) > 0 ? publishedRate(x.div(x.parseDecimal(v.pv), x.parseDecimal(v.volume))) : null);
  const rows = [];
  for (const c of changes) {
    const now = vwap(c.before);
    const next = vwap(c.after);
    // a settled candle whose VWAP the change takes away (or gives) has no rate to restate: refused,
    // so no published candle changes without its record
    if (now === null || next === null) throw new Error(`refused: the change leaves the settled ${c.interval} candle of ${c.pair} at ${c.bucket.toISOString()} without a VWAP, which no restatement can record. Nothing was changed.`);
    const subject = candleSubject(c.interval as IntervalName);
    const key = `${c.pair} ${subject} ${c.bucket.getTime()}`;
    const before = last.get(key);
    const first = settled.get(key);
    // the rate last published for it: its latest restatement, else its value at settlement (as pipeline/restate.ts)
    const published = first ? publishedRate(x.div(x.parseDecimal(first.pv), x.parseDecimal(first.volume))) : now;
    const previous = before?.restated ?? published;
    const original = before?.original ?? published;
    const fields = Object.fromEntries(
      Object.keys(c.before).filter((k) => c.before[k] !== c.after[k]).map((k) => [k, { previous: c.before[k], restated: c.after[k] }]),
    );
    rows.push({
      pair: c.pair,
      subject,
      time: c.bucket.toISOString(),
      original,
      previous,
      restated: next,
      change_pct: percentText(divergence(x.parseDecimal(next), x.parseDecimal(previous))!),
      reason: { late_trades: [], aggregate_change: { reason, files, changed: fields } },
    });
  }
  for (const batch of batchesUnder(rows, (r) => [JSON.stringify(r)])) {
    const stored = await tx<{ id: string; pair: string; subject: string; time: Date; original: string; previous: string; restated: string; change_pct: string }[]>`
      INSERT INTO restatements (pair, subject, time, original, previous, restated, change_pct, reason)
      SELECT r.pair, r.subject, r.time, r.original, r.previous, r.restated, r.change_pct, r.reason
      FROM jsonb_to_recordset(${tx.json(batch)}) AS r(pair text, subject text, time timestamptz, original numeric, previous numeric, restated numeric, change_pct numeric, reason jsonb)
      RETURNING id::text, pair, subject, time, original::text, previous::text, restated::text, change_pct::text`;
    // each in the transparency log, as a restatement by late trades is (docs/methodology.md, section 16)
    await appendEntries(
      tx,
      stored.map((r) => {
        const id = restatementId(r.id);
        const entry = { id, kind: 'restatement', pair: r.pair, subject: r.subject, time: timestamp(r.time), ref: null, original: r.original, previous: r.previous, restated: r.restated, change_pct: r.change_pct, late_trades: [], aggregate_change: { reason, files } };
        return { id, kind: 'restatement' as const, entry };
      }),
    );
  }
  return rows.length;
}

/**
 * Swaps the built aggregates in, inside the caller's transaction: the live ones are dropped (with
 * what depends on them: the caller applies the function and view files again in the same
 * transaction) and the new ones moved to public, where they keep their names.
 */
export async function swapIn(tx: Tx, files: readonly AggregateFile[]): Promise<void> {
  // the live ones are only dropped once nothing reads them: readers arriving meanwhile wait, then
  // read the new ones. Everything the swap replaces (these aggregates, and the views applied again
  // with them) is locked by one statement first: the swap then never holds some of it while it
  // waits for a reader that waits for it (the caller's lock timeout makes the swap give way).
  const live = await tx<{ name: string }[]>`
    SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND (c.relkind = 'v' OR c.relname IN (SELECT jsonb_array_elements_text(${tx.json(files.map((f) => f.aggregate))})))`;
  if (live.length > 0) await tx.unsafe(`LOCK TABLE ${live.map((r) => r.name).join(', ')} IN ACCESS EXCLUSIVE MODE`);
  for (const f of [...files].reverse()) await tx.unsafe(`DROP MATERIALIZED VIEW IF EXISTS public.${f.aggregate} CASCADE`);
  for (const f of files) await tx.unsafe(`ALTER MATERIALIZED VIEW ${SHADOW}.${f.aggregate} SET SCHEMA public`);
  await tx.unsafe(`DROP SCHEMA ${SHADOW}`); // empty now: anything left in it is a mistake, and refuses the swap
}

/** Drops a build that is not swapped in (refused, or failed). */
export async function dropBuild(sql: Sql): Promise<void> {
  await sql.unsafe(`DROP SCHEMA IF EXISTS ${SHADOW} CASCADE`);
}
