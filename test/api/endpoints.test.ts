// Every endpoint over HTTP, per tier, with responses checked against the schemas the OpenAPI
// document is built from.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { operations } from '../../api/routes/index.js';
import { startTestApi, type HttpResult, type TestApi } from '../support/api.js';
import * as ref from '../support/reference.js';
import { insertTrades } from '../../pipeline/store.js';
import { refreshAggregates } from '../../lib/db/refresh.js';

let t: TestApi;
let free: string; // a fresh free key per test: the free tier allows 10 requests a minute
const ajv = new Ajv({ strict: false, allErrors: true });

function expectShape(res: HttpResult, path: string, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const op = operations.find((o) => o.path === path)!;
  const validate = ajv.compile(op.response);
  expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
}

function expectError(res: HttpResult, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ error: code, status });
  expect(typeof res.body.message).toBe('string');
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message', 'status']);
}

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  t = await startTestApi({ hours: 30 });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  free = await t.key('free');
});

describe('authentication', () => {
  it('refuses a missing or unknown key with 401 unauthorized', async () => {
    expectError(await t.get('/v1/pairs'), 401, 'unauthorized');
    expectError(await t.get('/v1/pairs', 'afr_live_' + 'x'.repeat(32)), 401, 'unauthorized');
  });

  it('issues a free key once per email, usable at once, shown only in that response', async () => {
    const res = await t.post('/v1/auth/free-key', { email: 'new@example.test', customer_name: 'Ọlá Foods' }); // any script
    expectShape(res, '/v1/auth/free-key', 201);
    expect(res.body).toMatchObject({ tier: 'free', monthly_quota: 5000 });
    expect((await t.get('/v1/pairs', res.body.api_key)).status).toBe(200);
    const again = await t.post('/v1/auth/free-key', { email: 'NEW@example.test' });
    expectError(again, 409, 'conflict');
    const stored = await t.db.sql`SELECT key_hash FROM api_keys WHERE email = 'new@example.test'`;
    expect(stored[0]!.key_hash).not.toContain(res.body.api_key.slice(9));
  });

  it('refuses bad free-key bodies with 400', async () => {
    expectError(await t.post('/v1/auth/free-key', '{"email": '), 400, 'validation_error');
    expectError(await t.post('/v1/auth/free-key', { email: 'not-an-email' }), 400, 'validation_error');
    expectError(await t.post('/v1/auth/free-key', {}), 400, 'validation_error');
    expectError(await t.post('/v1/auth/free-key', { email: 'a@b.test', admin: true }), 400, 'validation_error');
  });
});

