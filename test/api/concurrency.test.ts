// Each customer's share of an API process (lib/tiers.ts `concurrent`): past its requests in
// flight, a customer's next request is refused at once, 429 in the error shape with Retry-After,
// while another customer is served; the share frees up as its requests are answered. The
// requests are held in flight by holding the embedded database's one connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InFlight, MAX_RETRY_AFTER_SECONDS, type Refused } from '../../api/limits/concurrency.js';
import { operations } from '../../api/routes/index.js';
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
  it('counts one request per 2,500 candles, one page of more than 2,500 at a time: a second is refused while the rest of the share serves the customer\'s other requests, and past the share those are refused too', async () => {
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
    let admitted: Promise<HttpResult>[] = [];
    try {
      // a 10,000-candle page takes four slots of 8
      admitted = [request(t.api.url, 'GET', big, { headers: { 'X-API-Key': heavy } })];
      await until('the page in flight', () => held() === 4, 10_000);
      // a second page of more than 2,500 candles is refused though four slots are free
      const second = await request(t.api.url, 'GET', `/v1/rates/historical?${range}&limit=5000`, { headers: { 'X-API-Key': heavy } });
      expect(second.status).toBe(429);
      expect(second.body).toEqual({ error: 'rate_limit_exceeded', status: 429, message: 'At most one page of more than 2,500 candles at once per account; retry when the one in flight has been answered.' });
      // its own policy, none left: a client reading the share's would retry at once
      expect(second.headers.get('Retry-After')).toBe('1');
      expect(second.headers.get('RateLimit-Policy')).toBe('"bulk";q=1');
      expect(second.headers.get('RateLimit')).toBe('"bulk";r=0;t=1');
      // the rest of the share serves the customer's other requests
      admitted.push(...Array.from({ length: share - 4 }, () => request(t.api.url, 'GET', small, { headers: { 'X-API-Key': heavy } })));
      await until('the share full', () => held() === share, 10_000);
      const over = await request(t.api.url, 'GET', small, { headers: { 'X-API-Key': heavy } });
      expect(over.status).toBe(429);
      expect(over.body.error).toBe('rate_limit_exceeded');
      expect(over.body.message).toBe(`At most ${share} requests at once per account on the Enterprise tier; retry when one has been answered. A page of candles counts as one request per 2,500 candles, up to all ${share}: this one as 1, with ${share} taken.`);
      // the share's own schedule: the refused page before it does not push it back
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
    expect((await Promise.all(admitted)).map((r) => r.status)).toEqual(Array(1 + share - 4).fill(200));
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

  it('runs one of thirteen pages sent at once, and tells the refused to come back one a second, not all in the next', async () => {
    // a second API on the same database whose clock stands still: the seconds told are the schedule's alone
    const frozen = await startTestApi({ db: t.db, now: () => Date.parse('2026-11-28T12:00:00Z') });
    try {
      const heavy = await frozen.key('enterprise');
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const big = `/v1/rates/historical?pair=BTCNGN&interval=1h&start=${day(Date.now() - 2 * 86_400_000)}&end=${day(Date.now())}&limit=10000`;
      expect((await frozen.get(big, heavy)).status).toBe(200);
      const [customer] = await t.db.sql<{ id: string }[]>`SELECT customer_id::text AS id FROM api_keys WHERE key_prefix = ${heavy.slice(0, 13)}`;
      const held = () => frozen.api.deps.limiter.inFlight.count(`key:${customer!.id}`);

      const release = await holdDatabase();
      const answered: HttpResult[] = [];
      let all: Promise<HttpResult>[] = [];
      try {
        // thirteen at once, none in flight before: one runs, the others are refused at once
        all = Array.from({ length: 13 }, () => request(frozen.api.url, 'GET', big, { headers: { 'X-API-Key': heavy } }).then((r) => (answered.push(r), r)));
        await until('one page in flight and twelve refused', () => held() === 4 && answered.length === 12, 10_000);
      } finally {
        await release();
      }
      const statuses = (await Promise.all(all)).map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      const refused = answered.slice(0, 12);
      expect(refused.map((r) => r.status)).toEqual(Array(12).fill(429));
      const waits = refused.map((r) => Number(r.headers.get('Retry-After'))).sort((a, b) => a - b);
      expect(waits).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      for (const r of refused) expect(r.headers.get('RateLimit')).toBe(`"bulk";r=0;t=${r.headers.get('Retry-After')}`);
    } finally {
      await frozen.close();
    }
  });

  it('spreads the refused over the seconds, a share\'s worth of slots or one page of more than a slot a second, each on its own schedule, up to a minute, and starts afresh once they are due', () => {
    const inFlight = new InFlight();
    const now = 1_000_000;
    const admitted = [...Array.from({ length: 4 }, () => inFlight.enter('a', 1, 8, now)), inFlight.enter('a', 4, 8, now)];
    expect(admitted.every((r) => typeof r === 'function')).toBe(true);
    // refused requests of one slot come back eight a second; pages of more, one a second, whatever the others were told
    const ones = Array.from({ length: 10 }, () => (inFlight.enter('a', 1, 8, now) as Refused).retryAfter);
    expect(ones).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 2, 2]);
    const pages = Array.from({ length: 3 }, () => inFlight.enter('a', 4, 8, now) as Refused);
    expect(pages.map((r) => [r.refusedFor, r.retryAfter])).toEqual([['bulk', 1], ['bulk', 2], ['bulk', 3]]);
    // another owner's refusals are its own
    inFlight.enter('b', 8, 8, now);
    expect((inFlight.enter('b', 1, 8, now) as Refused).retryAfter).toBe(1);
    // never told to wait past a minute: a larger herd is spread over the minute again
    const many = Array.from({ length: 600 }, () => (inFlight.enter('a', 8, 8, now) as Refused).retryAfter);
    expect(Math.min(...many)).toBe(1);
    expect(Math.max(...many)).toBe(MAX_RETRY_AFTER_SECONDS);
    const perSecond = new Map<number, number>();
    for (const w of many) perSecond.set(w, (perSecond.get(w) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(11); // 600 pages, one a second: the minute over ten times
    // once the owner's share is free and the refused are due back, a refusal is told one second again
    for (const release of admitted) (release as () => void)();
    const later = now + 61_000;
    const next = inFlight.enter('a', 8, 8, later);
    expect(typeof next).toBe('function');
    expect((inFlight.enter('a', 1, 8, later) as Refused).retryAfter).toBe(1);
  });

  it('runs one page of more than a slot at a time per owner, whatever room its share has, and the next once it is released', () => {
    const inFlight = new InFlight();
    const page = inFlight.enter('a', 4, 8);
    expect(typeof page).toBe('function');
    expect(inFlight.enter('a', 2, 8)).toMatchObject({ refusedFor: 'bulk', asked: 2, held: { slots: 4, requests: 1, bulkPages: 1 } });
    expect(typeof inFlight.enter('b', 4, 8)).toBe('function'); // another owner's page runs beside it
    const small = Array.from({ length: 4 }, () => inFlight.enter('a', 1, 8));
    expect(small.every((r) => typeof r === 'function')).toBe(true);
    (page as () => void)();
    expect(typeof inFlight.enter('a', 2, 8)).toBe('function');
  });

  it('weighs a page by what the tier can be served: a limit past its largest page is one slot (the route answers it 400), not a bulk page', () => {
    const historical = operations.find((o) => o.path === '/v1/rates/historical')!;
    expect(historical.slots!({ limit: '5000' }, 'builder')).toBe(1);
    expect(historical.slots!({ limit: '5000' }, 'enterprise')).toBe(2);
    expect(historical.slots!({ limit: '10000' }, 'enterprise')).toBe(4);
    expect(historical.slots!({ limit: 'many' }, 'enterprise')).toBe(1);
  });
});
