// A month of one pair's candles as a file (GET /v1/exports/candles): gzipped CSV or Parquet, made
// while it is read, a statement of rows at a time, never the month's rows in memory; the same
// candles always make the same bytes. A complete month's file is kept in the database
// (month_files) with the digest of the rows it was made from and what made it: made ahead by the
// service once the month is complete (storeDueMonthFiles), or when first asked for, and given out
// again while the rows still have that digest and this code would make the same bytes.
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { Logger } from 'pino';
import type { Sql } from '../lib/db/connect.js';
import { candleCsv, candleParquet } from './candle-files.js';
import type { PairInfo } from './context.js';
import { GZIP_LEVEL } from './middleware/compress.js';
import { METHODOLOGY_VERSION } from '../lib/methodology/parameters.js';
import { candleChunks, RowsDigest, type PageRow } from './queries/candles.js';
import { monthFilesDue, storeMonthFile, type MonthFileKey } from './queries/month-files.js';
import { byteStream, through } from './streamed.js';

/** The API's gzip level, for files too: near zlib's default size in less time (docs/decisions.md, "Bulk export"). */
const FILE_GZIP_LEVEL = GZIP_LEVEL;
/** The most candles a month holds: 31 days of 5-minute buckets. */
const MONTH_ROWS_MAX = 31 * 288;
/** A file larger than this is sent but not kept (a month of 5-minute candles is about 0.5 MB). */
const KEEP_BYTES_MAX = 64 * 1024 * 1024;

/** The UTC month YYYY-MM as [from, to). */
export function monthRange(month: string): { from: Date; to: Date } {
  const from = new Date(`${month}-01T00:00:00Z`);
  return { from, to: new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1)) };
}

/**
 * The month's file as it is made from its candles, every column (the route is for Builder and up,
 * who see them all); `digest`, when given, takes the rows' digest as they are read.
 */
export async function makeMonthFile(sql: Sql, pair: Pick<PairInfo, 'pair' | 'quote'>, k: MonthFileKey, digest?: RowsDigest): Promise<Readable> {
  const { from, to } = monthRange(k.month);
  return fileOf(await candleChunks(sql, { pair: pair.pair, interval: k.interval, from, to, after: null, limit: MONTH_ROWS_MAX }, { digest }), pair, k);
}

function fileOf(chunks: AsyncIterable<PageRow[]>, pair: Pick<PairInfo, 'pair' | 'quote'>, k: MonthFileKey): Readable {
  return k.format === 'parquet'
    ? byteStream(candleParquet(chunks, pair, true, { 'afrates.pair': pair.pair, 'afrates.interval': k.interval, 'afrates.month': k.month }))
    : through(byteStream(candleCsv(chunks, pair, true)), zlib.createGzip({ level: FILE_GZIP_LEVEL }));
}

/** Fixed candles every maker is tried on: two venues beside a synthetic price; two agreeing venues without one (confidence an exact tie). */
const PROBE_ROWS: readonly PageRow[] = [
  { t: '2026-01-01T00:00:00+00:00', open: '141385386.41', high: '142586107.27', low: '141057999.32', close: '141057999.32', pv: '104198478.8922303567', volume: '0.73640060', usd_pv: '152771.9782369851', usd_volume: '1.70168380', units_per_usd: '1530.2468', venues: 2, venue_min: '141385386.41', venue_max: '141619518.1105652843', venue_mean: '141502452.26028264215', settled: true },
  { t: '2026-01-01T00:05:00+00:00', open: '0.5', high: '0.5', low: '0.5', close: '0.5', pv: '0.25', volume: '0.5', usd_pv: null, usd_volume: null, units_per_usd: null, venues: 2, venue_min: '0.5', venue_max: '0.5', venue_mean: '0.5', settled: false },
];
let maker: Promise<string> | undefined;

/**
 * What a kept file was made by: the digest of the methodology's version and of the files this code
 * makes of PROBE_ROWS, in both formats. A change to the figures, the columns, CSV, the Parquet or
 * gzip writer shows in those bytes, so a file kept by other code is made again, not served.
 */
export function monthFileMaker(): Promise<string> {
  maker ??= (async () => {
    const hash = createHash('sha256').update(METHODOLOGY_VERSION);
    for (const format of ['csv', 'parquet'] as const) {
      const file = fileOf(Readable.from([PROBE_ROWS]), { pair: 'BTCNGN', quote: 'NGN' }, { pair: 'BTCNGN', interval: '5m', month: '2026-01', format });
      for await (const chunk of file) hash.update(chunk as Buffer);
    }
    return hash.digest('hex').slice(0, 16);
  })();
  return maker;
}

/**
 * A pass-through that hands what flowed through it to `whole` once it has all flowed (not when it
 * fails, nor past KEEP_BYTES_MAX), and ends when `whole` has: a file downloaded is a file kept.
 */
export function onceWhole(whole: (bytes: Buffer) => Promise<void>): Transform {
  const chunks: Buffer[] = [];
  let length = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (length <= KEEP_BYTES_MAX) chunks.push(chunk);
      length += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      if (length > KEEP_BYTES_MAX) return done();
      whole(Buffer.concat(chunks, length)).then(() => done(), done);
    },
  });
}

/**
 * Makes and keeps the files of complete months that have none yet, newest month first, at most
 * `limit` (one at a time: on the embedded database each holds its one connection a statement at a
 * time, between other requests). Returns how many it kept.
 */
export async function storeDueMonthFiles(sql: Sql, log: Logger, limit: number): Promise<number> {
  const by = await monthFileMaker();
  const due = await monthFilesDue(sql, by, limit);
  for (const k of due) {
    const digest = new RowsDigest();
    const file = await makeMonthFile(sql, k, k, digest);
    const bytes = Buffer.concat(await file.toArray());
    await storeMonthFile(sql, k, { bytes, rowsDigest: digest.hex(), maker: by });
  }
  if (due.length) log.info({ files: due.length, newest: `${due[0]!.pair} ${due[0]!.month}` }, 'month files made ahead');
  return due.length;
}
