// When the database goes away: 503 service_unavailable with Retry-After (no internals), health
// says so, and live rates keep coming from memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 1 });
});
afterAll(async () => {
  await t?.close().catch(() => {});
});

describe('database unreachable', () => {
  it('answers 503 with Retry-After, reports it in health, and still serves live rates', async () => {
    const key = await t.key('builder');
    expect((await t.get('/v1/rates/live?pairs=BTCNGN', key)).status).toBe(200); // key now cached
    await t.db.sql.end();
    const res = await t.get('/v1/rates/eod?pair=BTCNGN&date=2026-11-01', key);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|CONNECTION|postgres/i);

    const health = await t.get('/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', services: { database: 'error' } });

    const live = await t.get('/v1/rates/live?pairs=BTCNGN', key); // the snapshot is in memory
    expect(live.status).toBe(200);
  });
});
