// The checker: judges the whole history of a fault-suite run, from what the market offered (its
// /_control/served record), what the clients read (records.jsonl) and what the database holds at
// the end. Per fault window (a fault's start to the end of its recovery time):
//   gap        the longest time the newest trade in the live rates did not move forward (s), as a
//              customer reading both API processes every second saw it (an error answer moves nothing)
//   lost       trades the market offered in the window (trade time) that are not stored
//   doubled    records stored twice, or read with two different contents under one identity:
//              certificates, fixings, restatements, log entries, bundles; and trades stored twice
//   heads      signed heads read in the window whose root is not the root of the final log at
//              their size (inconsistent), or over a smaller tree than one read before (backwards)
//   5xx        answers >= 500 other than a 503 with Retry-After
// and once for the run: buckets with trades and no certificate, stored trades the market never
// offered.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Sql } from 'postgres';
import type { Read } from './clients.js';

export interface Window {
  fault: string;
  n: number;
  target: string;
  start: number;
  /** when the fault was taken away */
  cleared: number;
  /** end of the recovery time */
  end: number;
}

export interface Row {
  fault: string;
  runs: number;
  gapS: number;
  lost: number;
  doubled: number;
  heads: number;
  e5xx: number;
  /** answers that did not come (refused, cut, timed out): a load balancer would retry them */
  noAnswer: number;
  e503: number;
}

export interface Result {
  rows: Row[];
  totals: { offered: number; stored: number; lost: number; extra: number; uncertified: number; certificates: number; fixings: number; restatements: number; entries: number; headsRead: number; headsInconsistent: number; headsBackwards: number; reads: number };
  details: string[];
  pass: boolean;
}

const sha = (b: Buffer | string): Buffer => crypto.createHash('sha256').update(b).digest();
/** RFC 9162 MTH over leaf hashes [lo, hi). */
function mth(leaves: Buffer[], lo: number, hi: number): Buffer {
  const n = hi - lo;
  if (n === 0) return sha(Buffer.alloc(0));
  if (n === 1) return leaves[lo]!;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return sha(Buffer.concat([Buffer.from([1]), mth(leaves, lo, lo + k), mth(leaves, lo + k, hi)]));
}

