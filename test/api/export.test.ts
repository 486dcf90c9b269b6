// Bulk export over real HTTP: GET /v1/rates/historical as CSV (the same pages as JSON), and a
// month's file from GET /v1/exports/candles as gzipped CSV and as Parquet, each read back with a
// standard reader (csv-parse; hyparquet, the writer's own reader) and compared with the JSON API's
// candles; the content digest checked against the bytes; streaming shown by holding a statement.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { timestamp } from '../../lib/format.js';
import { storeDueMonthFiles } from '../../api/month-files.js';
import { ROWS_PER_STATEMENT } from '../../api/queries/candles.js';
import type { Sql } from '../../lib/db/connect.js';
import { createLogger } from '../../lib/log.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { insertTrades } from '../../pipeline/store.js';
import { INTERVAL_NAMES } from '../../lib/intervals.js';
import { seedMonth, startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
/** A past month with 5-minute candles for BTCNGN: two months before this one. */
let month: string;
let monthEnd: string;

const today = () => new Date().toISOString().slice(0, 10);
/** The day five hours ago: from it to today lies at least five of the six seeded hours, whatever the time of day. */
const recentDay = () => new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10);
const monthOf = (monthsBack: number) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1)).toISOString().slice(0, 7);
};

beforeAll(async () => {
  t = await startTestApi({ hours: 6 });
  month = monthOf(2);
  const { to } = await seedMonth(t.db, month, 12);
  monthEnd = new Date(to.getTime() - 86_400_000).toISOString().slice(0, 10);
}, 240_000);

afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;

/** A JSON candle laid out flat: its fields, then its verification's. */
function flat(candle: Json): Json {
  const { verification, ...own } = candle;
  return { ...own, ...(verification as Json) };
}

