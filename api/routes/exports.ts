// GET /v1/exports/candles: a month of one pair's candles as one file, gzipped CSV or Parquet, for
// Builder and up; one request, however many rows. The file (api/month-files.ts) is the same bytes
// for the same candles, so its SHA-256 (an RFC 9530 Content-Digest trailer; a HEAD's header) names
// its content: a complete month's kept file while its rows are unchanged, else made while it is sent.
import { Readable } from 'node:stream';
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { validationError } from '../errors.js';
import { makeMonthFile, monthFileMaker, monthRange, onceWhole } from '../month-files.js';
import { knownPair, type Operation } from '../operation.js';
import { PARQUET_TYPE } from '../parquet.js';
import { candlesDigest, RowsDigest, settledThrough } from '../queries/candles.js';
import { storedMonthFile, storeMonthFile, type MonthFileKey } from '../queries/month-files.js';
import { bytesDigest, digestOf, sendStream, through, withDigestTrailer } from '../streamed.js';
import { PAIR, parseQuery } from '../validate.js';
import { DEFAULT_INTERVAL, INTERVAL_NAMES } from '../../lib/intervals.js';

const MONTH = { type: 'string', pattern: '^20\\d{2}-(0[1-9]|1[0-2])$', maxLength: 7, description: 'month, YYYY-MM (UTC), from 2000-01 to the current one' } as const;

const query = {
  type: 'object',
  required: ['pair', 'month'],
  additionalProperties: false,
  properties: {
    pair: PAIR,
    month: MONTH,
    interval: { enum: INTERVAL_NAMES, default: DEFAULT_INTERVAL },
    format: { enum: ['csv', 'parquet'], default: 'csv', description: 'csv: gzipped CSV (application/gzip, a .csv.gz file); parquet: Apache Parquet' },
  },
} as const;

/** What each format is sent as: its media type and file name extension. */
const FORMATS = {
  csv: { type: 'application/gzip', extension: 'csv.gz' },
  parquet: { type: PARQUET_TYPE, extension: 'parquet' },
} as const;

const BINARY = { type: 'string', contentMediaType: 'application/octet-stream' } as const;

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/exports/candles',
    summary: "A month of one pair's candles as a file: gzipped CSV or Parquet",
    description: [
      "The candles of one UTC month, oldest first, with the same values as GET /v1/rates/historical (Builder's columns: time, pair, open, high, low, close, vwap, total_volume, settled, methodology_version, status, data_quality, confidence, divergence_pct, synthetic_price, sources_count). One request, however many rows; streamed as it is read.",
      '`format=csv`: a gzip file (`application/gzip`, saved as `.csv.gz`) of RFC 4180 CSV with a header line, values as the JSON shows them, an empty field for null. `format=parquet`: Apache Parquet, numbers DOUBLE (the JSON number), `time` a UTC TIMESTAMP (milliseconds), a row group per 2,000 rows. `Content-Disposition` names the file.',
      "The file's SHA-256 is sent as `Content-Digest: sha-256=:<base64>:` (RFC 9530): in the headers, with `Content-Length`, for a complete month's kept file (`X-Export-Cache: hit`); as an HTTP trailer after the last byte (announced by `Trailer`) for a file made while it is sent. The same candles always give the same bytes, so a HEAD request answers the digest and `Content-Length` in headers either way (for a file not kept it makes the file to do so); it counts as a request.",
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
      'X-Export-Cache': { description: "hit: a complete month's kept file, made before (ahead of requests, or by an earlier one) from the same candles; miss: made now.", schema: { type: 'string', enum: ['hit', 'miss'] } },
      Trailer: { description: 'Content-Digest: a file made while it is sent has its digest in a trailer after the body (not on HEAD, nor for a kept file, which have it in their headers).', schema: { type: 'string' } },
      'Content-Digest': { description: 'A kept file (X-Export-Cache: hit) and every HEAD: `sha-256=:<base64>:`, the SHA-256 of the file (RFC 9530); a file made while it is sent has it as a trailer instead.', schema: { type: 'string' } },
    },
  },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/exports/candles', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const pair = knownPair(deps, q.pair, 'pair');
    // Builder and up reach the whole history (TIER_RULES): no month is too old
    const k: MonthFileKey = { pair: pair.pair, interval: q.interval as MonthFileKey['interval'], month: q.month, format: q.format as MonthFileKey['format'] };
    const { from, to } = monthRange(q.month);
    if (from.getTime() > Date.now()) throw validationError(`'month' ${q.month} has not begun; the latest is ${new Date().toISOString().slice(0, 7)}`);

    const format = FORMATS[k.format];
    // every read on one server, a replica as for the JSON pages when one is caught up
    const { complete, stored, made } = await deps.read.run(async (sql) => {
      const settled = await settledThrough(sql, pair.pair);
      const complete = settled !== null && settled.getTime() >= to.getTime();
      // a complete month's file is kept (api/month-files.ts), and given out while its rows still have the digest it was made from
      const kept = complete ? await storedMonthFile(sql, k) : null;
      const maker = await monthFileMaker();
      const stored = kept && kept.maker === maker && kept.rowsDigest === (await candlesDigest(sql, pair.pair, k.interval, from, to)) ? kept.bytes : null;
      if (stored) return { complete, stored, made: null };
      const digest = complete ? new RowsDigest() : undefined;
      ctx.state.leaveForeground(); // making the file is bulk work (a HEAD reads it through here)
      const file = await makeMonthFile(sql, pair, k, digest);
      // kept once whole, on the primary, before the last byte goes; a failure to keep it fails no download
      const keep = (bytes: Buffer) => storeMonthFile(deps.sql, k, { bytes, rowsDigest: digest!.hex(), maker }).catch((err: unknown) => deps.log.warn({ err, file: k }, 'month file not kept'));
      return { complete, stored, made: digest ? through(file, onceWhole(keep)) : file };
    });
    // a kept file is whole before its first byte: its digest and length go in headers, which every
    // proxy passes on; a file being made has its digest only at its end (a trailer; a HEAD reads it
    // through first). A failure until here is still an error answer, without a file's headers.
    const head = stored ? { length: stored.length, digest: bytesDigest(stored) } : ctx.method === 'HEAD' ? await digestOf(made!) : null;
    ctx.set({
      'Content-Disposition': `attachment; filename="${pair.pair}-${k.interval}-${q.month}${complete ? '' : '-partial'}.${format.extension}"`,
      'X-Export-Complete': String(complete),
      'X-Export-Cache': stored ? 'hit' : 'miss',
    });
    ctx.type = format.type;
    if (head) {
      ctx.set('Content-Digest', head.digest);
      if (stored && ctx.method !== 'HEAD') sendStream(ctx, Readable.from([stored]));
      else ctx.body = '';
      ctx.length = head.length;
      return;
    }
    sendStream(ctx, withDigestTrailer(ctx, made!));
  });
}
