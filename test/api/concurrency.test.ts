// Each customer's share of an API process (lib/tiers.ts `concurrent`): past its requests in
// flight, a customer's next request is refused at once, 429 in the error shape with Retry-After,
// while another customer is served; the share frees up as its requests are answered. The
// requests are held in flight by holding the embedded database's one connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
