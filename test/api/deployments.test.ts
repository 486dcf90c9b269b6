// Two deployments on one Redis database (staging beside production, or two services sharing a
// server by mistake): each with its own database, both given the same key prefix label. Neither
// trusts the other's cached keys (a key of one is 401 on the other, never its customer), nor an
// entry written into its own part of Redis that it did not seal; their rate limits and monthly
// quotas are counted apart, though their customers have the same ids.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../api/keys/store.js';
import { startTestApi, type TestApi } from '../support/api.js';

const label = `deploy-${crypto.randomBytes(4).toString('hex')}`; // the same label: as two deployments with the default prefix
const at = Date.UTC(2026, 10, 27, 12, 0, 30); // one minute throughout: no window rolls over mid-test
const now = () => at;
let production: TestApi;
let staging: TestApi;

beforeAll(async () => {
  production = await startTestApi({ namespace: label, withRedis: true, now });
  staging = await startTestApi({ namespace: label, withRedis: true, now });
});
afterAll(async () => {
  await staging?.close();
  await production?.close();
});

describe('two deployments on one Redis database', () => {
  it('keep their keys apart: a key of one, cached in Redis by it, is 401 on the other', async () => {
    for (const tier of ['free', 'enterprise'] as const) {
      const key = production.keys[tier];
      const own = await production.get('/v1/account', key);
      expect(own.status).toBe(200); // and now in the shared cache
      const elsewhere = await staging.get('/v1/account', key);
      expect(elsewhere.status).toBe(401);
      expect(elsewhere.body).toMatchObject({ error: 'unauthorized', status: 401 });
      expect(elsewhere.body.account).toBeUndefined(); // not staging's customer of the same id, name and e-mail
      expect((await staging.post('/v1/account/keys', { label: 'minted' }, { 'X-API-Key': key })).status).toBe(401);
    }
    expect(staging.namespace).not.toBe(production.namespace);
  });

  it('refuse a cached entry they did not seal, even under their own prefix', async () => {
    const redis = staging.redis!;
    // a made-up key whose entry another party wrote where staging looks: an Enterprise customer
    const forged = `afr_live_${'F'.repeat(32)}`;
    const entry = `${staging.namespace}:key:${hashKey(forged)}`;
    await redis.set(entry, JSON.stringify({ id: 'key:1', tier: 'enterprise', name: 'x', keyId: 1, customerId: 1 }), 'PX', 60_000);
    expect((await staging.get('/v1/pairs', forged)).status).toBe(401);

    // production's own sealed entry for its key, copied under staging's prefix
    const key = production.keys.professional;
    expect((await production.get('/v1/pairs', key)).status).toBe(200);
    const sealed = await redis.get(`${production.namespace}:key:${hashKey(key)}`);
    expect(sealed).not.toBeNull();
    await redis.set(`${staging.namespace}:key:${hashKey(key)}`, sealed!, 'PX', 60_000);
    expect((await staging.get('/v1/pairs', key)).status).toBe(401);
  });

  it("count their customers' limits and quotas apart, though the customers' ids are the same", async () => {
    const spend = production.keys.builder;
    let last = await production.get('/v1/pairs', spend);
    for (let i = 1; i < 30; i++) last = await production.get('/v1/pairs', spend);
    expect(last.status).toBe(200);
    expect((await production.get('/v1/pairs', spend)).status).toBe(429); // production's builder customer: its 30 spent

    const other = await staging.get('/v1/pairs', staging.keys.builder); // staging's builder customer, the same id
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('29');
    expect(other.headers.get('x-quota-remaining')).toBe('24999');
  });
});