/** How CSV writes a JSON value: numbers and booleans as JSON does, text as is, null as nothing. */
const csvText = (v: unknown) => (v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** Every candle of a JSON query, page after page (enterprise: 10,000 a page). */
async function jsonCandles(query: string, key = t.keys.enterprise): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const res = await t.get(`/v1/rates/historical?${query}&limit=10000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
    expect(res.status).toBe(200);
    out.push(...(res.body.data as Json[]));
    cursor = res.body.meta.next_cursor;
  } while (cursor);
  return out;
}

interface Raw {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly trailers: NodeJS.Dict<string>;
  readonly bytes: Buffer;
}

/** A GET as node:http makes it (it reads trailers, which fetch does not), the body as sent. */
function raw(path: string, key: string, headers: Record<string, string> = {}, method = 'GET', api = t): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${api.api.url}${path}`, { method, headers: { 'X-API-Key': key, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, trailers: res.trailers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const sha256 = (bytes: Buffer) => `sha-256=:${crypto.createHash('sha256').update(bytes).digest('base64')}:`;

describe('GET /v1/rates/historical as CSV', () => {
  const page = (extra = '') => `/v1/rates/historical?pair=BTCNGN&start=${recentDay()}&end=${today()}&interval=5m&limit=40${extra}`;

  it('is the JSON page, field for field, the candle laid out flat and written as JSON writes it', async () => {
    const key = await t.key('builder');
    const json = await t.get(page(), key);
    const csv = await t.get(page('&format=csv'), key);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(csv.headers.get('vary')).toMatch(/\bAccept\b/);
    const data = (json.body.data as Json[]).map(flat);
    expect(data.length).toBe(40);
    const text = csv.body as string;
    expect(text.split('\r\n')[0]).toBe(Object.keys(data[0]!).join(',')); // every JSON field is a column, in order
    const records: Record<string, string>[] = parse(text, { columns: true });
    expect(records.map((r) => Object.values(r))).toEqual(data.map((c) => Object.values(c).map(csvText)));
    expect(records.some((r) => r.divergence_pct === '')).toBe(data.some((c) => c.divergence_pct === null));
  });

  it('shows each tier what its JSON shows: Free without the Builder verification fields', async () => {
    const url = `/v1/rates/historical?pair=BTCNGN&start=${recentDay()}&end=${today()}&limit=5`;
    const json = await t.get(url, t.keys.free);
    const csv = await t.get(`${url}&format=csv`, t.keys.free);
    const records: Record<string, string>[] = parse(csv.body as string, { columns: true });
    expect(Object.keys(records[0]!)).toEqual(['time', 'pair', 'open', 'high', 'low', 'close', 'vwap', 'total_volume', 'settled', 'methodology_version', 'status', 'data_quality']);
    expect(records.map((r) => Object.values(r))).toEqual((json.body.data as Json[]).map((c) => Object.values(flat(c)).map(csvText)));
  });

  it('is chosen by Accept: text/csv unless format says otherwise', async () => {
    const key = await t.key('builder');
    const byAccept = await t.get(page(), key, { Accept: 'text/csv' });
    expect(byAccept.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(byAccept.body).toBe((await t.get(page('&format=csv'), key)).body);
    const json = await t.get(page('&format=json'), key, { Accept: 'text/csv' });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await t.get(page(), key, { Accept: 'application/json, text/csv;q=0.5' })).headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('walks the same pages as JSON: its cursor in X-Next-Cursor and Link, X-Has-More at the end', async () => {
    const key = await t.key('builder');
    const base = `/v1/rates/historical?pair=BTCNGN&start=${recentDay()}&end=${today()}&interval=5m&limit=17`;
    const jsonPages: Json[][] = [];
    const cursors: (string | null)[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.get(`${base}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
      jsonPages.push(res.body.data);
      cursor = res.body.meta.next_cursor;
      cursors.push(cursor);
    } while (cursor);
    expect(jsonPages.length).toBeGreaterThan(2);

    const csvPages: string[][][] = [];
    const csvCursors: (string | null)[] = [];
    let next: string | null = `${base}&format=csv`;
    while (next) {
      const res = await t.get(next, key);
      expect(res.status).toBe(200);
      csvPages.push((parse(res.body as string, { columns: true }) as Record<string, string>[]).map((r) => Object.values(r)));
      const more = res.headers.get('x-has-more');
      expect(more).toMatch(/^(true|false)$/);
      csvCursors.push(res.headers.get('x-next-cursor'));
      const link = res.headers.get('link');
      expect(link === null).toBe(more === 'false');
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
    }
    expect(csvCursors).toEqual(cursors);
    expect(csvPages).toEqual(jsonPages.map((p) => p.map((c) => Object.values(flat(c)).map(csvText))));
  });

  it('is gzip-encoded when the client accepts gzip, the same text decoded', async () => {
    const key = await t.key('builder');
    const plain = await raw(page('&format=csv'), key);
    const zipped = await raw(page('&format=csv'), key, { 'Accept-Encoding': 'gzip' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(zipped.bytes).toString()).toBe(plain.bytes.toString());
  });

  it('answers errors in JSON, with the same rules as JSON', async () => {
    const key = await t.key('builder');
    const bad = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&interval=2h&format=csv`, key);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'validation_error', status: 400 });
    const free = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&interval=5m`, t.keys.free, { Accept: 'text/csv' });
    expect(free.status).toBe(403);
    expect(free.headers.get('content-type')).toMatch(/^application\/json/);
    expect(free.body).toMatchObject({ error: 'interval_not_available', status: 403 });
    expect((await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&format=xml`, key)).body.error).toBe('validation_error');
    const tooMany = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&limit=501&format=csv`, t.keys.free);
    expect(tooMany.body).toMatchObject({ error: 'validation_error', status: 400 });
  });

  it('sends every candle up to its cursor when a late trade fills an empty bucket between where the page ends and its rows', async () => {
    // a day of the seeded month with an empty 5-minute bucket between two candles
    const day = `${month}-20`;
    const candles = await jsonCandles(`pair=BTCNGN&start=${day}&end=${day}&interval=5m`);
    const i = candles.findIndex((c, k) => k + 1 < candles.length && Date.parse(candles[k + 1]!.time as string) - Date.parse(c.time as string) > 300_000);
    expect(i).toBeGreaterThanOrEqual(0);
    const gap = new Date(Date.parse(candles[i]!.time as string) + 300_000);
    const limit = i + 3; // the gap lies inside the page: candles[i] and candles[i + 1] flank it

    // the same database, and a trade stored into the gap once the page's end is found, before its rows are read
    let filled = false;
    const fillGap = new Proxy(t.db.sql, {
      apply(target, self, args: unknown[]) {
        const run = () => Reflect.apply(target as never, self, args);
        if (filled || !(Array.isArray(args[0]) && (args[0] as string[]).join('?').includes('candle_page('))) return run();
        filled = true;
        return insertTrades(t.db.sql, [{ time: new Date(gap.getTime() + 60_000), exchange: 'luno', pair: 'BTCNGN', tradeId: `gap-${Date.now()}`, price: String((candles[i] as Json).close), amount: '0.01', side: 'buy' }])
          .then(() => refreshAggregates(t.db.sql))
          .then(run);
      },
    });
    const filling = await startTestApi({ db: { ...t.db, sql: fillGap } });
    try {
      const res = await filling.get(`/v1/rates/historical?pair=BTCNGN&start=${day}&end=${day}&interval=5m&limit=${limit}&format=csv`, filling.keys.builder);
      expect(filled).toBe(true);
      const cursor = res.headers.get('x-next-cursor');
      expect(cursor).toBe(candles[limit - 1]!.time); // found before the gap was filled
      const times = (parse(res.body as string, { columns: true }) as Record<string, string>[]).map((r) => r.time);
      // the page's candles, the filled bucket among them, through the one its cursor names: none skipped
      expect(times).toEqual([...candles.slice(0, i + 1).map((c) => c.time), timestamp(gap), ...candles.slice(i + 1, limit).map((c) => c.time)]);
    } finally {
      await filling.close();
    }
  });
});

describe('GET /v1/exports/candles', () => {
  const url = (format: string, m = month, interval = '5m') => `/v1/exports/candles?pair=BTCNGN&month=${m}&interval=${interval}&format=${format}`;

  it('gives a month as gzipped CSV equal to the JSON candles of the month, its digest that of the bytes', async () => {
    const key = await t.key('builder');
    const expected = (await jsonCandles(`pair=BTCNGN&start=${month}-01&end=${monthEnd}&interval=5m`)).map(flat);
    expect(expected.length).toBeGreaterThan(4_000); // several statements' worth

    const res = await raw(url('csv'), key);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-disposition']).toBe(`attachment; filename="BTCNGN-5m-${month}.csv.gz"`);
    expect(res.headers['x-export-complete']).toBe('true');
    expect(res.headers.trailer).toBe('Content-Digest');
    expect(res.trailers['content-digest']).toBe(sha256(res.bytes));

    const records: Record<string, string>[] = parse(zlib.gunzipSync(res.bytes), { columns: true });
    expect(Object.keys(records[0]!)).toEqual(Object.keys(expected[0]!));
    expect(records.map((r) => Object.values(r))).toEqual(expected.map((c) => Object.values(c).map(csvText)));
  });

  it('gives the month as Parquet that its reader reads back to the JSON candles, typed', async () => {
    const key = await t.key('builder');
    const expected = (await jsonCandles(`pair=BTCNGN&start=${month}-01&end=${monthEnd}&interval=5m`)).map(flat);
    const res = await raw(url('parquet'), key);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.apache.parquet');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="BTCNGN-5m-${month}.parquet"`);
    expect(res.trailers['content-digest']).toBe(sha256(res.bytes));

    const file = res.bytes.buffer.slice(res.bytes.byteOffset, res.bytes.byteOffset + res.bytes.length) as ArrayBuffer;
    const meta = parquetMetadata(file);
    expect(Number(meta.num_rows)).toBe(expected.length);
    expect(meta.row_groups.length).toBe(Math.ceil(expected.length / ROWS_PER_STATEMENT)); // a row group a statement
    const types = Object.fromEntries(meta.schema.slice(1).map((s) => [s.name, [s.type, s.repetition_type]]));
    expect(types).toMatchObject({ time: ['INT64', 'REQUIRED'], open: ['DOUBLE', 'REQUIRED'], vwap: ['DOUBLE', 'OPTIONAL'], settled: ['BOOLEAN', 'REQUIRED'], status: ['BYTE_ARRAY', 'REQUIRED'], sources_count: ['INT32', 'REQUIRED'] });
    expect(meta.key_value_metadata).toEqual(expect.arrayContaining([{ key: 'afrates.month', value: month }]));

    const rows = (await parquetReadObjects({ file })) as Json[];
    const asJson = rows.map((r) => ({ ...r, time: timestamp(r.time as Date) }));
    expect(asJson).toEqual(expected);
  });

  it('is the same file each time, and a HEAD states its length and digest', async () => {
    for (const format of ['csv', 'parquet']) {
      await t.db.sql`DELETE FROM month_files`;
      const made = await raw(url(format), t.keys.enterprise);
      expect(made.headers['x-export-cache']).toBe('miss');
      expect(made.trailers['content-digest']).toBe(sha256(made.bytes)); // known only at the end: a trailer
      await t.db.sql`DELETE FROM month_files`;
      const madeHead = await raw(url(format), t.keys.enterprise, {}, 'HEAD'); // of a file not kept: made (and kept), then told
      expect(madeHead.headers['x-export-cache']).toBe('miss');
      const again = await raw(url(format), t.keys.enterprise);
      expect(again.bytes.equals(made.bytes)).toBe(true);
      expect(again.headers['x-export-cache']).toBe('hit'); // a complete month: made once, then kept
      // a kept file's digest and length come in its headers, which any proxy passes on; no trailer
      expect(again.headers['content-digest']).toBe(made.trailers['content-digest']);
      expect(Number(again.headers['content-length'])).toBe(made.bytes.length);
      expect(again.headers.trailer).toBeUndefined();
      for (const head of [madeHead, await raw(url(format), t.keys.enterprise, {}, 'HEAD')]) {
        expect(head.status).toBe(200);
        expect(head.bytes.length).toBe(0);
        expect(head.headers['content-digest']).toBe(made.trailers['content-digest']);
        expect(Number(head.headers['content-length'])).toBe(made.bytes.length);
      }
    }
  });

  it('gives the month still running as it stands, marked partial', async () => {
    const key = await t.key('builder');
    const current = monthOf(0);
    const res = await raw(url('csv', current), key);
    expect(res.status).toBe(200);
    expect(res.headers['x-export-complete']).toBe('false');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="BTCNGN-5m-${current}-partial.csv.gz"`);
    expect((await raw(url('csv', current), key)).headers['x-export-cache']).toBe('miss'); // a running month is made anew each time
    const records: Record<string, string>[] = parse(zlib.gunzipSync(res.bytes), { columns: true });
    const expected = (await jsonCandles(`pair=BTCNGN&start=${current}-01&end=${today()}&interval=5m`)).map(flat);
    expect(records.length).toBeGreaterThan(0);
    // the open candle may move between the two reads: the settled ones may not
    const settled = (rows: unknown[][]) => rows.filter((r) => r[8] === 'true');
    expect(settled(records.map((r) => Object.values(r)))).toEqual(settled(expected.map((c) => Object.values(c).map(csvText))));
  });

  it('gives an empty month as a file with its columns and no rows', async () => {
    const key = await t.key('builder');
    const csv = await raw(url('csv', '2020-01', '1d'), key);
    expect(zlib.gunzipSync(csv.bytes).toString()).toBe('time,pair,open,high,low,close,vwap,total_volume,settled,methodology_version,status,data_quality,confidence,divergence_pct,synthetic_price,sources_count\r\n');
    const parquet = await raw(url('parquet', '2020-01', '1d'), key);
    const file = parquet.bytes.buffer.slice(parquet.bytes.byteOffset, parquet.bytes.byteOffset + parquet.bytes.length) as ArrayBuffer;
    expect(Number(parquetMetadata(file).num_rows)).toBe(0);
    expect(parquetMetadata(file).schema.length).toBe(17); // the root and a column per field
  });

  it('is for Builder and up, counted as one request', async () => {
    const free = await t.get(url('csv'), t.keys.free);
    expect(free.status).toBe(403);
    expect(free.body).toMatchObject({ error: 'tier_restricted', status: 403 });
    expect((await t.get(url('csv'), null)).status).toBe(401);
    const key = await t.key('builder');
    const first = await raw(url('parquet'), key);
    const second = await raw(url('csv'), key);
    expect(Number(first.headers['x-quota-remaining']) - Number(second.headers['x-quota-remaining'])).toBe(1);
  });

  it('refuses bad input with a validation_error naming it', async () => {
    const key = await t.key('builder');
    const cases: [string, RegExp][] = [
      [`/v1/exports/candles?pair=BTCNGN&month=${month}-01`, /month/],
      ['/v1/exports/candles?pair=BTCNGN&month=2026-13', /month/],
      ['/v1/exports/candles?pair=BTCNGN&month=1999-12', /month/],
      [`/v1/exports/candles?pair=BTCNGN&month=${monthOf(-1)}`, /has not begun/],
      [`/v1/exports/candles?pair=BTCXYZ&month=${month}`, /unknown pair/],
      [`/v1/exports/candles?pair=BTCNGN&month=${month}&format=xlsx`, /format/],
      [`/v1/exports/candles?pair=BTCNGN&month=${month}&interval=2h`, /interval/],
      ['/v1/exports/candles?pair=BTCNGN', /month/],
      [`/v1/exports/candles?pair=BTCNGN&month=${month}&cursor=x`, /cursor/],
    ];
    for (const [path, message] of cases) {
      const res = await t.get(path, key);
      expect(res.status, path).toBe(400);
      expect(res.body, path).toMatchObject({ error: 'validation_error', status: 400 });
      expect(res.body.message, path).toMatch(message);
    }
  });
});

/**
 * `sql`, except that candle_page statements after the first `free` wait until let go, and the
 * n-th (from 1) fails once `failAt` is set; `started` counts those that ran.
 */
function heldPages(sql: Sql) {
  const state = { free: Infinity, failAt: 0, started: 0, release: () => {} };
  let gate = new Promise<void>((r) => (state.release = r));
  const proxy = new Proxy(sql, {
    apply(target, self, args: unknown[]) {
      if (!(Array.isArray(args[0]) && (args[0] as string[]).join('?').includes('candle_page('))) return Reflect.apply(target as never, self, args);
      const n = ++state.started;
      if (n === state.failAt) return Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
      if (n <= state.free) return Reflect.apply(target as never, self, args);
      state.started--; // counted when it runs
      return gate.then(() => {
        state.started++;
        return Reflect.apply(target as never, self, args);
      });
    },
  });
  return {
    sql: proxy,
    state,
    reset() {
      Object.assign(state, { free: Infinity, failAt: 0, started: 0 });
      gate = new Promise<void>((r) => (state.release = r));
    },
  };
}

describe('a complete month kept once made', () => {
  const url = (format: string) => `/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=${format}`;

  it('is made ahead of its first request, newest month first, a bounded number a run, the same bytes as made on request', async () => {
    const made: Record<string, Buffer> = {};
    for (const format of ['csv', 'parquet']) {
      await t.db.sql`DELETE FROM month_files`;
      const res = await raw(url(format), t.keys.enterprise);
      expect(res.headers['x-export-cache']).toBe('miss');
      made[format] = res.bytes;
    }
    await t.db.sql`DELETE FROM month_files`;
    const log = createLogger('silent');
    // BTCNGN's months from its first candle (the seeded month) through the last one settled wholly
    // (last month), a file each per interval and format
    const perMonth = INTERVAL_NAMES.length * 2;
    expect(await storeDueMonthFiles(t.db.sql, log, 4)).toBe(4);
    const kept = await t.db.sql<{ month: string }[]>`SELECT to_char(month, 'YYYY-MM') AS month FROM month_files`;
    expect(kept.map((r) => r.month)).toEqual(Array(4).fill(monthOf(1))); // newest first
    expect(await storeDueMonthFiles(t.db.sql, log, 100)).toBe(2 * perMonth - 4);
    expect(await storeDueMonthFiles(t.db.sql, log, 100)).toBe(0); // nothing left to make
    for (const format of ['csv', 'parquet']) {
      const res = await raw(url(format), t.keys.enterprise);
      expect(res.headers['x-export-cache'], format).toBe('hit');
      expect(res.bytes.equals(made[format]!), format).toBe(true);
      expect(res.headers['content-digest']).toBe(sha256(res.bytes));
    }
  });

  it('asked for by several clients at once before it is kept, gives each the same file and keeps one', async () => {
    await t.db.sql`DELETE FROM month_files`;
    const all = await Promise.all(Array.from({ length: 4 }, () => raw(url('parquet'), t.keys.enterprise)));
    for (const res of all) {
      expect(res.status).toBe(200);
      expect(res.bytes.equals(all[0]!.bytes)).toBe(true);
      expect(res.trailers['content-digest'] ?? res.headers['content-digest']).toBe(sha256(res.bytes));
    }
    const kept = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM month_files WHERE format = 'parquet' AND interval = '5m'`;
    expect(kept[0]!.n).toBe(1);
    const next = await raw(url('parquet'), t.keys.enterprise);
    expect(next.headers['x-export-cache']).toBe('hit');
    expect(next.bytes.equals(all[0]!.bytes)).toBe(true);
  });

  it('is made again when it was kept by code that makes other bytes (another version), never served as it was', async () => {
    await raw(url('csv'), t.keys.enterprise);
    expect((await raw(url('csv'), t.keys.enterprise)).headers['x-export-cache']).toBe('hit');
    // as a deploy finds the files an older version kept
    await t.db.sql`UPDATE month_files SET maker = 'an-older-version', bytes = ${Buffer.from('older bytes')} WHERE format = 'csv'`;
    const again = await raw(url('csv'), t.keys.enterprise);
    expect(again.headers['x-export-cache']).toBe('miss');
    expect(again.bytes.toString()).not.toBe('older bytes');
    expect(again.trailers['content-digest']).toBe(sha256(again.bytes));
    expect((await raw(url('csv'), t.keys.enterprise)).headers['x-export-cache']).toBe('hit'); // kept anew
    // and the service makes every file the older version kept again, ahead of requests
    const older = (await t.db.sql`UPDATE month_files SET maker = 'an-older-version' RETURNING 1`).length;
    expect(older).toBeGreaterThan(0);
    expect(await storeDueMonthFiles(t.db.sql, createLogger('silent'), 100)).toBeGreaterThanOrEqual(older);
    expect((await t.db.sql`SELECT count(*)::int AS n FROM month_files WHERE maker = 'an-older-version'`)[0]!.n).toBe(0);
  });

  it('is made again when a late trade changes its candles, never served as it was', async () => {
    for (const format of ['csv', 'parquet']) await raw(url(format), t.keys.enterprise); // kept
    const before = { csv: await raw(url('csv'), t.keys.enterprise), parquet: await raw(url('parquet'), t.keys.enterprise) };
    expect(before.csv.headers['x-export-cache']).toBe('hit');

    // a trade stored late into the month's 10th day, far from the bucket's price: its candle moves
    const at = new Date(`${month}-10T12:01:00Z`);
    const day = `pair=BTCNGN&start=${month}-10&end=${month}-10&interval=5m`;
    const candleAt = async () => (await jsonCandles(day)).find((c) => c.time === timestamp(new Date(`${month}-10T12:00:00Z`)))!;
    const bucket = await candleAt();
    const price = Number((bucket as Json).vwap) * 1.5;
    await insertTrades(t.db.sql, [{ time: at, exchange: 'luno', pair: 'BTCNGN', tradeId: `late-${Date.now()}`, price: price.toFixed(2), amount: '5', side: 'buy' }]);
    await refreshAggregates(t.db.sql);
    const moved = await candleAt();
    expect((moved as Json).vwap).not.toBe((bucket as Json).vwap);

    for (const format of ['csv', 'parquet'] as const) {
      const after = await raw(url(format), t.keys.enterprise);
      expect(after.headers['x-export-cache'], format).toBe('miss');
      expect(after.bytes.equals(before[format].bytes), format).toBe(false);
      expect(after.trailers['content-digest']).toBe(sha256(after.bytes));
      const again = await raw(url(format), t.keys.enterprise);
      expect(again.headers['x-export-cache'], format).toBe('hit');
      expect(again.bytes.equals(after.bytes), format).toBe(true);
    }
    const records: Record<string, string>[] = parse(zlib.gunzipSync((await raw(url('csv'), t.keys.enterprise)).bytes), { columns: true });
    expect(records.find((r) => r.time === (moved as Json).time)?.vwap).toBe(String((moved as Json).vwap));
  });
});

describe('a month streamed while it is read', () => {
  let held: ReturnType<typeof heldPages>;
  let second: TestApi;

  const logFile = path.join(os.tmpdir(), `afrates-export-${crypto.randomBytes(4).toString('hex')}.log`);
  const logLines = () => fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string; err?: { code?: string } });

  beforeAll(async () => {
    held = heldPages(t.db.sql);
    fs.writeFileSync(logFile, '');
    // the same database, its statements watched; its log kept
    second = await startTestApi({ db: { ...t.db, sql: held.sql }, log: createLogger('info', {}, logFile) });
  });

  // no month file kept: every request here makes its file, reading its statements
  beforeEach(async () => {
    await t.db.sql`DELETE FROM month_files`;
  });

  afterAll(async () => {
    held?.state.release();
    await second?.close();
    fs.rmSync(logFile, { force: true });
  });

  for (const format of ['csv', 'parquet']) {
    it(`sends the first bytes of the ${format} file before its second statement has run`, async () => {
      held.reset();
      held.state.free = 1;
      const res = await fetch(`${second.api.url}/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=${format}`, { headers: { 'X-API-Key': second.keys.builder } });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read(); // had the file waited for its last row, this would never come
      expect(first.value!.length).toBeGreaterThan(0);
      expect(held.state.started).toBe(1);

      held.state.release();
      const chunks = [Buffer.from(first.value!)];
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(Buffer.from(r.value));
      expect(held.state.started).toBeGreaterThan(2);
      const whole = await raw(`/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=${format}`, t.keys.enterprise);
      expect(Buffer.concat(chunks).equals(whole.bytes)).toBe(true);
    });
  }

  it('cuts the connection when a statement fails after the file has begun: no short file that looks whole', async () => {
    held.reset();
    held.state.failAt = 2;
    const res = await raw(`/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=csv`, second.keys.builder, {}, 'GET', second).catch((err: Error) => err);
    expect(res).toBeInstanceOf(Error);
    expect((res as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    await expect.poll(() => logLines().some((l) => l.level === 50 && l.msg === 'request failed' && l.err?.code === '57P01'), { timeout: 5_000 }).toBe(true);
    // the API answers the next request as ever
    held.reset();
    expect((await second.get(`/v1/exports/candles?pair=BTCNGN&month=${month}&interval=1d`, second.keys.builder)).status).toBe(200);
  });

  it('answers a failure of the first statement with the error shape, nothing sent before it', async () => {
    held.reset();
    held.state.failAt = 1;
    const res = await second.get(`/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=parquet`, second.keys.builder);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'service_unavailable', status: 503 });
  });

  it('keeps no file whose making failed, and answers a failure before the first byte without a file name', async () => {
    // nothing kept yet: the first candle_page statement is the first rows
    const keeping = second;
    try {
      const path = `/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=csv`;
      held.reset();
      held.state.failAt = 1; // the first rows
      const refused = await raw(path, keeping.keys.builder, {}, 'GET', keeping);
      expect(refused.status).toBe(503);
      expect(refused.headers['content-disposition']).toBeUndefined(); // `curl -OJ` saves no error as a .csv.gz
      expect(JSON.parse(refused.bytes.toString())).toMatchObject({ error: 'service_unavailable', status: 503 });

      held.reset();
      held.state.failAt = 2; // the second statement of rows, once the file has begun
      const cut = await raw(path, keeping.keys.builder, {}, 'GET', keeping).catch((err: Error) => err);
      expect((cut as NodeJS.ErrnoException).code).toBe('ECONNRESET');

      held.reset();
      const made = await raw(path, keeping.keys.builder, {}, 'GET', keeping);
      expect(made.headers['x-export-cache']).toBe('miss'); // neither failure left a file behind
      const again = await raw(path, keeping.keys.builder, {}, 'GET', keeping);
      expect(again.headers['x-export-cache']).toBe('hit');
      expect(again.bytes.equals(made.bytes)).toBe(true);
    } finally {
      held.reset();
    }
  });

  it('logs a download the client cancelled as the client leaving, not as a failure', async () => {
    held.reset();
    held.state.free = 1;
    const before = logLines().length;
    // the client resets its connection (TCP RST) once the file has begun: the server's read of it fails
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${second.api.url}/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=csv`, { headers: { 'X-API-Key': second.keys.builder } }, (res) => {
          res.once('data', () => {
            res.socket.resetAndDestroy();
            resolve();
          });
        })
        .on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    });
    await expect.poll(() => logLines().some((l) => l.msg === 'client left before the answer ended'), { timeout: 5_000 }).toBe(true);
    held.state.release();
    expect(logLines().slice(before).filter((l) => l.level >= 50)).toEqual([]);
  });
});