describe('GET /v1/rates/live', () => {
  it('gives free keys the basic fields only', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCNGN,ETHNGN', free);
    expectShape(res, '/v1/rates/live');
    expect(Object.keys(res.body.data).sort()).toEqual(['BTCNGN', 'ETHNGN']);
    expect(Object.keys(res.body.data.BTCNGN).sort()).toEqual(['calculation', 'data_freshness_seconds', 'data_quality', 'methodology_version', 'rate', 'sources', 'status']);
    expect(res.body.data.BTCNGN.calculation).toBe('vwap');
    expect(res.body.data.BTCNGN.sources.map((s: { exchange: string }) => s.exchange).sort()).toEqual(['luno', 'quidax']);
    expect(res.body.meta.timestamp).toMatch(/\+00:00$/);
  });

  it('is the volume-weighted VWAP of each venue’s newest 5-minute candle', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCNGN&include_sources=true', t.keys.builder);
    const byVenue = ref.candles(t.trades.filter((x) => x.pair === 'BTCNGN'), '5m', true);
    const newest = ['luno', 'quidax'].map((v) => byVenue.filter((c) => c.exchange === v).at(-1)!);
    const expected = newest.reduce((s, c) => s + c.pv, 0) / newest.reduce((s, c) => s + c.volume, 0);
    expect(ref.closeTo(res.body.data.BTCNGN.rate, expected, 1e-9)).toBe(true);
    const weights = res.body.data.BTCNGN.pricing.exchange.sources.map((s: { weight: number }) => s.weight);
    expect(weights.reduce((a: number, b: number) => a + b, 0)).toBeCloseTo(1, 9);
  });

  it('adds confidence, divergence, pricing and audit by tier', async () => {
    const builder = await t.get('/v1/rates/live?pairs=BTCNGN&include_synthetic=true&include_sources=true', t.keys.builder);
    expectShape(builder, '/v1/rates/live');
    const rate = builder.body.data.BTCNGN;
    expect(rate.confidence).toBeGreaterThan(0);
    expect(rate.confidence).toBeLessThanOrEqual(1);
    expect(rate.pricing.synthetic.method).toBe('cross_rate');
    expect(rate.pricing.synthetic.divergence_pct).toMatch(/^-?\d+\.\d{2}%$/);
    expect(rate.audit).toBeUndefined();
    const enterprise = await t.get('/v1/rates/live?pairs=BTCNGN&include_audit=true', t.keys.enterprise);
    expect(enterprise.body.data.BTCNGN.audit.signature).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('serves a pair without venues from its synthetic price, labelled as such', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCKES,BTCNGN', t.keys.builder);
    expectShape(res, '/v1/rates/live');
    const kes = res.body.data.BTCKES;
    expect(kes).toMatchObject({ calculation: 'synthetic', status: 'unverified', data_quality: 'low' });
    expect(kes.sources).toEqual([expect.objectContaining({ exchange: 'synthetic' })]);
    expect(kes.flags).toContain('synthetic_only');
    // a number, as the contract types it: the rate is the synthetic price, so no divergence
    expect(kes.synthetic_divergence_pct).toBe(0);
    const priced = await t.get('/v1/rates/live?pairs=BTCKES&include_synthetic=true', t.keys.builder);
    expect(priced.body.data.BTCKES.pricing.synthetic).toMatchObject({ divergence: 0, divergence_pct: '0.00%' });
  });

  it('calls a pair live or not in one voice in /v1/pairs and /v1/rates/markets, at the hour\'s edge too', async () => {
    // exactly 3,601 s after a newest trade that fell inside a second: live and markets count from
    // the whole second (3,600 s: live), and pairs counted the milliseconds (3,601 s: not live)
    const e = t.api.deps.snapshot.all().find((x) => x.calculation === 'vwap' && x.time.getTime() % 1000 !== 0)!;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(e.time.getTime() + 3_601_000);
      const pairs = await t.get('/v1/pairs', t.keys.builder);
      const markets = await t.get('/v1/rates/markets', t.keys.builder);
      expect(pairs.body.pairs.find((p: { pair: string }) => p.pair === e.pair).availability.live).toBe(e.pair in markets.body.data);
    } finally {
      vi.useRealTimers();
    }
  });

  it('calls the same pairs live in /v1/pairs, /v1/rates/markets and /v1/rates/live', async () => {
    const pairs = await t.get('/v1/pairs', free);
    const markets = await t.get('/v1/rates/markets', t.keys.builder);
    const live = pairs.body.pairs.filter((p: { availability: { live: boolean } }) => p.availability.live).map((p: { pair: string }) => p.pair);
    expect(live.length).toBeGreaterThan(0);
    expect(live.sort()).toEqual(Object.keys(markets.body.data).sort());
  });

  it('gates include flags and min_confidence by tier with 403 tier_restricted', async () => {
    expectError(await t.get('/v1/rates/live?pairs=BTCNGN&include_sources=true', free), 403, 'tier_restricted');
    expectError(await t.get('/v1/rates/live?pairs=BTCNGN&include_synthetic=true', free), 403, 'tier_restricted');
    expectError(await t.get('/v1/rates/live?pairs=BTCNGN&min_confidence=0.5', free), 403, 'tier_restricted');
    expectError(await t.get('/v1/rates/live?pairs=BTCNGN&include_audit=true', t.keys.professional), 403, 'tier_restricted');
  });

  it('leaves out pairs below min_confidence', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCNGN,BTCKES&min_confidence=0.3', t.keys.builder);
    expect(Object.keys(res.body.data)).toEqual(['BTCNGN']);
  });
});

describe('GET /v1/rates/markets', () => {
  it('lists every active pair with Builder+ fields, and refuses Free', async () => {
    const res = await t.get('/v1/rates/markets', t.keys.builder);
    expectShape(res, '/v1/rates/markets');
    expect(res.body.meta.pair_count).toBe(Object.keys(res.body.data).length);
    expect(Object.keys(res.body.data)).toEqual(expect.arrayContaining(['BTCNGN', 'BTCZAR', 'BTCKES']));
    expect(res.body.data.BTCZAR.confidence).toBeTypeOf('number');
    expectError(await t.get('/v1/rates/markets', free), 403, 'tier_restricted');
  });
});

