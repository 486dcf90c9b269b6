// The public endpoints of the web pages: the board (free-tier fields only, for every pair), its
// stream, and the status page's endpoint (no prices; cycles and uptime from ingest_cycles). No key,
// a per-address limit of their own that leaves the address's anonymous budget alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { BOARD_RESPONSE, PUBLIC_STATUS_RESPONSE } from '../../api/schemas.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { openStream } from './sse-client.js';

let t: TestApi;
const ajv = new Ajv({ strict: false, allErrors: true });
const FREE_FIELDS = ['calculation', 'data_freshness_seconds', 'data_quality', 'methodology_version', 'rate', 'sources', 'status'];

beforeAll(async () => {
  t = await startTestApi();
  // collection history for uptime: working cycles 30 and 20 minutes ago, a failed one 10 minutes ago
  await t.db.sql`DELETE FROM ingest_cycles`;
  await t.db.sql`
    INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source, errors) VALUES
      ('trades', 'real', now() - INTERVAL '30 minutes', now() - INTERVAL '30 minutes' + INTERVAL '2 seconds', '{"luno": 5}', '[]'),
      ('trades', 'real', now() - INTERVAL '20 minutes', now() - INTERVAL '20 minutes' + INTERVAL '2 seconds', '{"luno": 3, "valr": 2}', '[{"source": "valr", "error": "timeout"}]'),
      ('trades', 'real', now() - INTERVAL '10 minutes', now() - INTERVAL '10 minutes' + INTERVAL '2 seconds', '{"luno": 0}', '[{"source": "luno", "error": "HTTP 500"}]')`;
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/board', () => {
  it("lists every public pair with nothing beyond the free tier's fields, without a key", async () => {
    const res = await t.get('/v1/board');
    expect(res.status).toBe(200);
    const validate = ajv.compile(BOARD_RESPONSE);
    expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
    expect(Object.keys(res.body.data).sort()).toEqual([...t.api.deps.pairs.keys()].sort());
    const rates = Object.values(res.body.data).filter((r) => r !== null) as Record<string, unknown>[];
    expect(rates.length).toBeGreaterThan(5);
    for (const r of rates) expect(Object.keys(r).sort()).toEqual(FREE_FIELDS);
    expect(res.body.meta.snapshot).toBe(t.api.deps.snapshot.version);
    expect(res.body.meta.thresholds.NGN).toEqual({ verified: 5, caution: 10 });
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
  });

  it("has a per-address limit of its own: the address's anonymous budget is untouched", async () => {
    const anonymous = async () => Number((await t.get('/v1/pairs')).headers.get('x-ratelimit-remaining'));
    const before = await anonymous();
    for (let i = 0; i < 3; i++) {
      const res = await t.get('/v1/board');
      expect(res.headers.get('ratelimit-policy')).toMatch(/"public";q=60;w=60/);
    }
    expect(await anonymous()).toBe(before - 1);
  });
});

describe('GET /v1/board/stream', () => {
  it('pushes the board after each refresh, with growing ids', async () => {
    const s = await openStream(`${t.api.url}/v1/board/stream`);
    const first = await s.next();
    expect(first?.event).toBe('board');
    expect(Object.keys(JSON.parse(first!.data).data)).toHaveLength(t.api.deps.pairs.size);
    await t.api.deps.snapshot.refresh();
    const second = await s.next();
    expect(Number(second!.id)).toBeGreaterThan(Number(first!.id));
    expect(JSON.parse(second!.data).meta.snapshot).toBe(Number(second!.id));
    s.close();
  });

  it('holds at most 3 open per address', async () => {
    const streams = [];
    for (let i = 0; i < 3; i++) streams.push(await openStream(`${t.api.url}/v1/board/stream`));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    const fourth = await openStream(`${t.api.url}/v1/board/stream`);
    expect(fourth.status).toBe(429);
    expect(await fourth.json()).toMatchObject({ error: 'rate_limit_exceeded', status: 429 });
    for (const s of streams) s.close();
  });
});

describe('GET /v1/status/public', () => {
  it('shows every pair, recent cycles and uptime, and no price', async () => {
    const res = await t.get('/v1/status/public');
    expect(res.status).toBe(200);
    const validate = ajv.compile(PUBLIC_STATUS_RESPONSE);
    expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
    expect(Object.keys(res.body.pairs).sort()).toEqual([...t.api.deps.pairs.keys()].sort());
    expect(res.body.pairs.BTCZAR.sources_active.sort()).toEqual(['binance', 'luno', 'valr']);
    expect(JSON.stringify(res.body)).not.toMatch(/"(rate|price|vwap)"/);

    expect(res.body.cycles.map((c: { ok: boolean }) => c.ok)).toEqual([false, true, true]); // newest first
    expect(res.body.cycles[1]).toMatchObject({ sources_ok: ['luno'], sources_failed: ['valr'], trades: 5 });
    // six completed 5-minute slots since the first cycle, two of them with a working cycle
    expect(res.body.uptime.h24).toBeCloseTo(2 / 6, 4);
    expect(res.body.uptime.d7).toBeCloseTo(2 / 6, 4);
  });
});

describe('the public limit', () => {
  it('answers 429 in the error shape beyond 60 requests a minute per address', async () => {
    let refused = null;
    for (let i = 0; i < 125 && !refused; i++) {
      const res = await t.get('/v1/status/public');
      if (res.status === 429) refused = res;
    }
    expect(refused?.body).toMatchObject({ error: 'rate_limit_exceeded', status: 429 });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
