// A JSON page of more candles than one statement reads is streamed a slice at a time: its text is
// what the whole page written at once would be, byte for byte (the same candles as the small
// pages, answered whole, hold; meta counts the same), gzipped or not, and whichever statement or
// slice the page's end falls in.
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROWS_PER_STATEMENT } from '../../api/queries/candles.js';
import { TIER_RULES } from '../../lib/tiers.js';
import { seedMonth, startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
let range: string;

beforeAll(async () => {
  t = await startTestApi({ hours: 2 });
  const now = new Date();
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1)).toISOString().slice(0, 7);
  const { from, to } = await seedMonth(t.db, month, 12);
  range = `pair=BTCNGN&interval=5m&start=${from.toISOString().slice(0, 10)}&end=${new Date(to.getTime() - 1).toISOString().slice(0, 10)}`;
});
afterAll(async () => {
  await t?.close();
});

/** The answer's bytes as sent (gunzipped when gzip was asked for), its headers and whether it had a Content-Length. */
function raw(query: string, gzip = false): Promise<{ text: string; headers: http.IncomingHttpHeaders }> {
  // node:http, not fetch: fetch decodes gzip itself, and the bytes as sent are what is compared
  return new Promise((resolve, reject) => {
    const headers = { 'X-API-Key': t.keys.enterprise, 'Accept-Encoding': gzip ? 'gzip' : 'identity' };
    http
      .get(`${t.api.url}/v1/rates/historical?${query}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          try {
            expect(res.statusCode).toBe(200);
            expect(res.headers['content-encoding']).toBe(gzip ? 'gzip' : undefined);
            resolve({ text: (gzip ? gunzipSync(bytes) : bytes).toString('utf8'), headers: res.headers });
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The candles from `cursor` (null: the first), `count` of them, read as pages of 500 (each answered whole). */
async function smallPages(cursor: string | null, count: number): Promise<unknown[]> {
  const data: unknown[] = [];
  while (data.length < count) {
    const res = await t.get(`/v1/rates/historical?${range}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, t.keys.enterprise);
    expect(res.status).toBe(200);
    data.push(...res.body.data);
    cursor = res.body.meta.next_cursor;
    if (!res.body.meta.has_more) break;
  }
  return data.slice(0, count);
}

/** What JSON.stringify of the whole page gives: the text a page answered whole is. */
function wholePage(query: URLSearchParams, data: unknown[], requestId: string, hasMore: boolean, limit: number): string {
  const last = data.at(-1) as { time: string } | undefined;
  return JSON.stringify({
    pair: query.get('pair'),
    interval: query.get('interval'),
    start: query.get('start'),
    end: query.get('end'),
    data,
    meta: { request_id: requestId, row_count: data.length, has_more: hasMore, next_cursor: hasMore ? last!.time : null, limit, limit_max: TIER_RULES.enterprise.maxPage },
  });
}

describe('a JSON page longer than one statement', () => {
  it('is the text of the whole page, followed by more, whether gzipped or not', async () => {
    const limit = ROWS_PER_STATEMENT + 101; // its end in the second statement, part way through a slice
    for (const gzip of [false, true]) {
      const query = `${range}&limit=${limit}`;
      const { text, headers } = await raw(query, gzip);
      expect(headers['content-type']).toBe('application/json; charset=utf-8');
      expect(headers['transfer-encoding']).toBe('chunked'); // sent as it is made
      const expected = wholePage(new URLSearchParams(query), await smallPages(null, limit), headers['x-request-id'] as string, true, limit);
      expect(text).toBe(expected);
    }
  });

  it('ends with has_more false where the candles end: fewer than the limit, and exactly the limit', async () => {
    // every candle from a cursor some way into the month: more than one statement's worth
    const first = await t.get(`/v1/rates/historical?${range}&limit=1000`, t.keys.enterprise);
    const cursor = first.body.meta.next_cursor as string;
    const rest = await smallPages(cursor, Infinity);
    expect(rest.length).toBeGreaterThan(ROWS_PER_STATEMENT);
    for (const limit of [10_000, rest.length]) {
      const query = `${range}&limit=${limit}&cursor=${encodeURIComponent(cursor)}`;
      const { text, headers } = await raw(query);
      const expected = wholePage(new URLSearchParams(query), rest, headers['x-request-id'] as string, false, limit);
      expect(text).toBe(expected);
    }
  });

  it('says another page follows when exactly one candle is left beyond the limit', async () => {
    const first = await t.get(`/v1/rates/historical?${range}&limit=1000`, t.keys.enterprise);
    const cursor = first.body.meta.next_cursor as string;
    const rest = await smallPages(cursor, Infinity);
    const limit = rest.length - 1;
    const query = `${range}&limit=${limit}&cursor=${encodeURIComponent(cursor)}`;
    const { text, headers } = await raw(query, true);
    expect(text).toBe(wholePage(new URLSearchParams(query), rest.slice(0, limit), headers['x-request-id'] as string, true, limit));
  });
});