describe('GET /v1/rates/historical', () => {
  it('walks every page to the end, chronological, no candle missing or repeated', async () => {
    const expected = ref.candles(t.trades.filter((x) => x.pair === 'BTCNGN'), '5m');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: HttpResult = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${daysAgo(2)}&end=${today()}&interval=5m&limit=37${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, t.keys.builder);
      expectShape(res, '/v1/rates/historical');
      expect(res.body.meta.row_count).toBe(res.body.data.length);
      expect(res.body.meta.limit).toBe(37);
      expect(res.body.meta.limit_max).toBe(2500);
      seen.push(...res.body.data.map((c: { time: string }) => c.time));
      cursor = res.body.meta.has_more ? res.body.meta.next_cursor : null;
      if (cursor) expect(cursor).toBe(res.body.data.at(-1).time);
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(expected.length / 37));
    expect(seen).toEqual(expected.map((c) => new Date(c.bucket).toISOString().replace('.000Z', '+00:00')));
  });

  it('gives exact OHLC and VWAP per candle, with verification by tier', async () => {
    const expected = ref.candles(t.trades.filter((x) => x.pair === 'BTCZAR'), '1h');
    const builder = await t.get(`/v1/rates/historical?pair=btczar&start=${daysAgo(2)}&end=${today()}`, t.keys.builder);
    expect(builder.body.interval).toBe('1h');
    builder.body.data.forEach((c: Record<string, number>, i: number) => {
      expect(c.open).toBe(expected[i]!.open);
      expect(c.close).toBe(expected[i]!.close);
      expect(ref.closeTo(c.vwap!, expected[i]!.vwap, 1e-9)).toBe(true);
    });
    const v = builder.body.data[0].verification;
    expect(v.sources_count).toBe(3);
    expect(v.synthetic_price).toBeTypeOf('number');
    const freeRes = await t.get(`/v1/rates/historical?pair=BTCZAR&start=${daysAgo(2)}&end=${today()}`, free);
    expect(Object.keys(freeRes.body.data[0].verification).sort()).toEqual(['data_quality', 'status']);
  });

  it('applies the tier rules: intervals, history depth, page size', async () => {
    expectError(await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&interval=5m`, free), 403, 'interval_not_available');
    expectError(await t.get(`/v1/rates/historical?pair=BTCNGN&start=${daysAgo(45)}&end=${today()}`, free), 403, 'history_limit_exceeded');
    expect((await t.get(`/v1/rates/historical?pair=BTCNGN&start=${daysAgo(45)}&end=${today()}`, t.keys.builder)).status).toBe(200);
    expectError(await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&limit=501`, free), 400, 'validation_error');
    // a misspelt parameter is named, not reported as the missing one it stands for
    const misspelt = await t.get(`/v1/rates/historical?pair%5B%5D=BTCNGN&start=${today()}&end=${today()}`, t.keys.enterprise);
    expectError(misspelt, 400, 'validation_error');
    expect(misspelt.body.message).toBe("unknown query parameter 'pair[]'");
    const def = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}`, t.keys.enterprise);
    expect(def.body.meta).toMatchObject({ limit: 500, limit_max: 10000 });
  });

  it("lets a Free key's paging run that crosses 00:00 UTC finish, but no further back than a day past the window", async () => {
    // start at the oldest day allowed; page 1 before midnight, page 2 (same start, page 1's
    // cursor) after it: the start is now a day outside the window, the rows paged are not
    const DAY = 86_400_000;
    const realNow = Date.now;
    const midnight = Math.floor(realNow() / DAY) * DAY;
    const start = new Date(midnight - 30 * DAY).toISOString().slice(0, 10);
    const url = `/v1/rates/historical?pair=BTCNGN&start=${start}&end=${today()}&interval=1h&limit=3`;
    const first = await t.get(url, free);
    expect(first.status).toBe(200);
    expect(first.body.meta.has_more).toBe(true);
    const offset = midnight + DAY + 1_000 - realNow();
    Date.now = () => realNow() + offset; // the API's clock, one second past the next midnight
    try {
      const second = await t.get(`${url}&cursor=${encodeURIComponent(first.body.meta.next_cursor)}`, free);
      expect(second.status).toBe(200);
      expect(Date.parse(second.body.data[0].time)).toBeGreaterThan(Date.parse(first.body.data.at(-1).time));
      // a new run from that start is refused now, and so is a cursor more than a day outside the window
      expectError(await t.get(url, free), 403, 'history_limit_exceeded');
      const old = new Date(midnight - 31 * DAY).toISOString().replace('.000Z', '+00:00');
      const refused = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${daysAgo(45)}&end=${today()}&interval=1h&cursor=${encodeURIComponent(old)}`, free);
      expectError(refused, 403, 'history_limit_exceeded');
      expect(refused.body.message).toMatch(/'cursor'/); // what was refused: the page, not the start sent with it
    } finally {
      Date.now = realNow;
    }
  });

  it('refuses a cursor outside the range or not of our making', async () => {
    expectError(await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&cursor=2020-01-01T00:00:00%2B00:00`, t.keys.builder), 400, 'validation_error');
    expectError(await t.get(`/v1/rates/historical?pair=BTCNGN&start=${today()}&end=${today()}&cursor=abc`, t.keys.builder), 400, 'validation_error');
    // a 5m page's cursor sent with 1h: accepted, it skipped the hour holding it
    const fiveMinutes = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${daysAgo(1)}&end=${today()}&interval=5m&limit=24`, t.keys.builder);
    const cursor = (fiveMinutes.body.data as { time: string }[]).map((c) => c.time).find((time) => new Date(time).getTime() % 3_600_000 !== 0)!;
    expect(cursor).toBeDefined();
    const hourly = await t.get(`/v1/rates/historical?pair=BTCNGN&start=${daysAgo(1)}&end=${today()}&interval=1h&cursor=${encodeURIComponent(cursor)}`, t.keys.builder);
    expectError(hourly, 400, 'validation_error');
    expect(hourly.body.message).toMatch(/'cursor' is not the start of a 1h candle/);
  });
});

