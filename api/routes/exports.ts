// GET /v1/exports/candles: a month of one pair's candles as one file, gzipped CSV or Parquet, for
// Builder and up; one request, however many rows. The file is made while it is sent, a statement of
// rows at a time (never the month's rows in memory), and is the same bytes for the same candles, so
// its SHA-256 (an RFC 9530 Content-Digest trailer; a HEAD's header) names its content. A complete
// month's file is kept once made, with the digest of the rows it was made from (api/file-cache.ts).
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { candleCsv, candleParquet } from '../candle-files.js';
import type { Sql } from '../../lib/db/connect.js';
import type { AppContext, AppDeps, AppRouter, PairInfo } from '../context.js';
import type { FileCache } from '../file-cache.js';
import { validationError } from '../errors.js';
import { GZIP_LEVEL } from '../middleware/compress.js';
import { knownPair, type Operation } from '../operation.js';
import { PARQUET_TYPE } from '../parquet.js';
import { candleChunks, candlesDigest, RowsDigest, settledThrough } from '../queries/candles.js';
import { byteStream, digestOf, sendStream, through, withDigestTrailer } from '../streamed.js';
import { PAIR, parseQuery } from '../validate.js';

const MONTH = { type: 'string', pattern: '^20\\d{2}-(0[1-9]|1[0-2])$', maxLength: 7, description: 'month, YYYY-MM (UTC), from 2000-01 to the current one' } as const;

const query = {
  type: 'object',
  required: ['pair', 'month'],
  additionalProperties: false,
  properties: {
    pair: PAIR,
    month: MONTH,
    interval: { enum: ['5m', '1h', '1d'], default: '1h' },
    format: { enum: ['csv', 'parquet'], default: 'csv', description: 'csv: gzipped CSV (application/gzip, a .csv.gz file); parquet: Apache Parquet' },
  },
} as const;

/** What each format is sent as: its media type and file name extension. */
const FORMATS = {
  csv: { type: 'application/gzip', extension: 'csv.gz' },
  parquet: { type: PARQUET_TYPE, extension: 'parquet' },
} as const;

/** The API's gzip level, for files too: near zlib's default size in less time (docs/decisions.md, "Bulk export"). */
const FILE_GZIP_LEVEL = GZIP_LEVEL;
/** The most candles a month holds: 31 days of 5-minute buckets. */
const MONTH_ROWS_MAX = 31 * 288;

