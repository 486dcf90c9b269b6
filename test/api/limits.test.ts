// Rate limits and quotas: hit and reset, counted once per multi-pair call, monthly usage kept
// across a restart, and one budget shared through Redis by two API instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { openTestDatabase } from '../support/db.js';
import { startTestApi, type TestApi } from '../support/api.js';

let db: Database;
let clock = Date.UTC(2026, 10, 21, 12, 0, 5);
const now = () => clock;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe('per-minute limit', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi({ hours: 2, now });
  });
  afterAll(async () => t?.close());

  it('counts down, answers 429 with Retry-After past the limit, and resets at the minute', async () => {
    const key = await t.key('free');
    const first = await t.get('/v1/rates/live?pairs=BTCNGN,ETHNGN,USDTNGN', key);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('10');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('9'); // three pairs, one request
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    expect(reset).toBe(Math.floor(clock / 60_000) * 60 + 60);
    expect(first.headers.get('ratelimit-policy')).toContain('"minute";q=10;w=60');
    for (let i = 0; i < 9; i++) expect((await t.get('/v1/pairs', key)).status).toBe(200);
    const limited = await t.get('/v1/pairs', key);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate_limit_exceeded', message: expect.stringContaining('10 requests per minute'), status: 429 });
    expect(Number(limited.headers.get('retry-after'))).toBe(55);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // health stays reachable
    expect((await t.get('/v1/health')).status).toBe(200);
    clock += 55_000; // the next minute
    const after = await t.get('/v1/pairs', key);
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('issues at most 5 free keys an hour per address, and its 429 headers agree with each other', async () => {
    for (let i = 0; i < 5; i++) expect((await t.post('/v1/auth/free-key', { email: `issue${i}@example.test` })).status).toBe(201);
    const refused = await t.post('/v1/auth/free-key', { email: 'issue5@example.test' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate_limit_exceeded', message: expect.stringContaining('5 free keys an hour'), status: 429 });
    const hourEnd = (Math.floor(clock / 3_600_000) + 1) * 3_600;
    const retry = hourEnd - Math.floor(clock / 1000);
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(hourEnd);
    expect(Number(refused.headers.get('retry-after'))).toBe(retry);
    expect(refused.headers.get('ratelimit')).toBe(`"issue";r=0;t=${retry}`);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('5');
  });

  it('limits each key on its own', async () => {
    const a = await t.key('builder');
    const b = await t.key('builder');
    for (let i = 0; i < 30; i++) await t.get('/v1/pairs', a);
    expect((await t.get('/v1/pairs', a)).status).toBe(429);
    expect((await t.get('/v1/pairs', b)).status).toBe(200);
  });

  it('answers 429 monthly_quota_exceeded when the month is used up, until the 1st', async () => {
    const key = await t.key('free');
    const [row] = await t.db.sql`SELECT id FROM api_keys ORDER BY id DESC LIMIT 1`;
    await t.db.sql`INSERT INTO api_usage (customer, month, requests) VALUES (${`key:${row!.id}`}, '2026-11-01', 5000)`;
    const res = await t.get('/v1/pairs', key);
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('monthly_quota_exceeded');
    expect(Number(res.headers.get('retry-after'))).toBe((Date.UTC(2026, 11, 1) - clock) / 1000);
    // every header says the same: wait for the month, not the minute (the contract: "wait until
    // X-RateLimit-Reset"); had they pointed at the minute, the client would retry every minute
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBe(Date.UTC(2026, 11, 1) / 1000);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(res.headers.get('x-quota-remaining')).toBe('0');
    expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"month";r=0;t=${res.headers.get('retry-after')}`)); // the refusing window first
  });

  it('keeps saying the month is used up past the minute\'s limit (not "retry in a minute")', async () => {
    const key = await t.key('free');
    const [row] = await t.db.sql`SELECT id FROM api_keys ORDER BY id DESC LIMIT 1`;
    await t.db.sql`INSERT INTO api_usage (customer, month, requests) VALUES (${`key:${row!.id}`}, '2026-11-01', 5000)`;
    // a client that ignores Retry-After, its requests at once: the minute's 10 go by
    const answers = await Promise.all(Array.from({ length: 14 }, () => t.get('/v1/pairs', key)));
    for (const res of answers) {
      expect(res.status).toBe(429);
      expect(res.body.error).toBe('monthly_quota_exceeded');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBe(Date.UTC(2026, 11, 1) / 1000);
      expect(Number(res.headers.get('retry-after'))).toBe((Date.UTC(2026, 11, 1) - clock) / 1000);
    }
  });
});

describe('monthly usage', () => {
  it('survives a restart of the API (memory store)', async () => {
    const first = await startTestApi({ db, now, namespace: 'restart' });
    const key = first.keys.free;
    for (let i = 0; i < 3; i++) expect((await first.get('/v1/pairs', key)).status).toBe(200);
    expect((await first.get('/v1/pairs', key)).headers.get('x-quota-remaining')).toBe('4996');
    await first.close(); // writes usage through

    const second = await startTestApi({ db, now, namespace: 'restart-2' });
    try {
      const res = await second.get('/v1/pairs', key);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-quota-remaining')).toBe('4995');
    } finally {
      await second.close();
    }
  });
});

describe('Redis', () => {
  it('gives two API instances one shared budget per key', async () => {
    const namespace = `shared-${Date.now()}`;
    const a = await startTestApi({ db, now, namespace, withRedis: true });
    const b = await startTestApi({ db, now, namespace, withRedis: true });
    try {
      const key = a.keys.free;
      for (let i = 0; i < 6; i++) expect((await a.get('/v1/pairs', key)).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await b.get('/v1/pairs', key)).status).toBe(200);
      expect((await b.get('/v1/pairs', key)).status).toBe(429);
      expect((await a.get('/v1/pairs', key)).status).toBe(429);
      expect((await a.get('/v1/health')).body.services.redis).toBe('ok');
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('Redis down', () => {
  it('keeps serving (limits counted in memory meanwhile) and says so in health', async () => {
    const t = await startTestApi({ db, now, namespace: `down-${Date.now()}`, redisUrl: 'redis://127.0.0.1:1' });
    try {
      const key = t.keys.builder;
      const res = await t.get('/v1/pairs', key);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('29');
      const health = await t.get('/v1/health');
      expect(health.body).toMatchObject({ status: 'degraded', services: { redis: 'error' } });
    } finally {
      await t.close();
    }
  });
});