describe('GET /v1/rates/eod', () => {
  it('returns the UTC day snapshot, 404 not_found without data', async () => {
    const day = t.start.toISOString().slice(0, 10); // a day that has ended
    const res = await t.get(`/v1/rates/eod?pair=BTCNGN&date=${day}`, free);
    expectShape(res, '/v1/rates/eod');
    const expected = ref.candles(t.trades.filter((x) => x.pair === 'BTCNGN'), '1d').find((c) => new Date(c.bucket).toISOString().startsWith(day))!;
    expect(res.body).toMatchObject({ date: day, pair: 'BTCNGN', open: expected.open, close: expected.close, high: expected.high, low: expected.low });
    expectError(await t.get('/v1/rates/eod?pair=BTCNGN&date=2020-01-01', free), 404, 'not_found');
    expectError(await t.get(`/v1/rates/eod?pair=BTCNGN&date=${today()}`, free), 404, 'not_found'); // not over yet
  });
});

describe('Builder+ analytics', () => {
  it('spread: bid/ask from the newest settled 5-minute low/high, its sources from that same bucket', async () => {
    // one trade just after the current bucket's edge, one in the last closed bucket that has not
    // settled: neither may show (bid = ask; an answer that changes once the other venues report)
    const open = Math.floor(Date.now() / 300_000) * 300_000;
    await insertTrades(t.db.sql, [
      { time: new Date(open + 1), exchange: 'luno', pair: 'BTCZAR', tradeId: 'edge-1', price: 1_700_000, amount: 0.01, side: 'buy' },
      { time: new Date(open - 1_000), exchange: 'luno', pair: 'BTCZAR', tradeId: 'edge-0', price: 1_650_000, amount: 0.01, side: 'buy' },
    ]);
    await refreshAggregates(t.db.sql);
    const [row] = await t.db.sql<{ settled_through: Date }[]>`SELECT settled_through FROM pair_settlement WHERE pair = 'BTCZAR'`;
    const settled = row!.settled_through;
    expect(settled.getTime()).toBeLessThan(open - 300_000); // settled by the lag: the last closed bucket is not
    const res = await t.get('/v1/rates/spread?pair=BTCZAR', t.keys.builder);
    expectShape(res, '/v1/rates/spread');
    const closed = ref.candles(t.trades.filter((x) => x.pair === 'BTCZAR'), '5m').filter((c) => c.bucket + 300_000 <= settled.getTime()).at(-1)!;
    expect(res.body.timestamp).toBe(new Date(closed.bucket).toISOString().replace('.000Z', '+00:00'));
    expect(res.body.bid).toBe(closed.low);
    expect(res.body.ask).toBe(closed.high);
    expect(res.body.spread_bps).toBeGreaterThan(0);
    expect(res.body.mid).toBeCloseTo((closed.low + closed.high) / 2, 6);
    // the top level is the same bucket as its sources: the lowest bid and highest ask among them
    const venues = res.body.sources.filter((s: { exchange: string }) => s.exchange !== 'synthetic');
    expect(Math.min(...venues.map((s: { bid: number }) => s.bid))).toBe(res.body.bid);
    expect(Math.max(...venues.map((s: { ask: number }) => s.ask))).toBe(res.body.ask);
    expect(res.body.sources.map((s: { exchange: string }) => s.exchange)).toContain('synthetic');
    expect(res.body.note).toMatch(/not order-book/);
    // compared with the synthetic price of that same bucket, as historical has it (not today's)
    const day = res.body.timestamp.slice(0, 10);
    const page = await t.get(`/v1/rates/historical?pair=BTCZAR&interval=5m&start=${day}&end=${day}&limit=1000`, t.keys.enterprise);
    const candle = page.body.data.find((c: { time: string }) => c.time === res.body.timestamp);
    expect(res.body.synthetic.price).toBe(candle.verification.synthetic_price);
    expectError(await t.get('/v1/rates/spread?pair=BTCZAR', free), 403, 'tier_restricted');
  });

  it('premium: series over the last 24 hours by default, meta across the range', async () => {
    const res = await t.get('/v1/premium?pair=BTCNGN', t.keys.professional);
    expectShape(res, '/v1/premium');
    expect(res.body.data.length).toBeGreaterThanOrEqual(23);
    expect(res.body.meta.data_points).toBe(res.body.data.reduce((n: number, d: { data_points: number }) => n + d.data_points, 0));
    expect(res.body.current.local_price).toBeTypeOf('number');
    // the range used, as UTC days, like historical
    expect([res.body.start, res.body.end]).toEqual([daysAgo(1), today()]);
    expectError(await t.get('/v1/premium?pair=BTCNGN', free), 403, 'tier_restricted');
  });

  it('premium: echoes the dates given, and a day is made of hourly observations', async () => {
    const res = await t.get(`/v1/premium?pair=BTCNGN&start=${daysAgo(1)}&end=${today()}&interval=1d`, t.keys.professional);
    expectShape(res, '/v1/premium');
    expect([res.body.start, res.body.end]).toEqual([daysAgo(1), today()]);
    for (const d of res.body.data) expect(d.data_points).toBeLessThanOrEqual(24);
    expectError(await t.get(`/v1/premium?pair=BTCNGN&start=${daysAgo(40)}&end=${today()}&interval=1h`, t.keys.professional), 400, 'validation_error');
  });

  it('indices: MXNCI and ACLI, filterable', async () => {
    const res = await t.get('/v1/indices', t.keys.builder);
    expectShape(res, '/v1/indices');
    expect(Object.keys(res.body.indices).sort()).toEqual(['ACLI', 'MXNCI']);
    expect(res.body.indices.MXNCI.value).toBeGreaterThan(0);
    expect(res.body.indices.MXNCI.change_24h).toBeTypeOf('number');
    const one = await t.get('/v1/indices?index=ACLI', t.keys.builder);
    expect(Object.keys(one.body.indices)).toEqual(['ACLI']);
    expectError(await t.get('/v1/indices', free), 403, 'tier_restricted');
  });
});

