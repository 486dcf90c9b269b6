// The marketplace gateway: with GATEWAY_SECRET set, a request proving it with
// X-RapidAPI-Proxy-Secret is the gateway's user, at the tier its plan maps to; otherwise ignored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  // the limiter's clock stands still: eleven requests can't straddle a minute boundary
  const minute = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
  t = await startTestApi({ hours: 1, env: { GATEWAY_SECRET: 'gw-secret' }, now: () => minute });
});
afterAll(async () => {
  await t?.close();
});

const gw = (plan: string, secret = 'gw-secret', user = 'alice') => ({ 'X-RapidAPI-Proxy-Secret': secret, 'X-RapidAPI-User': user, 'X-RapidAPI-Subscription': plan });

describe('marketplace gateway', () => {
  it('maps plans to tiers', async () => {
    expect((await t.get('/v1/certificates/BTCNGN', null, gw('MEGA'))).status).toBe(200);
    expect((await t.get('/v1/rates/markets', null, gw('PRO'))).status).toBe(200);
    const basic = await t.get('/v1/rates/markets', null, gw('BASIC', 'gw-secret', 'bob'));
    expect(basic.status).toBe(403);
    expect((await t.get('/v1/rates/markets', null, gw('SOMETHING', 'gw-secret', 'carol'))).status).toBe(403); // unknown plan: free
  });

  it('refuses a wrong secret and counts limits per gateway user', async () => {
    expect((await t.get('/v1/pairs', null, gw('MEGA', 'nope'))).status).toBe(401);
    for (let i = 0; i < 10; i++) expect((await t.get('/v1/pairs', null, gw('BASIC', 'gw-secret', 'dave'))).status).toBe(200);
    expect((await t.get('/v1/pairs', null, gw('BASIC', 'gw-secret', 'dave'))).status).toBe(429);
    expect((await t.get('/v1/pairs', null, gw('BASIC', 'gw-secret', 'erin'))).status).toBe(200);
  });
});

describe('behind a proxy (TRUST_PROXY=1)', () => {
  let p: TestApi;
  beforeAll(async () => {
    p = await startTestApi({ hours: 1, env: { TRUST_PROXY: '1' } });
  });
  afterAll(async () => {
    await p?.close();
  });

  it('takes the address the proxy saw, so a client cannot pick its own by writing X-Forwarded-For', async () => {
    // the client writes whatever it likes on the left; the proxy appends the address it saw
    const issue = (spoofed: string, seen: string) =>
      p.post('/v1/auth/free-key', { email: `proxy+${Math.random().toString(36).slice(2)}@example.test` }, { 'X-Forwarded-For': `${spoofed}, ${seen}` });
    for (let i = 0; i < 5; i++) expect((await issue(`203.0.113.${i}`, '198.51.100.7')).status).toBe(201);
    const sixth = await issue('203.0.113.99', '198.51.100.7');
    expect(sixth.status).toBe(429);
    // its headers describe the issuance window, and agree with each other
    expect(sixth.headers.get('x-ratelimit-limit')).toBe('5');
    const untilReset = Number(sixth.headers.get('x-ratelimit-reset')) - Date.now() / 1000;
    expect(Math.abs(Number(sixth.headers.get('retry-after')) - untilReset)).toBeLessThanOrEqual(1.5);
    // another client behind the same proxy has its own budget
    expect((await issue('203.0.113.99', '198.51.100.8')).status).toBe(201);
  });
});
