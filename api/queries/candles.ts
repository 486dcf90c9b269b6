// Candle queries for GET /v1/rates/historical and GET /v1/exports/candles: pages of candles
// (sql/functions/40_candles_with_synthetic.sql: candle_page). Keyset pagination on the bucket: a page
// is the first `limit` buckets strictly after the cursor; never OFFSET. A long range (a CSV page,
// a month's file) is read in statements of a bounded number of rows, each when the reader asks
// for it: the embedded database's one connection serves other requests in between, and the
// range is never held in memory at once.
import crypto from 'node:crypto';
import type { Sql } from '../../lib/db/connect.js';
import { longReadStatement } from '../../lib/db/long-reads.js';
import type { IntervalName } from '../../lib/intervals.js';

/**
 * A candle as the page query returns it: wire-ready timestamp, numbers as PostgreSQL's numeric text
 * (exact; the route rounds them to what the contract shows), its venues' spread.
 */
export interface PageRow {
  /** The bucket start, formatted as the contract writes timestamps. */
  t: string;
  open: string;
  high: string;
  low: string;
  close: string;
  /** sum(price x amount) and sum(amount): VWAP = pv / volume, computed exactly by the route */
  pv: string;
  volume: string;
  /** the USDT leg's sums in the bucket (1 and 1 for a USD coin) and USD/QUOTE in force: synthetic = usd_pv / usd_volume x units_per_usd */
  usd_pv: string | null;
  usd_volume: string | null;
  units_per_usd: string | null;
  /** How many venues traded in the bucket, and their VWAPs' lowest, highest and mean. */
  venues: number;
  venue_min: string | null;
  venue_max: string | null;
  venue_mean: string | null;
  /** The whole bucket is settled (certified; it changes only by late trades). */
  settled: boolean;
}

export interface CandlePageQuery {
  readonly pair: string;
  readonly interval: IntervalName;
  readonly from: Date; // inclusive
  readonly to: Date; // exclusive
  readonly after: Date | null;
  readonly limit: number;
}

// strictly after the cursor: buckets start on whole minutes, so one millisecond later will do
const firstFrom = (q: { readonly from: Date; readonly after: Date | null }) => (q.after ? new Date(Math.max(q.after.getTime() + 1, q.from.getTime())) : q.from);

/**
 * A page's rows, each read as one field: the row's own text (`p::text`, the record text candle_page
 * gives), split here into its columns. Fifteen fields a row, each sent, cut out and decoded by the
 * client on its own, cost the client more than the database's whole statement (a 10,000-candle page
 * about 2.5x the time of its one-field read on the embedded database), and this is the same text
 * candlesDigest() hashes, so a digest costs nothing more.
 */
function pageTexts(sql: Sql, interval: string, pair: string, from: Date, to: Date, limit: number): Promise<string[]> {
  return sql<{ r: string }[]>`SELECT p::text AS r FROM candle_page(${interval}, ${pair}, ${from}, ${to}, ${limit}) p`.then((rows) => rows.map((x) => x.r));
}

/** The rows of one statement of a page (the page's SQL as the API reads it). */
export async function pageRows(sql: Sql, interval: string, pair: string, from: Date, to: Date, limit: number): Promise<PageRow[]> {
  return (await pageTexts(sql, interval, pair, from, to, limit)).map(parsePageRow);
}

const PAGE_COLUMNS = 15;

/**
 * A candle_page row from its record text: `(v1,v2,...)`, an empty field NULL. PostgreSQL quotes a
 * field only when it is empty or holds a quote, backslash, parenthesis, comma or white space: no
 * number, boolean or contract timestamp does, and a quoted field is read by the rule anyway (a
 * doubled quote or a backslash stands for the character after it).
 */
export function parsePageRow(text: string): PageRow {
  const f = text.includes('"') ? recordFields(text) : splitRecord(text);
  if (f.length !== PAGE_COLUMNS || text.charCodeAt(0) !== 40 || text.charCodeAt(text.length - 1) !== 41) throw new Error(`candle_page row not a record of ${PAGE_COLUMNS} fields: ${text.slice(0, 200)}`);
  return {
    t: f[0]!,
    open: f[1]!,
    high: f[2]!,
    low: f[3]!,
    close: f[4]!,
    pv: f[5]!,
    volume: f[6]!,
    usd_pv: f[7] || null,
    usd_volume: f[8] || null,
    units_per_usd: f[9] || null,
    venues: Number(f[10]),
    venue_min: f[11] || null,
    venue_max: f[12] || null,
    venue_mean: f[13] || null,
    settled: f[14] === 't',
  };
}

/** The fields of a record text none of whose fields is quoted: between the parentheses, cut at each comma. */
function splitRecord(text: string): string[] {
  const out: string[] = [];
  const end = text.length - 1;
  let i = 1;
  for (let c = text.indexOf(',', i); c !== -1 && c < end; c = text.indexOf(',', i)) {
    out.push(text.slice(i, c));
    i = c + 1;
  }
  out.push(text.slice(i, end));
  return out;
}

