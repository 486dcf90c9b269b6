// A month of one pair's candles as a file (GET /v1/exports/candles): gzipped CSV or Parquet, made
// while it is read, a statement of rows at a time, never the month's rows in memory; the same
// candles always make the same bytes. A complete month's file is kept in the database
// (month_files) with the digest of the rows it was made from: made ahead by the service once the
// month is complete (storeDueMonthFiles), or when first asked for, and given out again while the
// rows still have that digest.
import { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { Logger } from 'pino';
import type { Sql } from '../lib/db/connect.js';
import { candleCsv, candleParquet } from './candle-files.js';
import type { PairInfo } from './context.js';
import { GZIP_LEVEL } from './middleware/compress.js';
import { candleChunks, RowsDigest } from './queries/candles.js';
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
  const chunks = await candleChunks(sql, { pair: pair.pair, interval: k.interval, from, to, after: null, limit: MONTH_ROWS_MAX }, { digest });
  return k.format === 'parquet'
    ? byteStream(candleParquet(chunks, pair, true, { 'afrates.pair': pair.pair, 'afrates.interval': k.interval, 'afrates.month': k.month }))
    : through(byteStream(candleCsv(chunks, pair, true)), zlib.createGzip({ level: FILE_GZIP_LEVEL }));
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
  const due = await monthFilesDue(sql, limit);
  for (const k of due) {
    const digest = new RowsDigest();
    const file = await makeMonthFile(sql, k, k, digest);
    const bytes = Buffer.concat(await file.toArray());
    await storeMonthFile(sql, k, { bytes, rowsDigest: digest.hex() });
  }
  if (due.length) log.info({ files: due.length, newest: `${due[0]!.pair} ${due[0]!.month}` }, 'month files made ahead');
  return due.length;
}