describe('pairs, status, health', () => {
  it('pairs lists the 20 public pairs and hides the internal ones', async () => {
    const res = await t.get('/v1/pairs', free);
    expectShape(res, '/v1/pairs');
    expect(res.body.pairs).toHaveLength(20);
    expect(res.body.pairs.map((p: { pair: string }) => p.pair)).not.toContain('BTCUSDT');
    const btc = res.body.pairs.find((p: { pair: string }) => p.pair === 'BTCNGN');
    expect(btc).toMatchObject({ base: 'BTC', quote: 'NGN', exchanges: ['luno', 'quidax'], availability: { live: true } });
  });

  it('status reports ages and failing sources', async () => {
    await t.db.sql`UPDATE venue_health SET consecutive_failures = 2, last_error = 'timeout' WHERE exchange = 'quidax' AND pair = 'BTCNGN'`;
    const res = await t.get('/v1/status', free);
    expectShape(res, '/v1/status');
    expect(res.body.pairs.BTCNGN.sources_failing).toEqual(['quidax']);
    expect(res.body.pairs.BTCNGN.sources_active).toEqual(['luno']);
    expect(res.body.overall_status).toBe('degraded');
    // a venue that answers every fetch but has had no trade in the pair for three 5-minute
    // intervals of being asked is quiet, not failing: it keeps the status from nothing; not quiet
    // while the collector has asked it for less than that (just started)
    await t.db.sql`UPDATE venue_health SET consecutive_failures = 0, last_error = NULL WHERE exchange = 'quidax' AND pair = 'BTCNGN'`;
    await t.db.sql`UPDATE venue_health SET last_success_at = now(), last_trade_at = now() - INTERVAL '16 minutes', watched_since = now() - INTERVAL '5 minutes' WHERE exchange = 'valr' AND pair = 'BTCZAR'`;
    const started = await t.get('/v1/status', await t.key('free'));
    expect(started.body.pairs.BTCZAR).toMatchObject({ sources_quiet: [], sources_failing: [] });
    await t.db.sql`UPDATE venue_health SET watched_since = now() - INTERVAL '16 minutes' WHERE exchange = 'valr' AND pair = 'BTCZAR'`;
    const quiet = await t.get('/v1/status', await t.key('free'));
    expectShape(quiet, '/v1/status');
    expect(quiet.body.pairs.BTCZAR).toMatchObject({ sources_quiet: ['valr'], sources_failing: [] });
    expect(quiet.body.pairs.BTCZAR.sources_active).not.toContain('valr');
    expect(quiet.body.overall_status).toBe(started.body.overall_status); // what the other pairs make it
    // one that has not answered for as long (no failure recorded: a fetch hanging) is failing
    await t.db.sql`UPDATE venue_health SET last_success_at = now() - INTERVAL '16 minutes' WHERE exchange = 'valr' AND pair = 'BTCZAR'`;
    const silent = await t.get('/v1/status', await t.key('free'));
    expect(silent.body.pairs.BTCZAR).toMatchObject({ sources_quiet: [], sources_failing: ['valr'] });
    expect(silent.body.overall_status).toBe('degraded');
    await t.db.sql`UPDATE venue_health SET last_success_at = now(), last_trade_at = now() WHERE exchange = 'valr' AND pair = 'BTCZAR'`;
  });

  it('health needs no key, is not rate limited, and reports real state', async () => {
    const res = await t.get('/v1/health');
    expectShape(res, '/v1/health');
    expect(res.body).toMatchObject({ status: 'ok', services: { database: 'ok', redis: 'disabled', data_collector: 'ok' }, mode: 'real' });
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    expect(res.body.metrics.requests_24h).toBeGreaterThan(0);
  });

  it('health calls the collector failing only when every venue failed', async () => {
    await t.db.sql`UPDATE ingest_cycles SET finished_at = now() - INTERVAL '10 minutes' WHERE kind = 'trades'`;
    await t.db.sql`
      INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source, errors)
      VALUES ('trades', 'real', now(), now(), '{"luno": 3, "quidax": 0}', '[{"source": "quidax", "error": "timeout"}]')`;
    await t.healthReadingExpired();
    expect((await t.get('/v1/health')).body.services.data_collector).toBe('ok'); // luno still delivers
    await t.db.sql`
      INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source, errors)
      VALUES ('trades', 'real', now(), now(), '{"luno": 0}', '[{"source": "luno", "error": "timeout"}]')`;
    await t.db.sql`DELETE FROM ingest_cycles WHERE rows_by_source = '{"luno": 3, "quidax": 0}'`;
    // health reads the database at most once a second, however many ask: not yet ...
    expect((await t.get('/v1/health')).body.services.data_collector).toBe('ok');
    await t.healthReadingExpired(); // ... but after that second
    const res = await t.get('/v1/health');
    expect(res.body).toMatchObject({ status: 'degraded', services: { data_collector: 'error' } });
    await t.db.sql`INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source) VALUES ('trades', 'real', now(), now(), '{"luno": 1}')`;
  });
});

