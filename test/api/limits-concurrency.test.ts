// Limits under the load customers really send: requests at once, not one after another. Exactly the
// tier's number get through in a minute, a spent month lets nothing through however many arrive
// together, on one process in memory, on two processes sharing Redis, and across a Redis outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { RateLimiter } from '../../api/limits/limiter.js';
import { failingQueries, openTestDatabase, testLog } from '../support/db.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { killRedisServer, startRedisServer } from '../support/redis.js';
import { freePort, until } from '../support/wait.js';

let db: Database;
// a frozen clock in the middle of a minute and a month: no window ends during a burst
const clock = Date.UTC(2026, 10, 21, 12, 0, 30);
const now = () => clock;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

/**
 * Sends n requests at once (spread over the given APIs) and counts the answers by status. What the
 * limits let through counts as 200 though its customer's concurrency share (a few in flight,
 * api/limits/concurrency.ts) refused it next: these are the limits' counts.
 */
async function burst(apis: TestApi[], key: string, n: number): Promise<Record<number, number>> {
  const results = await Promise.all(Array.from({ length: n }, (_, i) => apis[i % apis.length]!.get('/v1/pairs', key)));
  const counts: Record<number, number> = {};
  for (const r of results) {
    const status = r.status === 429 && r.headers.get('RateLimit')?.startsWith('"concurrency"') ? 200 : r.status;
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

async function keyWithUsage(t: TestApi, tier: 'free' | 'builder', used: number): Promise<string> {
  const key = await t.key(tier);
  const [row] = await t.db.sql`SELECT id FROM api_keys ORDER BY id DESC LIMIT 1`;
  await t.db.sql`INSERT INTO api_usage (customer, month, requests) VALUES (${`key:${row!.id}`}, '2026-11-01', ${used})`;
  return key;
}

describe.each([
  ['in memory', false],
  ['in Redis', true],
])('limits %s, requests at once', (_, withRedis) => {
  let apis: TestApi[];
  beforeAll(async () => {
    const namespace = `burst-${withRedis}-${Date.now()}`;
    apis = [await startTestApi({ db, now, namespace, withRedis })];
    if (withRedis) apis.push(await startTestApi({ db, now, namespace, withRedis })); // two processes, one budget
  });
  afterAll(async () => {
    for (const t of apis ?? []) await t.close();
  });

  it('lets exactly 10 of 1,000 concurrent requests of a fresh free key through', async () => {
    const counts = await burst(apis, await apis[0]!.key('free'), 1_000);
    expect(counts).toEqual({ 200: 10, 429: 990 });
  });

  it('lets nothing through for a key whose month is spent, however many arrive at once', async () => {
    const key = await keyWithUsage(apis[0]!, 'free', 5_000);
    expect(await burst(apis, key, 10)).toEqual({ 429: 10 });
  });

  it('lets exactly what is left of the month through, restoring the usage once', async () => {
    const key = await keyWithUsage(apis[0]!, 'builder', 24_995);
    expect(await burst(apis, key, 25)).toEqual({ 200: 5, 429: 20 });
  });
});

/** Until the Redis client of every API in `apis` is ready for commands (`want`), or none is (its server gone). */
const connected = (apis: TestApi[], want = true) => until(want ? 'the APIs connected to Redis' : 'the APIs lost Redis', () => apis.every((t) => (t.redis!.status === 'ready') === want));

describe('a Redis outage in the middle of a minute', () => {
  it('never lets a key through twice: the process counts on, and puts its count back into Redis', async () => {
    const port = await freePort();
    let redis = await startRedisServer(port);
    const t = await startTestApi({ db, now, namespace: `outage-${Date.now()}`, redisUrl: `redis://127.0.0.1:${port}` });
    try {
      await connected([t]);
      const key = await t.key('free');
      expect(await burst([t], key, 6)).toEqual({ 200: 6 });
      await killRedisServer(redis);
      await connected([t], false);
      expect(await burst([t], key, 10)).toEqual({ 200: 4, 429: 6 });
      expect((await t.get('/v1/health')).body.services.redis).toBe('error');
      // back, and empty (no persistence): still nothing more this minute
      redis = await startRedisServer(port);
      await connected([t]); // ioredis reconnects
      await t.healthReadingExpired(); // health reads anew
      expect(await burst([t], key, 10)).toEqual({ 429: 10 });
      expect((await t.get('/v1/health')).body.services.redis).toBe('ok');
    } finally {
      await t.close();
      await killRedisServer(redis);
    }
  });
});

describe('a Redis that comes back empty, behind two API processes', () => {
  it("still holds the month's quota: what both had counted is written back, not one process's share", async () => {
    // Each process's own count is half the month's: written back alone, it let the customer
    // through for the other half again (here all 30 requests of a minute where 20 were left).
    const port = await freePort();
    let redis = await startRedisServer(port);
    let at = Date.UTC(2026, 10, 21, 12, 0, 30);
    const clock = () => at;
    const namespace = `empty-${Date.now()}`;
    const apis = [
      await startTestApi({ db, now: clock, namespace, redisUrl: `redis://127.0.0.1:${port}` }),
      await startTestApi({ db, now: clock, namespace, redisUrl: `redis://127.0.0.1:${port}` }),
    ];
    try {
      await connected(apis);
      const key = await keyWithUsage(apis[0]!, 'builder', 24_950); // 25,000 a month, 30 a minute
      expect(await burst(apis, key, 40)).toEqual({ 200: 30, 429: 10 }); // the minute's 30: 24,980 used
      for (const t of apis) await t.api.deps.limiter.flush(); // as every few seconds
      await killRedisServer(redis);
      await connected(apis, false); // the old server is gone before a new one takes its port
      redis = await startRedisServer(port); // no persistence: empty
      await connected(apis); // ioredis reconnects
      at += 60_000; // a new minute: only the month limits now
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await apis[i % 2]!.get('/v1/pairs', key)).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      at += 60_000;
      expect(await burst(apis, key, 10)).toEqual({ 429: 10 }); // and at once, still nothing
    } finally {
      for (const t of apis) await t.close();
      await killRedisServer(redis);
    }
  });
});

describe('a Redis that comes back empty, then a burst', () => {
  it("lets exactly what is left of the month through at once: each request counted once", async () => {
    // Written back with this process's count, which holds the burst's own requests, then counted
    // again by each of them: a customer with 20 left sending 20 at once was refused all 20.
    const port = await freePort();
    let redis = await startRedisServer(port);
    let at = Date.UTC(2026, 10, 21, 12, 0, 30);
    const t = await startTestApi({ db, now: () => at, namespace: `refill-${Date.now()}`, redisUrl: `redis://127.0.0.1:${port}` });
    try {
      await connected([t]);
      const key = await keyWithUsage(t, 'builder', 24_979); // 25,000 a month, 30 a minute
      expect(await burst([t], key, 1)).toEqual({ 200: 1 }); // 24,980 used: 20 left
      await t.api.deps.limiter.flush();
      await killRedisServer(redis);
      await connected([t], false);
      redis = await startRedisServer(port); // no persistence: empty
      await connected([t]); // ioredis reconnects
      at += 60_000; // a new minute: only the month limits now
      expect(await burst([t], key, 20)).toEqual({ 200: 20 });
      expect(await burst([t], key, 5)).toEqual({ 429: 5 });
    } finally {
      await t.close();
      await killRedisServer(redis);
    }
  });
});

describe("a month whose usage could not be read at a customer's first request", () => {
  it('is read again at the next request and counted on top of what this process counted meanwhile', async () => {
    // The first read failed, requests were counted from 0, and the next read only seeded a count
    // that existed (a no-op): the customer's stored month was forgotten, the quota served again.
    await db.sql`INSERT INTO api_usage (customer, month, requests) VALUES ('key:4242', '2026-11-01', 99990)`;
    const flaky = failingQueries(db.sql, 'FROM api_usage WHERE', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    flaky.fail(1);
    const limiter = new RateLimiter(flaky.sql, null, testLog, now, `restore-${Date.now()}`);
    const subject = { id: 'key:4242', tier: 'professional' as const }; // 100 a minute, 100,000 a month
    const answers: string[] = [];
    for (let i = 0; i < 50; i++) answers.push(await limiter.consume(subject).then(() => 'ok', (e: { code: string }) => e.code));
    expect(flaky.pending).toBe(0);
    // 10 were left; the one counted while the month could not be read is one of them
    expect(answers.filter((a) => a === 'ok')).toHaveLength(10);
    expect(answers.slice(10).every((a) => a === 'monthly_quota_exceeded')).toBe(true);
  });
});

describe('the minute window a request is counted in', () => {
  it("says the seconds left of that request's minute, not of the minute's first request", async () => {
    let at = Date.UTC(2026, 10, 27, 12, 0, 5); // 55 s left in the minute
    const limiter = new RateLimiter(db.sql, null, testLog, () => at, `window-${Date.now()}`);
    const subject = { id: 'ip:203.0.113.9', tier: 'free' as const };
    const first = await limiter.consume(subject);
    at += 40_000; // the same minute, 15 s left
    const later = await limiter.consume(subject);
    const secondsLeft = (d: { headers: Record<string, string> }) => /"minute";r=\d+;t=(\d+)/.exec(d.headers.RateLimit!)?.[1];
    expect([secondsLeft(first), secondsLeft(later)]).toEqual(['55', '15']);
  });
});