export async function check(o: { sql: Sql; simUrl: string; records: string; windows: Window[]; judgeFrom: number; judgeTo: number; say: (m: string) => void }): Promise<Result> {
  const { sql, windows } = o;
  const details: string[] = [];
  const windowOf = (t: number): Window | undefined => windows.find((w) => t >= w.start && t < w.end);
  const perWindow = new Map<Window, Row>(windows.map((w) => [w, { fault: w.fault, runs: 1, gapS: 0, lost: 0, doubled: 0, heads: 0, e5xx: 0, noAnswer: 0, e503: 0 }]));
  const bump = (t: number, k: keyof Row, by = 1): void => {
    const w = windowOf(t);
    const r = w ? perWindow.get(w)! : undefined;
    if (r) (r[k] as number) += by;
  };

  // ---- trades: offered by the market vs stored ----
  const listings = (await (await fetch(`${o.simUrl}/_control/listings`)).json()) as Record<string, string[]>;
  let offered = 0;
  let lost = 0;
  let extra = 0;
  let storedN = 0;
  for (const [venue, pairs] of Object.entries(listings)) {
    for (const pair of pairs) {
      const served = ((await (await fetch(`${o.simUrl}/_control/served?venue=${venue}&pair=${pair}&from=${o.judgeFrom}&to=${o.judgeTo}`)).json()) as { trades: { id: string; time: number }[] }).trades;
      const rows = await sql<{ trade_id: string; n: number }[]>`
        SELECT trade_id, count(*)::int AS n FROM trades
        WHERE exchange = ${venue} AND pair = ${pair} AND time >= ${new Date(o.judgeFrom)} AND time <= ${new Date(o.judgeTo)} GROUP BY trade_id`;
      const stored = new Map(rows.map((r) => [r.trade_id, r.n]));
      offered += served.length;
      storedN += rows.length;
      const offeredIds = new Set(served.map((t) => t.id));
      for (const t of served) {
        if (!stored.has(t.id)) {
          lost++;
          bump(t.time, 'lost');
          if (lost <= 10) details.push(`lost: ${venue} ${pair} trade ${t.id} at ${new Date(t.time).toISOString()} (${windowOf(t.time)?.fault ?? 'no fault'})`);
        } else if (stored.get(t.id)! > 1) {
          bump(t.time, 'doubled');
          details.push(`trade stored ${stored.get(t.id)} times: ${venue} ${pair} ${t.id}`);
        }
      }
      for (const id of stored.keys()) if (!offeredIds.has(id)) extra++;
    }
  }

  // ---- records stored twice (the database's view) ----
  const [c] = await sql<{ certificates: number; distinct_certificates: number; fixings: number; distinct_fixings: number; restatements: number; distinct_restatements: number; entries: number; distinct_entries: number; distinct_entry_texts: number; bundles: number }[]>`
    SELECT (SELECT count(*)::int FROM certificates) AS certificates,
           (SELECT count(*)::int FROM (SELECT DISTINCT pair, bucket FROM certificates) x) AS distinct_certificates,
           (SELECT count(*)::int FROM fixings) AS fixings,
           (SELECT count(*)::int FROM (SELECT DISTINCT pair, date, kind FROM fixings) x) AS distinct_fixings,
           (SELECT count(*)::int FROM restatements) AS restatements,
           (SELECT count(*)::int FROM (SELECT DISTINCT pair, subject, time, restated FROM restatements) r) AS distinct_restatements,
           (SELECT count(*)::int FROM transparency_entries) AS entries,
           (SELECT count(DISTINCT entry_id)::int FROM transparency_entries) AS distinct_entries,
           (SELECT count(DISTINCT entry)::int FROM transparency_entries) AS distinct_entry_texts,
           (SELECT count(*)::int FROM bundles) AS bundles`;
  const dbDoubled =
    c!.certificates - c!.distinct_certificates + (c!.fixings - c!.distinct_fixings) + (c!.restatements - c!.distinct_restatements) + (c!.entries - c!.distinct_entries) + (c!.entries - c!.distinct_entry_texts);
  if (dbDoubled) details.push(`stored twice: ${JSON.stringify(c)}`);
  if (c!.entries !== c!.certificates + c!.fixings + c!.restatements) details.push(`log entries ${c!.entries} != certificates + fixings + restatements ${c!.certificates + c!.fixings + c!.restatements}`);
  if (c!.bundles !== c!.certificates + c!.fixings) details.push(`bundles ${c!.bundles} != certificates + fixings ${c!.certificates + c!.fixings}`);

  // ---- buckets with trades and no certificate ----
  const missing = await sql<{ pair: string; bucket: Date }[]>`
    SELECT DISTINCT e.pair, e.bucket FROM candles_5m_by_exchange e JOIN public_pairs p ON p.pair = e.pair
    WHERE e.bucket >= ${new Date(o.judgeFrom - 3_600_000)} AND e.bucket + INTERVAL '5 minutes' <= ${new Date(o.judgeTo)}
      AND NOT EXISTS (SELECT 1 FROM certificates c WHERE c.pair = e.pair AND c.bucket = e.bucket)
    ORDER BY 2, 1`;
  for (const m of missing.slice(0, 10)) details.push(`no certificate: ${m.pair} ${m.bucket.toISOString()}`);

  // ---- the log: every head against the final log ----
  const leaves = (await sql<{ entry: string; leaf_hash: Buffer }[]>`SELECT entry, leaf_hash FROM transparency_entries ORDER BY leaf_index`).map((r, i) => {
    const own = sha(Buffer.concat([Buffer.from([0]), Buffer.from(r.entry)]));
    if (!own.equals(r.leaf_hash)) details.push(`leaf ${i}: stored leaf hash is not SHA-256(0x00 || entry)`);
    return own;
  });
  const rootAt = new Map<number, string>();
  const root = (size: number): string => {
    if (!rootAt.has(size)) rootAt.set(size, size > leaves.length ? '(beyond the final log)' : mth(leaves, 0, size).toString('hex'));
    return rootAt.get(size)!;
  };
  const dbHeads = await sql<{ tree_size: string; root_hash: Buffer; signed_at: Date }[]>`SELECT tree_size::text, root_hash, signed_at FROM transparency_heads ORDER BY id`;
  let lastSize = -1;
  let lastAt = 0;
  for (const h of dbHeads) {
    const size = Number(h.tree_size);
    if (root(size) !== h.root_hash.toString('hex')) details.push(`stored head over ${size} is not the final log's root at that size`);
    if (size < lastSize || h.signed_at.getTime() < lastAt) details.push(`stored head over ${size} at ${h.signed_at.toISOString()} after one over ${lastSize}`);
    lastSize = Math.max(lastSize, size);
    lastAt = Math.max(lastAt, h.signed_at.getTime());
  }

  // ---- what the clients read ----
  const reads = fs.readFileSync(o.records, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Read).sort((a, b) => a.t - b.t);
  const seen = new Map<string, string>();
  let headsRead = 0;
  let inconsistent = 0;
  let backwards = 0;
  let maxSize = -1;
  for (const r of reads) {
    if (r.status >= 500 && !(r.status === 503 && r.retryAfter)) {
      bump(r.t, 'e5xx');
      details.push(`${r.status} from ${r.api} ${r.route} at ${new Date(r.t).toISOString()}: ${r.error ?? ''}`);
    }
    if (r.status === 503 && r.retryAfter) bump(r.t, 'e503');
    if (r.status === 0) bump(r.t, 'noAnswer');
    for (const k of r.doubled ?? []) {
      bump(r.t, 'doubled');
      details.push(`${r.route} listed twice in one answer: ${k}`);
    }
    if (r.items && r.route !== 'candles') {
      for (const [k, d] of Object.entries(r.items)) {
        const key = `${r.route === 'certificates' ? 'list' : r.route}|${k}`;
        const before = seen.get(key);
        if (before !== undefined && before !== d) {
          bump(r.t, 'doubled');
          details.push(`${r.route} ${k} read with another content at ${new Date(r.t).toISOString()} from ${r.api}`);
        }
        seen.set(key, d);
      }
    }
    if (r.head && r.status === 200) {
      headsRead++;
      if (root(r.head.tree_size) !== r.head.root_hash) {
        inconsistent++;
        bump(r.t, 'heads');
        details.push(`head over ${r.head.tree_size} read from ${r.api} at ${new Date(r.t).toISOString()} is not consistent with the final log`);
      }
      if (r.head.tree_size < maxSize) {
        backwards++;
        bump(r.t, 'heads');
        details.push(`head went back: ${r.head.tree_size} from ${r.api} at ${new Date(r.t).toISOString()} after ${maxSize}`);
      }
      maxSize = Math.max(maxSize, r.head.tree_size);
    }
  }
  // the longest time the newest live trade did not move forward, per window
  for (const w of windows) {
    const live = reads.filter((r) => r.route === 'live' && r.t >= w.start && r.t < w.end);
    let newest = Math.max(0, ...reads.filter((r) => r.route === 'live' && r.t < w.start && r.status === 200).map((r) => r.newest ?? 0));
    let lastMove = w.start;
    let gap = 0;
    for (const r of live) {
      if (r.status === 200 && (r.newest ?? 0) > newest) {
        gap = Math.max(gap, r.t - lastMove);
        newest = r.newest!;
        lastMove = r.t;
      }
    }
    gap = Math.max(gap, w.end - lastMove);
    perWindow.get(w)!.gapS = Math.round(gap / 100) / 10;
  }

  // one row per fault: sums, and the longest gap of its runs
  const rows: Row[] = [];
  for (const w of windows) {
    const r = perWindow.get(w)!;
    const row = rows.find((x) => x.fault === w.fault);
    if (!row) rows.push({ ...r });
    else {
      row.runs++;
      row.gapS = Math.max(row.gapS, r.gapS);
      for (const k of ['lost', 'doubled', 'heads', 'e5xx', 'noAnswer', 'e503'] as const) row[k] += r[k];
    }
  }
  const outside = lost - rows.reduce((s, r) => s + r.lost, 0);
  if (outside) details.push(`${outside} lost trades outside every fault window`);
  if (dbDoubled) rows.push({ fault: '(database)', runs: 0, gapS: 0, lost: 0, doubled: dbDoubled, heads: 0, e5xx: 0, noAnswer: 0, e503: 0 });
  const pass = lost === 0 && missing.length === 0 && rows.every((r) => r.doubled === 0 && r.heads === 0 && r.e5xx === 0 && r.gapS <= 30) && extra === 0;
  return {
    rows,
    totals: {
      offered,
      stored: storedN,
      lost,
      extra,
      uncertified: missing.length,
      certificates: c!.certificates,
      fixings: c!.fixings,
      restatements: c!.restatements,
      entries: c!.entries,
      headsRead,
      headsInconsistent: inconsistent,
      headsBackwards: backwards,
      reads: reads.length,
    },
    details: details.slice(0, 200),
    pass,
  };
}

