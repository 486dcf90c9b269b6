// A page of GET /v1/rates/historical as JSON. A page of up to WHOLE_PAGE_CANDLES is answered whole,
// as every JSON answer is (its length known; gzipped over 2 KB: api/middleware/compress.ts). A
// longer one is streamed: read a statement at a time (api/queries/candles.ts candleChunks, its
// statements in their turn among the long reads: lib/db/long-reads.ts) and its text made a slice
// of candles at a time, the event loop's other work let in after each slice: a 10,000-candle page
// costs this process's thread a few hundred milliseconds, which would otherwise be one stall for
// every other customer's requests (docs/decisions.md, "Each customer's share").
// Either way the text is JSON.stringify's of the whole page, byte for byte.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { backgroundTurn } from '../lib/foreground.js';
import { shapeCandle } from './candles.js';
import type { AppContext, AppDeps, PairInfo } from './context.js';
import { candleChunks, PAGE_STATEMENT_ROWS, type CandlePageQuery, type PageRow } from './queries/candles.js';
import type { HistoricalResponse } from './schemas.js';
import { byteStream, gzipEncoded, sendStream } from './streamed.js';

/**
 * Candles shaped and written at a time, about a millisecond of the thread, before other work is let
 * in: a small request waits out at most this at each of its steps (bench/README.md, fairness).
 */
const CANDLES_PER_SLICE = 50;
/**
 * The longest page answered whole, with its Content-Length (the dashboard's chart asks for 2,000);
 * a longer one is streamed (docs/decisions.md, "A JSON page of candles longer than 2,000 candles is streamed").
 */
export const WHOLE_PAGE_CANDLES = 2_000;
/** Characters of JSON sent on at a time (a few slices'). */
const PIECE_CHARS = 64 * 1024;

type Head = Pick<HistoricalResponse, 'pair' | 'interval' | 'start' | 'end'>;
type Meta = HistoricalResponse['meta'];

export interface JsonPage {
  /** What the page's JSON begins with: pair, interval, start and end as asked. */
  readonly head: Head;
  readonly query: CandlePageQuery;
  readonly pair: PairInfo;
  /** Builder and up: every verification field (api/candles.ts shapeCandle). */
  readonly full: boolean;
  /** The tier's largest page (meta.limit_max). */
  readonly limitMax: number;
}

/** Answers the page: whole up to WHOLE_PAGE_CANDLES, else streamed a slice of candles at a time. */
export async function sendJsonPage(ctx: AppContext, deps: AppDeps, page: JsonPage): Promise<void> {
  const { query, pair, full } = page;
  const shape = (c: PageRow) => shapeCandle(c, pair.pair, pair.quote, full);
  const meta = (rows: number, hasMore: boolean, last: string | null): Meta => ({
    request_id: ctx.state.requestId,
    row_count: rows,
    has_more: hasMore,
    next_cursor: hasMore ? last : null,
    limit: query.limit,
    limit_max: page.limitMax,
  });
  // one candle past the page says whether another page follows; a page of more than one statement
  // is a long read, bulk work from here on (lib/foreground.ts)
  const chunks = await deps.read.run((sql) => {
    if (query.limit + 1 > PAGE_STATEMENT_ROWS) ctx.state.leaveForeground();
    return candleChunks(sql, { ...query, limit: query.limit + 1 }, { chunkRows: PAGE_STATEMENT_ROWS });
  });
  // a page answered whole is read before answering, and so are the first 2,000-odd candles of a longer one
  const read: PageRow[][] = [];
  let count = 0;
  let ended = false;
  while (count <= WHOLE_PAGE_CANDLES) {
    const next = await chunks.next();
    if (next.done) {
      ended = true;
      break;
    }
    read.push(next.value);
    count += next.value.length;
  }
  if (ended || query.limit <= WHOLE_PAGE_CANDLES) {
    await chunks.return();
    const rows = read.flat();
    const hasMore = rows.length > query.limit;
    const candles = hasMore ? rows.slice(0, query.limit) : rows;
    ctx.body = { ...page.head, data: candles.map(shape), meta: meta(candles.length, hasMore, candles.at(-1)?.t ?? null) } satisfies HistoricalResponse;
    return;
  }
  ctx.type = 'application/json';
  sendStream(ctx, gzipEncoded(ctx, byteStream(pageText(page.head, rowsFrom(read, chunks), query.limit, shape, meta))));
}

/** The chunks in `first`, then what `rest` yields. */
async function* rowsFrom(first: PageRow[][], rest: AsyncGenerator<PageRow[], void>): AsyncGenerator<PageRow[], void> {
  yield* first;
  yield* rest;
}

/**
 * The text of JSON.stringify({...head, data: [the first `limit` rows, shaped], meta}) in pieces: the
 * head, then each slice of candles, then the end with meta (the rows' count, whether a row beyond
 * `limit` followed, the last row's time).
 */
async function* pageText(
  head: Head,
  chunks: AsyncIterable<PageRow[]>,
  limit: number,
  shape: (c: PageRow) => unknown,
  meta: (rows: number, hasMore: boolean, last: string | null) => Meta,
): AsyncGenerator<string> {
  // slices are joined into pieces of PIECE_CHARS: a piece is a write to gzip's thread and back
  let piece = `${JSON.stringify(head).slice(0, -1)},"data":[`;
  let written = 0;
  let hasMore = false;
  let last: string | null = null;
  reading: for await (const rows of chunks) {
    for (let at = 0; at < rows.length; ) {
      const slice = rows.slice(at, at + Math.min(CANDLES_PER_SLICE, limit - written));
      if (slice.length === 0) {
        hasMore = true;
        break reading;
      }
      const text = JSON.stringify(slice.map(shape));
      piece += written === 0 ? text.slice(1, -1) : `,${text.slice(1, -1)}`;
      written += slice.length;
      at += slice.length;
      last = slice[slice.length - 1]!.t;
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = '';
      }
      await nextTurn();
      await backgroundTurn();
    }
  }
  yield `${piece}],"meta":${JSON.stringify(meta(written, hasMore, last))}}`;
}
