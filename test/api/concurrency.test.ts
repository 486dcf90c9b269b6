// Each customer's share of an API process (lib/tiers.ts `concurrent`): past its requests in
// flight, a customer's next request is refused at once, 429 in the error shape with Retry-After,
// while another customer is served; the share frees up as its requests are answered. The
// requests are held in flight by holding the embedded database's one connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InFlight, MAX_RETRY_AFTER_SECONDS } from '../../api/limits/concurrency.js';
import { TIER_RULES } from '../../lib/tiers.js';
import { request, startTestApi, type HttpResult, type TestApi } from '../support/api.js';
import { until } from '../support/wait.js';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

/**
 * Holds the database until the returned function is called: every page waits behind it (the
 * embedded database's one connection is taken; on a server, whose pool has others, the pairs
 * every page reads are locked).
 */
async function holdDatabase(): Promise<() => Promise<void>> {
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  let held = () => {};
  const holding = new Promise<void>((r) => (held = r));
  const tx = t.db.sql.begin(async (sql) => {
    await sql`LOCK TABLE pairs IN ACCESS EXCLUSIVE MODE`;
    held();
    await gate;
  });
  await holding;
  return async () => {
    release();
    await tx;
  };
}

describe('concurrency shares', () => {
  it("answers a customer over its share 429 with Retry-After, while another customer is served", async () => {
    const share = TIER_RULES.enterprise.concurrent;
    const heavy = t.keys.enterprise;
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const page = `/v1/rates/historical?pair=BTCNGN&interval=1h&limit=100&start=${day(Date.now() - 2 * 86_400_000)}&end=${day(Date.now())}`;
    // both customers known to this process (keys cached, the month's usage restored): nothing below needs the database but the pages
    expect((await t.get(page, heavy)).status).toBe(200);
    expect((await t.get('/v1/rates/live?pairs=BTCNGN', t.keys.builder)).status).toBe(200);
    const [customer] = await t.db.sql<{ id: string }[]>`SELECT customer_id::text AS id FROM api_keys WHERE key_prefix = ${heavy.slice(0, 13)}`;

    const release = await holdDatabase();
    let inFlight: Promise<HttpResult>[] = [];
    try {
      inFlight = Array.from({ length: share }, () => request(t.api.url, 'GET', page, { headers: { 'X-API-Key': heavy } }));
      await until(`${share} pages in flight`, () => t.api.deps.limiter.inFlight.count(`key:${customer!.id}`) === share, 10_000);

      // one more request of the same customer is refused at once, whatever it asks
      expect((await t.post('/v1/account/keys', { label: 'second' }, { 'X-API-Key': heavy })).status).toBe(429);
      const over = await request(t.api.url, 'GET', page, { headers: { 'X-API-Key': heavy } });
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ error: 'rate_limit_exceeded', status: 429, message: `At most ${share} requests at once per account on the Enterprise tier; retry when one has been answered.` });
      expect(over.headers.get('Retry-After')).toBe('1');
      expect(over.headers.get('RateLimit')).toMatch(/^"concurrency";r=0/);

      // another customer is served meanwhile
      const other = await t.get('/v1/rates/live?pairs=BTCNGN', t.keys.builder);
      expect(other.status).toBe(200);
    } finally {
      await release();
    }
    const answered = await Promise.all(inFlight);
    expect(answered.map((r) => r.status)).toEqual(Array(share).fill(200));
    // the share is free again once they are answered
    await until('the pages left the share', () => t.api.deps.limiter.inFlight.count(`key:${customer!.id}`) === 0, 10_000);
    expect((await t.get(page, heavy)).status).toBe(200);
  });
});