export function printTable(r: Result): string {
  const head = ['fault', 'runs', 'live gap (s)', 'trades lost', 'doubled/changed', 'heads incons./back', '5xx', '(503 w/ Retry-After)', '(no answer)'];
  const lines = [head, ...r.rows.map((x) => [x.fault, x.runs, x.gapS, x.lost, x.doubled, x.heads, x.e5xx, x.e503, x.noAnswer].map(String))];
  const width = head.map((_, i) => Math.max(...lines.map((l) => String(l[i]).length)));
  const fmt = (l: (string | number)[]) => '| ' + l.map((v, i) => String(v).padEnd(width[i]!)).join(' | ') + ' |';
  const t = r.totals;
  return [
    fmt(head),
    '|' + width.map((w) => '-'.repeat(w + 2)).join('|') + '|',
    ...lines.slice(1).map(fmt),
    '',
    `trades offered ${t.offered}, stored ${t.stored}, lost ${t.lost}, stored but never offered ${t.extra}; buckets with trades and no certificate ${t.uncertified}`,
    `certificates ${t.certificates}, fixings ${t.fixings}, restatements ${t.restatements}, log entries ${t.entries}; heads read ${t.headsRead} (inconsistent ${t.headsInconsistent}, backwards ${t.headsBackwards}); reads ${t.reads}`,
    ...r.details.slice(0, 30).map((d) => `  ${d}`),
  ].join('\n');
}