const BINARY = { type: 'string', contentMediaType: 'application/octet-stream' } as const;

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/exports/candles',
    summary: "A month of one pair's candles as a file: gzipped CSV or Parquet",
    description: [
      "The candles of one UTC month, oldest first, with the same values as GET /v1/rates/historical (Builder's columns: time, pair, open, high, low, close, vwap, total_volume, settled, methodology_version, status, data_quality, confidence, divergence_pct, synthetic_price, sources_count). One request, however many rows; streamed as it is read.",
      '`format=csv`: a gzip file (`application/gzip`, saved as `.csv.gz`) of RFC 4180 CSV with a header line, values as the JSON shows them, an empty field for null. `format=parquet`: Apache Parquet, numbers DOUBLE (the JSON number), `time` a UTC TIMESTAMP (milliseconds), a row group per 2,000 rows. `Content-Disposition` names the file.',
      "The file's SHA-256 follows its last byte as an HTTP trailer, `Content-Digest: sha-256=:<base64>:` (RFC 9530; announced by `Trailer`); the same candles always give the same bytes, so a HEAD request answers the digest and `Content-Length` in headers (it makes the file to do so, and counts as a request).",
      '`X-Export-Complete: true`: the month has ended and all its candles are settled (only a late trade can still correct one). `false`: the month is still running, or its last candles are not settled yet: the file holds what there is now (its name ends `-partial`) and a later request may differ. A future month is refused.',
    ].join('\n\n'),
    tier: 'builder',
    query,
    response: BINARY,
    contentType: FORMATS.csv.type,
    otherContent: { [FORMATS.parquet.type]: BINARY },
    successHeaders: {
      'Content-Disposition': { description: 'attachment; filename="<PAIR>-<interval>-<YYYY-MM>[-partial].csv.gz" (or .parquet)', schema: { type: 'string' } },
      'X-Export-Complete': { description: 'true: the month has ended and all its candles are settled; false: the file may change.', schema: { type: 'string', enum: ['true', 'false'] } },
      'X-Export-Cache': { description: "hit: a complete month's file this process made before from the same candles, sent as it was made; miss: made now.", schema: { type: 'string', enum: ['hit', 'miss'] } },
      Trailer: { description: 'Content-Digest: the trailer that follows the body (not on HEAD, which has the digest in its headers).', schema: { type: 'string' } },
      'Content-Digest': { description: 'HEAD only (a GET sends it as a trailer): `sha-256=:<base64>:`, the SHA-256 of the file (RFC 9530).', schema: { type: 'string' } },
    },
  },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/exports/candles', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const pair = knownPair(deps, q.pair, 'pair');
    const interval = q.interval as '5m' | '1h' | '1d';
    // Builder and up reach the whole history (TIER_RULES): no month is too old
    const from = new Date(`${q.month}-01T00:00:00Z`);
    const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
    if (from.getTime() > Date.now()) throw validationError(`'month' ${q.month} has not begun; the latest is ${new Date().toISOString().slice(0, 7)}`);

    const format = FORMATS[q.format as keyof typeof FORMATS];
    // every read on one server, a replica as for the JSON pages when one is caught up
    const { complete, cached, file } = await deps.read.run(async (sql) => {
      const settled = await settledThrough(sql, pair.pair);
      const complete = settled !== null && settled.getTime() >= to.getTime();
      // a complete month's file is kept once made, with its rows' digest, and given out again
      // while the rows still have it (api/file-cache.ts)
      const keepAs = complete && deps.files.maxBytes > 0 ? `${pair.pair}|${interval}|${q.month}|${q.format}` : null;
      const kept = keepAs ? deps.files.get(keepAs) : undefined;
      const cached = kept && kept.rows === (await candlesDigest(sql, pair.pair, interval, from, to)) ? kept.bytes : undefined;
      const file = cached ? Readable.from([cached]) : await makeFile(sql, deps.files, pair, interval, q.month, q.format, from, to, keepAs);
      return { complete, cached, file };
    });
    const head = ctx.method === 'HEAD' ? await digestOf(file) : null; // a failure until here is still an error answer, without a file's headers
    ctx.set({
      'Content-Disposition': `attachment; filename="${pair.pair}-${interval}-${q.month}${complete ? '' : '-partial'}.${format.extension}"`,
      'X-Export-Complete': String(complete),
      'X-Export-Cache': cached ? 'hit' : 'miss',
    });
    ctx.type = format.type;
    if (head) {
      ctx.body = '';
      ctx.set('Content-Digest', head.digest);
      ctx.length = head.length;
      return;
    }
    sendStream(ctx, withDigestTrailer(ctx, file));
  });
}

/**
 * The month's file as it is made from its candles, kept under `keepAs` once whole (null: not
 * kept), with the digest of the rows it was made from. Every column: the route is for Builder and
 * up, who see them all.
 */
async function makeFile(sql: Sql, files: FileCache, pair: PairInfo, interval: '5m' | '1h' | '1d', month: string, format: string, from: Date, to: Date, keepAs: string | null): Promise<Readable> {
  const digest = keepAs ? new RowsDigest() : undefined;
  const chunks = await candleChunks(sql, { pair: pair.pair, interval, from, to, after: null, limit: MONTH_ROWS_MAX }, { digest });
  const made =
    format === 'parquet'
      ? byteStream(candleParquet(chunks, pair, true, { 'afrates.pair': pair.pair, 'afrates.interval': interval, 'afrates.month': month }))
      : through(byteStream(candleCsv(chunks, pair, true)), zlib.createGzip({ level: FILE_GZIP_LEVEL }));
  return keepAs && digest ? through(made, files.keeper(keepAs, () => digest.hex())) : made;
}