describe('errors and documents', () => {
  it('unknown routes are 404 not_found, wrong methods 405, in the error shape', async () => {
    expectError(await t.get('/v1/nothing-here', free), 404, 'not_found');
    const res = await t.post('/v1/rates/live', {}, { 'X-API-Key': free });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('x-ratelimit-limit')).toBe('10');
  });

  it('routes a path the same way each time it is asked (routes are looked up once: api/routing.ts)', async () => {
    const key = t.keys.enterprise;
    for (const pair of ['BTCNGN', 'ETHNGN', 'BTCNGN']) {
      const pairs = await t.get('/v1/pairs', key);
      expect(pairs.status).toBe(200);
      expect(pairs.body.pairs.length).toBeGreaterThan(0);
      expectError(await t.post('/v1/pairs', {}, { 'X-API-Key': key }), 405, 'method_not_allowed');
      expectError(await t.get('/v1/pairs/more', key), 404, 'not_found');
      // a path with parameters goes through the router, which hands each request its own
      const cert = await t.get(`/v1/certificates/${pair}/2026-01-01T00:00:00+00:00`, key);
      expectError(cert, 404, 'not_found');
      expect(cert.body.message).toContain(`No certificate for ${pair} at`);
    }
  });

  it('serves an OpenAPI 3.1 document naming every endpoint', async () => {
    const res = await t.get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const p of ['/v1/rates/live', '/v1/rates/historical', '/v1/certificates/{pair}/{timestamp}', '/v1/auth/free-key', '/v1/health']) {
      expect(Object.keys(res.body.paths)).toContain(p);
    }
  });

  it('compresses large responses', async () => {
    const res = await fetch(`${t.api.url}/v1/rates/historical?pair=BTCNGN&start=${daysAgo(2)}&end=${today()}&interval=5m&limit=500`, {
      headers: { 'X-API-Key': t.keys.builder, 'Accept-Encoding': 'gzip' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect((await res.json()).data.length).toBeGreaterThan(100);
  });

  it('lets a browser on any origin call it and read the limit headers (CORS)', async () => {
    const origin = 'https://app.example';
    // the preflight a browser sends before a request with X-API-Key: answered without a key
    const preflight = await fetch(`${t.api.url}/v1/rates/live?pairs=BTCNGN`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*'); // keys travel in a header, never cookies
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('x-api-key');
    const res = await fetch(`${t.api.url}/v1/rates/live?pairs=BTCNGN`, { headers: { 'X-API-Key': t.keys.builder, Origin: origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = res.headers.get('access-control-expose-headers')!.split(',').map((h) => h.trim().toLowerCase());
    for (const h of ['x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-request-id', 'x-afrates-data']) expect(exposed).toContain(h);
    // an error is readable cross-origin too
    const denied = await fetch(`${t.api.url}/v1/rates/live?pairs=BTCNGN`, { headers: { Origin: origin } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe('*');
    // a caller that is not a browser gets no CORS headers, and caches keep the two apart
    const server = await fetch(`${t.api.url}/v1/rates/live?pairs=BTCNGN`, { headers: { 'X-API-Key': t.keys.builder } });
    expect(server.headers.get('access-control-allow-origin')).toBeNull();
    expect(server.headers.get('vary')).toContain('Origin');
  });
});

describe('simulated data', () => {
  it('is labelled on every response once the pipeline records simulated cycles', async () => {
    expect((await t.get('/v1/pairs', free)).headers.get('x-afrates-data')).toBeNull();
    await t.db.sql`INSERT INTO ingest_cycles (kind, market, started_at, finished_at) VALUES ('trades', 'simulated', now(), now())`;
    await t.api.deps.snapshot.refresh();
    expect((await t.get('/v1/pairs', free)).headers.get('x-afrates-data')).toBe('simulated');
    await t.healthReadingExpired();
    const health = await t.get('/v1/health');
    expect(health.body).toMatchObject({ mode: 'simulated', version: expect.stringContaining('simulated') });
  });
});
