// The account endpoints behind the dashboard: a key sees and manages its own customer's keys and
// nothing else, never chooses a tier, and rotation is atomic (old key refused at once, here and
// through the shared Redis cache). Usage is per customer: every key of an account shares one budget.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { KeyStore } from '../../api/keys/store.js';
import { ACCOUNT_KEYS_RESPONSE, ACCOUNT_NEW_KEY_RESPONSE, ACCOUNT_RESPONSE } from '../../api/schemas.js';
import { request, startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
const ajv = new Ajv({ strict: false, allErrors: true });
const conforms = (schema: object, body: unknown) => {
  const validate = ajv.compile(schema);
  return validate(body) ? 'ok' : JSON.stringify(validate.errors);
};

const asKey = (key: string) => ({ 'X-API-Key': key });
const del = (path: string, key: string) => request(t.api.url, 'DELETE', path, { headers: asKey(key) });
const keysOf = async (key: string) => (await t.get('/v1/account/keys', key)).body.keys as { id: number; prefix: string; label: string | null; current?: boolean }[];

beforeAll(async () => {
  t = await startTestApi({ withRedis: true });
});
afterAll(async () => {
  await t?.close();
  t?.redis?.disconnect();
});

describe('GET /v1/account', () => {
  it("shows the key's tier, limits and this minute's and month's usage, this request counted", async () => {
    const key = await t.key('builder');
    const first = await t.get('/v1/account', key);
    expect(first.status).toBe(200);
    expect(conforms(ACCOUNT_RESPONSE, first.body)).toBe('ok');
    expect(first.body.account.tier).toBe('builder');
    expect(first.body.limits).toMatchObject({ per_minute: 30, per_month: 25_000, intervals: ['5m', '15m', '1h', '1d'], history_days: null, streams_per_key: 3, streams_per_account: 6, concurrent_requests: 5 });
    expect(first.body.usage.minute).toMatchObject({ used: 1, limit: 30 });
    expect(first.body.usage.month).toMatchObject({ used: 1, limit: 25_000 });
    expect(first.body.usage.daily).toHaveLength(30);
    expect(first.body.key.current).toBe(true);

    await t.get('/v1/pairs', key);
    const second = await t.get('/v1/account', key);
    expect(second.body.usage.minute.used).toBe(3);
    expect(second.body.usage.month.used).toBe(3);
  });

  it('charts daily usage from what the limiter writes', async () => {
    const key = await t.key('professional');
    for (let i = 0; i < 4; i++) await t.get('/v1/pairs', key);
    await t.api.deps.limiter.flush();
    const { body } = await t.get('/v1/account', key);
    const today = new Date().toISOString().slice(0, 10);
    expect(body.usage.daily.at(-1)).toEqual({ date: today, requests: 4 }); // this request is not flushed yet
  });

  it('needs a key', async () => {
    expect((await t.get('/v1/account')).body).toMatchObject({ error: 'unauthorized', status: 401 });
    expect((await t.get('/v1/account?x=1', await t.key('free'))).body).toMatchObject({ error: 'validation_error' });
  });
});

describe('keys of an account', () => {
  it('creates a labelled key per environment with the account tier, sharing its limits', async () => {
    const key = await t.key('builder');
    const created = await t.post('/v1/account/keys', { label: 'staging' }, asKey(key));
    expect(created.status).toBe(201);
    expect(conforms(ACCOUNT_NEW_KEY_RESPONSE, created.body)).toBe('ok');
    expect(created.body.key.label).toBe('staging');
    const second = created.body.api_key as string;
    expect((await t.get('/v1/account', second)).body.account.tier).toBe('builder');

    const listed = await t.get('/v1/account/keys', second);
    expect(conforms(ACCOUNT_KEYS_RESPONSE, listed.body)).toBe('ok');
    expect(listed.body.keys.map((k: { label: string | null }) => k.label)).toEqual([null, 'staging']);
    expect(JSON.stringify(listed.body)).not.toContain(second.slice(13)); // never the keys themselves

    // one budget: the two keys count in the same minute
    const a = Number((await t.get('/v1/pairs', key)).headers.get('x-ratelimit-remaining'));
    const b = Number((await t.get('/v1/pairs', second)).headers.get('x-ratelimit-remaining'));
    expect(b).toBe(a - 1);
  });

  it('never takes a tier, and refuses bad labels and ids in the error shape', async () => {
    const key = await t.key('free');
    const tier = await t.post('/v1/account/keys', { label: 'x', tier: 'enterprise' }, asKey(key));
    expect(tier.status).toBe(400);
    expect(tier.body.message).toMatch(/unknown body parameter 'tier'/);
    for (const label of ['', ' padded', 'x'.repeat(61), 'tab\there', 'ünïcode']) {
      expect((await t.post('/v1/account/keys', { label }, asKey(key))).status, JSON.stringify(label)).toBe(400);
    }
    expect((await t.post('/v1/account/keys/abc/rotate', {}, asKey(key))).body).toMatchObject({ error: 'validation_error', status: 400 });
    expect((await del('/v1/account/keys/0', key)).body).toMatchObject({ error: 'validation_error', status: 400 });
  });

  it('refuses a body that is not JSON rather than create a key without its label', async () => {
    const key = await t.key('builder');
    const before = (await keysOf(key)).length;
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const headers: Record<string, string> = { ...asKey(key), ...(type ? { 'Content-Type': type } : {}) };
      const res = await request(t.api.url, 'POST', '/v1/account/keys', { headers, body: JSON.stringify({ label: 'production' }) });
      expect(res.status, String(type)).toBe(400);
      expect(res.body).toEqual({ error: 'validation_error', message: expect.stringMatching(/must be JSON/), status: 400 });
    }
    expect((await keysOf(key)).length).toBe(before); // nothing was created
    // a POST with no body at all (rotate, and a new key without a label) still needs no Content-Type
    const bare = await request(t.api.url, 'POST', '/v1/account/keys', { headers: asKey(key) });
    expect(bare.status).toBe(201);
    expect(bare.body.key.label).toBeNull();
  });

  it("cannot see, rotate or revoke another customer's keys", async () => {
    const mine = await t.key('professional');
    const theirs = await t.key('professional');
    const [theirKey] = await keysOf(theirs);
    expect((await keysOf(mine)).map((k) => k.id)).not.toContain(theirKey!.id);
    const rotate = await t.post(`/v1/account/keys/${theirKey!.id}/rotate`, {}, asKey(mine));
    expect(rotate.body).toMatchObject({ error: 'not_found', status: 404 });
    const revoke = await del(`/v1/account/keys/${theirKey!.id}`, mine);
    expect(revoke.body).toMatchObject({ error: 'not_found', status: 404 });
    expect((await t.get('/v1/pairs', theirs)).status).toBe(200); // untouched
  });

  it("revokes a key at once, but never the account's last one", async () => {
    const key = await t.key('builder');
    const extra = (await t.post('/v1/account/keys', { label: 'ci' }, asKey(key))).body;
    expect((await t.get('/v1/pairs', extra.api_key)).status).toBe(200);
    const revoked = await del(`/v1/account/keys/${extra.key.id}`, key);
    expect(revoked.status).toBe(200);
    expect(revoked.body.key.revoked_at).toBeTypeOf('string');
    expect((await t.get('/v1/pairs', extra.api_key)).status).toBe(401);
    const [last] = await keysOf(key);
    const refused = await del(`/v1/account/keys/${last!.id}`, key);
    expect(refused.body).toMatchObject({ error: 'conflict', status: 409 });
    expect(refused.body.message).toMatch(/rotate/);
  });

  it('rotates atomically: concurrent rotations of one key leave exactly one replacement, and the old key is refused at once', async () => {
    const manager = await t.key('professional');
    const target = (await t.post('/v1/account/keys', { label: 'production' }, asKey(manager))).body;
    expect((await t.get('/v1/pairs', target.api_key)).status).toBe(200); // cached as valid here and in Redis
    const before = (await keysOf(manager)).length;

    const answers = await Promise.all(Array.from({ length: 6 }, () => t.post(`/v1/account/keys/${target.key.id}/rotate`, {}, asKey(manager))));
    const won = answers.filter((a) => a.status === 201);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status === 404)).toHaveLength(5);
    expect(won[0]!.body.replaced.id).toBe(target.key.id);
    expect(won[0]!.body.key.label).toBe('production');

    const after = await keysOf(manager);
    expect(after).toHaveLength(before);
    expect(after.map((k) => k.id)).not.toContain(target.key.id);
    expect(after.filter((k) => k.label === 'production')).toHaveLength(1);

    expect((await t.get('/v1/pairs', target.api_key)).status).toBe(401);
    expect((await t.get('/v1/pairs', won[0]!.body.api_key)).status).toBe(200);
    // another API process sharing the Redis key cache refuses the old key too
    const elsewhere = new KeyStore(t.db.sql, t.redis, Date.now, t.api.deps.keys.scope);
    expect(await elsewhere.authenticate(target.api_key)).toBeNull();
    expect(await elsewhere.authenticate(won[0]!.body.api_key)).toMatchObject({ tier: 'professional' });
  });

  it('rotating the key in use hands its replacement to the caller', async () => {
    const key = await t.key('builder');
    const [self] = await keysOf(key);
    const rotated = await t.post(`/v1/account/keys/${self!.id}/rotate`, {}, asKey(key));
    expect(rotated.status).toBe(201);
    expect((await t.get('/v1/account', key)).status).toBe(401);
    expect((await t.get('/v1/account', rotated.body.api_key)).body.key.current).toBe(true);
  });

  it('records when each key was last used, written in a batch', async () => {
    const key = await t.key('builder');
    await t.get('/v1/pairs', key);
    await t.api.deps.keys.flushLastUsed();
    const [k] = await keysOf(key);
    const listed = (await t.get('/v1/account/keys', key)).body.keys[0];
    expect(k!.id).toBe(listed.id);
    expect(Date.now() - Date.parse(listed.last_used_at)).toBeLessThan(60_000);
  });

  it('caps an account at 20 active keys', async () => {
    const key = await t.key('enterprise');
    for (let i = 1; i < 20; i++) expect((await t.post('/v1/account/keys', { label: `k${i}` }, asKey(key))).status).toBe(201);
    const over = await t.post('/v1/account/keys', { label: 'one too many' }, asKey(key));
    expect(over.body).toMatchObject({ error: 'conflict', status: 409 });
  });
});

describe('free accounts', () => {
  it('one per email: a second free key is refused while one is active; after revoking, the same account gets a new key', async () => {
    const email = `acct-${Date.now()}@example.test`;
    const issued = await t.post('/v1/auth/free-key', { email });
    expect(issued.status).toBe(201);
    const again = await t.post('/v1/auth/free-key', { email: email.toUpperCase() });
    expect(again.status).toBe(409);
    const account = (await t.get('/v1/account', issued.body.api_key)).body.account;

    // a second key of the free account (a key per environment) is allowed: one budget
    const extra = await t.post('/v1/account/keys', { label: 'ci' }, asKey(issued.body.api_key));
    expect(extra.status).toBe(201);
    await t.api.deps.keys.revoke(account.id);
    await t.api.deps.keys.revoke(extra.body.key.id);
    const reissued = await t.post('/v1/auth/free-key', { email });
    expect(reissued.status).toBe(201);
    expect((await t.get('/v1/account', reissued.body.api_key)).body.account.id).toBe(account.id);
  });
});