describe('a page weighed by its candles', () => {
  it('counts one request per 2,500 candles: two 10,000-candle pages take the whole share, refusing the same customer meanwhile, while a page up to 2,500 counts as one', async () => {
    const share = TIER_RULES.enterprise.concurrent;
    const heavy = await t.key('enterprise');
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const range = `pair=BTCNGN&interval=1h&start=${day(Date.now() - 2 * 86_400_000)}&end=${day(Date.now())}`;
    const big = `/v1/rates/historical?${range}&limit=10000`;
    const small = `/v1/rates/historical?${range}&limit=100`;
    // the customer known to this process (key cached, the month's usage restored)
    expect((await t.get(small, heavy)).status).toBe(200);
    const [customer] = await t.db.sql<{ id: string }[]>`SELECT customer_id::text AS id FROM api_keys WHERE key_prefix = ${heavy.slice(0, 13)}`;
    const held = () => t.api.deps.limiter.inFlight.count(`key:${customer!.id}`);

    const release = await holdDatabase();
    let bigPages: Promise<HttpResult>[] = [];
    try {
      // two 10,000-candle pages (four slots each) take the whole share of 8
      bigPages = [0, 1].map(() => request(t.api.url, 'GET', big, { headers: { 'X-API-Key': heavy } }));
      await until('the pages in flight', () => held() === share, 10_000);
      const over = await request(t.api.url, 'GET', small, { headers: { 'X-API-Key': heavy } });
      expect(over.status).toBe(429);
      expect(over.body.error).toBe('rate_limit_exceeded');
      expect(over.body.message).toBe(`At most ${share} requests at once per account on the Enterprise tier; retry when one has been answered. A page of candles counts as one request per 2,500 candles, up to all ${share}: this one as 1, with ${share} taken.`);
      expect(over.headers.get('Retry-After')).toBe('1');
      expect(over.headers.get('RateLimit-Policy')).toBe(`"concurrency";q=${share}`);
      expect(over.headers.get('RateLimit')).toBe('"concurrency";r=0;t=1');
      // counted in the minute like every request: the minute's headers are there too
      expect(Number(over.headers.get('X-RateLimit-Limit'))).toBe(TIER_RULES.enterprise.perMinute);
      expect(over.headers.get('X-RateLimit-Remaining')).toMatch(/^\d+$/);
      expect(over.headers.get('X-RateLimit-Reset')).toMatch(/^\d+$/);
      // another customer is served meanwhile
      expect((await t.get('/v1/rates/live?pairs=BTCNGN', t.keys.builder)).status).toBe(200);
    } finally {
      await release();
    }
    expect((await Promise.all(bigPages)).map((r) => r.status)).toEqual([200, 200]);
    await until('the pages left the share', () => held() === 0, 10_000);

    // four 100-candle pages and a 2,500-candle one in flight (five slots): a 10,000-candle page
    // (four) is refused, one of 7,500 (three) is not
    const again = await holdDatabase();
    let pages: Promise<HttpResult>[] = [];
    try {
      pages = [...Array.from({ length: 4 }, () => small), `/v1/rates/historical?${range}&limit=2500`].map((p) => request(t.api.url, 'GET', p, { headers: { 'X-API-Key': heavy } }));
      await until('five pages in flight', () => held() === 5, 10_000);
      const four = await request(t.api.url, 'GET', big, { headers: { 'X-API-Key': heavy } });
      expect(four.status).toBe(429);
      expect(four.body.message).toContain(`this one as 4, with 5 taken`);
      expect(four.headers.get('RateLimit')).toBe(`"concurrency";r=${share - 5};t=1`);
      pages.push(request(t.api.url, 'GET', `/v1/rates/historical?${range}&limit=7500`, { headers: { 'X-API-Key': heavy } }));
      await until('the 7,500-candle page in flight too', () => held() === share, 10_000);
    } finally {
      await again();
    }
    expect((await Promise.all(pages)).map((r) => r.status)).toEqual(Array(6).fill(200));
  });

  it('tells a herd of refused requests to come back at the pace the share takes them, not all in the next second', async () => {
    const share = TIER_RULES.enterprise.concurrent;
    const heavy = await t.key('enterprise');
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const big = `/v1/rates/historical?pair=BTCNGN&interval=1h&start=${day(Date.now() - 2 * 86_400_000)}&end=${day(Date.now())}&limit=10000`;
    expect((await t.get(big, heavy)).status).toBe(200);
    const [customer] = await t.db.sql<{ id: string }[]>`SELECT customer_id::text AS id FROM api_keys WHERE key_prefix = ${heavy.slice(0, 13)}`;
    const held = () => t.api.deps.limiter.inFlight.count(`key:${customer!.id}`);

    const release = await holdDatabase();
    let inFlight: Promise<HttpResult>[] = [];
    let refused: HttpResult[] = [];
    try {
      inFlight = [0, 1].map(() => request(t.api.url, 'GET', big, { headers: { 'X-API-Key': heavy } }));
      await until('the pages in flight', () => held() === share, 10_000);
      // twelve more at once: the share takes two such pages at a time
      refused = await Promise.all(Array.from({ length: 12 }, () => request(t.api.url, 'GET', big, { headers: { 'X-API-Key': heavy } })));
    } finally {
      await release();
    }
    expect((await Promise.all(inFlight)).map((r) => r.status)).toEqual([200, 200]);
    expect(refused.map((r) => r.status)).toEqual(Array(12).fill(429));
    const waits = refused.map((r) => Number(r.headers.get('Retry-After'))).sort((a, b) => a - b);
    expect(waits[0]).toBe(1);
    expect(waits.filter((w) => w === 1).length).toBeLessThanOrEqual(2); // not the whole herd in the next second
    expect(waits.at(-1)).toBeGreaterThanOrEqual(4); // twelve pages of half the share: six seconds' worth
    for (const r of refused) expect(r.headers.get('RateLimit')).toBe(`"concurrency";r=0;t=${r.headers.get('Retry-After')}`);
  });

  it('spreads the refused over the seconds by the slots they ask, up to a minute, and starts afresh once they are due', () => {
    const inFlight = new InFlight();
    const now = 1_000_000;
    const release = inFlight.enter('a', 8, 8, now);
    expect(typeof release).toBe('function');
    // each refusal asking half the share is due back half a second after the one before it: two a second
    const waits = Array.from({ length: 6 }, () => (inFlight.enter('a', 4, 8, now) as { retryAfter: number }).retryAfter);
    expect(waits).toEqual([1, 1, 2, 2, 3, 3]);
    // another owner's refusals are its own
    inFlight.enter('b', 8, 8, now);
    expect((inFlight.enter('b', 1, 8, now) as { retryAfter: number }).retryAfter).toBe(1);
    // never told to wait past a minute: a larger herd is spread over the minute again
    const many = Array.from({ length: 600 }, () => (inFlight.enter('a', 8, 8, now) as { retryAfter: number }).retryAfter);
    expect(Math.min(...many)).toBe(1);
    expect(Math.max(...many)).toBe(MAX_RETRY_AFTER_SECONDS);
    const perSecond = new Map<number, number>();
    for (const w of many) perSecond.set(w, (perSecond.get(w) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(11); // 600 of a whole share each: ten a second
    // once the owner's share is free and the refused are due back, a refusal is told one second again
    (release as () => void)();
    const later = now + 61_000;
    const next = inFlight.enter('a', 8, 8, later);
    expect(typeof next).toBe('function');
    expect((inFlight.enter('a', 1, 8, later) as { retryAfter: number }).retryAfter).toBe(1);
  });
});