/** A record text's fields with quoting undone; a NULL (empty, unquoted) field is '' and a quoted empty one too, which no page column can be. */
function recordFields(text: string): string[] {
  const out: string[] = [];
  let i = 1;
  for (;;) {
    let v = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        const c = text[i++];
        if (c === undefined) throw new Error(`candle_page row text unterminated: ${text.slice(0, 200)}`);
        if (c === '\\') v += text[i++] ?? '';
        else if (c === '"') {
          if (text[i] === '"') v += text[i++];
          else break;
        } else v += c;
      }
    } else {
      const end = text.slice(i).search(/[,)]/);
      v = text.slice(i, end < 0 ? text.length : i + end);
      i += v.length;
    }
    out.push(v);
    if (text[i] === ',') i++;
    else return out;
  }
}

/**
 * Where a page of `limit` candles ends, found before it is read (one index read each): `last`,
 * the bucket of its last candle when a candle follows it (the page's next cursor), else null;
 * `until`, the exclusive end of the page's buckets.
 */
export async function pageBounds(sql: Sql, q: CandlePageQuery): Promise<{ last: Date | null; until: Date }> {
  const from = firstFrom(q);
  const [row] = await sql<{ last: Date; next: Date }[]>`
    SELECT candles_until(${q.interval}, ${q.pair}, ${from}, ${q.to}, ${q.limit - 1}) AS last,
           candles_until(${q.interval}, ${q.pair}, ${from}, ${q.to}, ${q.limit}) AS next`;
  const more = row!.next.getTime() < q.to.getTime();
  return { last: more ? row!.last : null, until: row!.next };
}

/**
 * Rows a statement of a month's file takes (a Parquet row group each): the embedded database's one
 * connection serves other requests between statements (about 50 ms each there), and two such
 * chunks are all a reader holds.
 */
export const ROWS_PER_STATEMENT = 2_000;

/**
 * Rows a statement of a page takes (JSON or CSV). Each statement costs a plan (about 5 ms of the 8
 * a 250-row one takes on the embedded database), so fewer statements make a page faster; a smaller
 * one shortens what another customer's statement waits behind it on the embedded database's one
 * connection (lib/db/long-reads.ts). bench/README.md, api and fairness, has both sides measured.
 */
export const PAGE_STATEMENT_ROWS = 250;

/**
 * The candles of [from, to) after `after`, oldest first, at most `limit`, in arrays of at most
 * `chunkRows`: one statement each. The first is read before this resolves, so that a failure there
 * is still the caller's to answer. Each next one is read while the one before is being used (the
 * database works while the caller writes), and no further until the caller asks for that one:
 * at most two chunks are held, and a caller that stops leaves at most that one statement behind.
 */
export async function candleChunks(sql: Sql, q: CandlePageQuery, opts: { chunkRows?: number; digest?: RowsDigest } = {}): Promise<AsyncGenerator<PageRow[], void>> {
  const { chunkRows = ROWS_PER_STATEMENT, digest } = opts;
  // each row's text is also the digest's
  const statement = async (from: Date, left: number): Promise<PageRow[]> => {
    const texts = await pageTexts(sql, q.interval, q.pair, from, q.to, Math.min(chunkRows, left));
    digest?.add(texts);
    return texts.map(parsePageRow);
  };
  // the first statement is sent at once, as any other (a read of one statement, a small page, is
  // no long read); each later one in its turn among the long reads on this pool (lib/db/long-reads.ts)
  const read = (from: Date, left: number) => longReadStatement(sql, () => statement(from, left));
  const first = q.limit > 0 ? await statement(firstFrom(q), q.limit) : [];
  return (async function* chunks() {
    let rows: PageRow[] = first;
    let left = q.limit;
    for (;;) {
      left -= rows.length;
      const next = rows.length === chunkRows && left > 0 ? read(new Date(Date.parse(rows[rows.length - 1]!.t) + 1), left) : null;
      next?.catch(() => {}); // a failure is met below, or by no one if the caller stops
      if (rows.length) yield rows;
      if (!next) return;
      rows = await next;
    }
  })();
}

/** Until when a pair's candles are settled (pair_settlement.settled_through); null: none yet. */
export async function settledThrough(sql: Sql, pair: string): Promise<Date | null> {
  const [row] = await sql<{ settled_through: Date }[]>`SELECT settled_through FROM pair_settlement WHERE pair = ${pair}`;
  return row?.settled_through ?? null;
}

/**
 * The SHA-256 of a range's candle rows as candle_page returns them, in order: equal digests, equal
 * rows. RowsDigest makes the same digest from the rows a read hands out.
 */
export async function candlesDigest(sql: Sql, pair: string, interval: string, from: Date, to: Date): Promise<string> {
  const [row] = await sql<{ digest: string }[]>`
    SELECT encode(sha256(convert_to(coalesce(string_agg(p::text, E'\n' ORDER BY p.t), ''), 'UTF8')), 'hex') AS digest
    FROM candle_page(${interval}, ${pair}, ${from}, ${to}, NULL) p`;
  return row!.digest;
}

/**
 * candlesDigest() of the rows candleChunks() hands out, made as they are read: the same bytes (each
 * row's text from the database, a line feed between rows) through the same hash, so a file made
 * from those rows is known by the digest a later candlesDigest() of unchanged rows gives.
 */
export class RowsDigest {
  private readonly hash = crypto.createHash('sha256');
  private rows = 0;
  private done: string | null = null;

  add(texts: readonly string[]): void {
    for (const r of texts) this.hash.update(this.rows++ === 0 ? r : `\n${r}`);
  }

  /** The hex digest, once every row has been added. */
  hex(): string {
    return (this.done ??= this.hash.digest('hex'));
  }
}
