// The webhook endpoints of an account over HTTP, with the delivery worker running against real
// local receivers: registering (the secret shown once, stored only sealed), a test event that
// arrives signed with that secret and is listed with its attempts, rotation (both secrets sign for
// a while), changes, deletion; every refusal in the contract's shape: a tier without webhooks, an
// event above the tier, a non-https or private URL (checked after DNS), thresholds out of range,
// too many endpoints, another account's endpoint; and a disabled endpoint saying why.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_WEBHOOK_DELIVERIES_RESPONSE,
  ACCOUNT_WEBHOOK_RESPONSE,
  ACCOUNT_WEBHOOK_SECRET_RESPONSE,
  ACCOUNT_WEBHOOK_TEST_RESPONSE,
  ACCOUNT_WEBHOOKS_RESPONSE,
  ERROR,
} from '../../api/schemas.js';
import type { Lookup } from '../../lib/webhooks/addresses.js';
import { emitEvent } from '../../lib/webhooks/events.js';
import { createSecretBox } from '../../lib/webhooks/secrets.js';
import { SIGNATURE_HEADER, verifySignature } from '../../lib/webhooks/signature.js';
import { WebhookWorker } from '../../pipeline/webhooks/worker.js';
import { request, startTestApi, type HttpResult, type TestApi } from '../support/api.js';
import { testLog } from '../support/db.js';
import { startReceiver, type Receiver } from '../support/webhooks.js';

const SECRET_KEY = '5e'.repeat(32);
let t: TestApi; // private addresses and http allowed (the receivers are local)
let strict: TestApi; // the same database, as deployed: public https only
let worker: WebhookWorker;
let receiver: Receiver;
/** The strict API's resolver: one public name, one public-looking name that points at loopback. */
const resolver: Lookup = async (host) => {
  const answers: Record<string, string> = { 'hooks.example.com': '93.184.215.14', 'hooks.customer.example': '127.0.0.1' };
  if (!answers[host]) throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
  return [{ address: answers[host], family: 4 }];
};

const ajv = new Ajv({ strict: false, allErrors: true });
const conforms = (schema: object, body: unknown) => {
  const validate = ajv.compile(schema);
  return validate(body) ? 'ok' : JSON.stringify(validate.errors);
};
const send = (api: TestApi, method: string, path: string, key: string, body?: unknown): Promise<HttpResult> =>
  request(api.api.url, method, path, { headers: { 'X-API-Key': key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
const refused = (res: HttpResult, status: number, error: string, message: RegExp) => {
  expect(conforms(ERROR, res.body)).toBe('ok');
  expect(res.body).toMatchObject({ status, error });
  expect(res.body.message).toMatch(message);
  expect(res.status).toBe(status);
};

beforeAll(async () => {
  t = await startTestApi({ env: { WEBHOOKS_ALLOW_PRIVATE: '1', WEBHOOK_SECRET_KEY: SECRET_KEY } });
  strict = await startTestApi({ db: t.db, env: { WEBHOOK_SECRET_KEY: SECRET_KEY }, webhookLookup: resolver });
  worker = new WebhookWorker({ sql: t.db.sql, log: testLog, secrets: createSecretBox({ keyHex: SECRET_KEY, keyDir: '/nonexistent' }), allowPrivate: true, timeoutMs: 2_000, pollMs: 50 });
  worker.start();
  receiver = await startReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await strict?.close();
  await t?.close();
});

describe('registering an endpoint', () => {
  it('answers 201 with the signing secret once; lists never show it, and the database holds it only sealed', async () => {
    const key = await t.key('builder');
    const res = await send(t, 'POST', '/v1/account/webhooks', key, { url: receiver.url, events: ['pair.stale', 'heartbeat'], description: 'ops pager', stale_seconds: 600 });
    expect(res.status).toBe(201);
    expect(conforms(ACCOUNT_WEBHOOK_SECRET_RESPONSE, res.body)).toBe('ok');
    const { endpoint, secret } = res.body;
    expect(endpoint).toMatchObject({ url: receiver.url, events: ['pair.stale', 'heartbeat'], description: 'ops pager', stale_seconds: 600, divergence_pct: 2, heartbeat_seconds: 3_600, pairs: null, state: 'enabled', disabled_reason: null });
    expect(secret.startsWith(endpoint.secret_prefix)).toBe(true);

    const list = await t.get('/v1/account/webhooks', key);
    expect(conforms(ACCOUNT_WEBHOOKS_RESPONSE, list.body)).toBe('ok');
    expect(list.body.endpoints.map((e: { id: number }) => e.id)).toEqual([endpoint.id]);
    expect(list.body.limits).toEqual({ endpoints: 3, events: ['pair.divergence', 'pair.stale', 'source.failing', 'heartbeat'] });
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const [stored] = await t.db.sql<{ secret: string }[]>`SELECT secret FROM webhook_endpoints WHERE id = ${endpoint.id}`;
    expect(stored!.secret).not.toContain(secret.slice(6));
  });

  it('refuses a tier without webhooks, and an event above the tier, naming the tier needed', async () => {
    const free = await t.key('free');
    refused(await t.get('/v1/account/webhooks', free), 403, 'tier_restricted', /Webhooks requires the Builder tier/);
    refused(await send(t, 'POST', '/v1/account/webhooks', free, { url: receiver.url, events: ['heartbeat'] }), 403, 'tier_restricted', /Builder/);
    const builder = await t.key('builder');
    refused(await send(t, 'POST', '/v1/account/webhooks', builder, { url: receiver.url, events: ['pair.stale', 'restatement'] }), 403, 'tier_restricted', /'restatement' requires the Professional tier/);
  });

  it.each([
    [{ url: 'http://hooks.example.com/x', events: ['heartbeat'] }, /'url' must start with https:\/\//],
    [{ url: 'https://127.0.0.1/x', events: ['heartbeat'] }, /127\.0\.0\.1, a loopback address/],
    [{ url: 'https://hooks.customer.example/x', events: ['heartbeat'] }, /hooks\.customer\.example resolves to 127\.0\.0\.1, a loopback address/],
    [{ url: 'https://nowhere.example/x', events: ['heartbeat'] }, /nowhere\.example could not be resolved \(ENOTFOUND\)/],
    [{ url: 'https://169.254.169.254/latest/meta-data/', events: ['heartbeat'] }, /link-local/],
    [{ url: 'https://10.0.0.5/x', events: ['heartbeat'] }, /private address/],
    [{ url: 'https://[::1]/x', events: ['heartbeat'] }, /loopback/],
    [{ url: 'https://100.100.100.200/x', events: ['heartbeat'] }, /carrier-grade NAT/],
  ])('refuses %j: 400 in the contract shape', async (body, message) => {
    refused(await send(strict, 'POST', '/v1/account/webhooks', await strict.key('enterprise'), body), 400, 'validation_error', message);
  });

  // IPv6 spellings of private IPv4 addresses: each reaches the IPv4 host it carries
  it.each([
    ['https://[::127.0.0.1]/x', /IPv4-compatible for 127\.0\.0\.1, a loopback address/],
    ['https://[::ffff:0:7f00:1]/x', /IPv4-translated for 127\.0\.0\.1, a loopback address/],
    ['https://[2002:7f00:1::1]/x', /6to4 for 127\.0\.0\.1, a loopback address/],
    ['https://[2002:a9fe:a9fe::]/latest/meta-data/', /6to4 for 169\.254\.169\.254, a link-local address/],
    ['https://[64:ff9b::a9fe:a9fe]/x', /NAT64 for 169\.254\.169\.254, a link-local address/],
    ['https://[64:ff9b:1::a9fe:a9fe]/x', /a local-use NAT64 address/],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x', /Teredo for 127\.0\.0\.1, a loopback address/],
  ])('refuses %s, an IPv6 spelling of a private IPv4 address: 400 naming the operator setting', async (url, message) => {
    const res = await send(strict, 'POST', '/v1/account/webhooks', await strict.key('enterprise'), { url, events: ['heartbeat'] });
    refused(res, 400, 'validation_error', message);
    expect(res.body.message).toMatch(/public addresses only \(an operator allows private ones with WEBHOOKS_ALLOW_PRIVATE=1\)/);
  });

  it('accepts an https URL whose host resolves to public addresses', async () => {
    const key = await strict.key('enterprise');
    const res = await send(strict, 'POST', '/v1/account/webhooks', key, { url: 'https://hooks.example.com/afrates', events: ['fixing.published'] });
    expect(res.status).toBe(201);
    expect((await send(strict, 'DELETE', `/v1/account/webhooks/${res.body.endpoint.id}`, key)).status).toBe(200);
  });

  it.each([
    [{ url: 'https://h.example.com', events: ['pair.divergence'], divergence_pct: 0.01 }, /'divergence_pct' must be >= 0.1/],
    [{ url: 'https://h.example.com', events: ['pair.divergence'], divergence_pct: 75 }, /'divergence_pct' must be <= 50/],
    [{ url: 'https://h.example.com', events: ['pair.stale'], stale_seconds: 5 }, /'stale_seconds' must be >= 60/],
    [{ url: 'https://h.example.com', events: ['heartbeat'], heartbeat_seconds: 10 }, /'heartbeat_seconds' must be >= 300/],
    [{ url: 'https://h.example.com', events: ['pair.crashed'] }, /'events.0' must be one of: pair.divergence/],
    [{ url: 'https://h.example.com', events: [] }, /body parameter 'events' must not be empty/],
    [{ url: 'https://h.example.com', events: ['heartbeat', 'heartbeat', 'heartbeat', 'heartbeat', 'heartbeat', 'heartbeat', 'heartbeat', 'heartbeat', 'heartbeat'] }, /body parameter 'events' must have at most \d+ items/],
    [{ url: 'https://h.example.com', events: ['heartbeat'], pairs: ['BTCXYZ'] }, /unknown pair 'BTCXYZ' in 'pairs\[0\]'/],
    [{ events: ['heartbeat'] }, /'url' is required/],
    [{ url: 'https://h.example.com', events: ['heartbeat'], secret: 'mine' }, /unknown body parameter 'secret'/],
  ])('refuses %j before looking anything up', async (body, message) => {
    refused(await send(strict, 'POST', '/v1/account/webhooks', await strict.key('enterprise'), body), 400, 'validation_error', message);
  });

  it("refuses more endpoints than the tier allows with 409, and counts the account's, not the key's", async () => {
    const key = await t.key('builder');
    for (let i = 0; i < 3; i++) expect((await send(t, 'POST', '/v1/account/webhooks', key, { url: `${receiver.url}/${i}`, events: ['heartbeat'] })).status).toBe(201);
    refused(await send(t, 'POST', '/v1/account/webhooks', key, { url: receiver.url, events: ['heartbeat'] }), 409, 'conflict', /3 webhook endpoints, the most the Builder tier allows/);
    const other = (await send(t, 'POST', '/v1/account/keys', key, { label: 'second' })).body.api_key as string;
    refused(await send(t, 'POST', '/v1/account/webhooks', other, { url: receiver.url, events: ['heartbeat'] }), 409, 'conflict', /Builder tier allows/);
  });
});

describe('an endpoint', () => {
  let key: string;
  let id: number;
  let secret: string;
  beforeAll(async () => {
    key = await t.key('enterprise');
    const res = await send(t, 'POST', '/v1/account/webhooks', key, { url: receiver.url, events: ['restatement'], pairs: ['btcngn'] });
    expect(res.status).toBe(201);
    ({ endpoint: { id }, secret } = res.body);
    expect(res.body.endpoint.pairs).toEqual(['BTCNGN']);
  });

  it('gets a test event at once, signed with its secret, listed with its attempt', async () => {
    const before = receiver.received.length;
    const res = await send(t, 'POST', `/v1/account/webhooks/${id}/test`, key);
    expect(res.status).toBe(202);
    expect(conforms(ACCOUNT_WEBHOOK_TEST_RESPONSE, res.body)).toBe('ok');
    await receiver.waitFor(before + 1);
    const got = receiver.received.at(-1)!;
    expect(got.id).toBe(res.body.event.id);
    expect(got.type).toBe('test');
    expect(verifySignature(secret, got.headers[SIGNATURE_HEADER.toLowerCase()] as string, got.body)).toBe(true);

    await expect.poll(async () => (await t.get(`/v1/account/webhooks/${id}/deliveries`, key)).body.deliveries?.[0]?.state).toBe('delivered');
    const list = await t.get(`/v1/account/webhooks/${id}/deliveries?limit=5`, key);
    expect(conforms(ACCOUNT_WEBHOOK_DELIVERIES_RESPONSE, list.body)).toBe('ok');
    expect(list.body.deliveries[0]).toMatchObject({ event: { id: res.body.event.id, type: 'test', pair: null }, state: 'delivered', attempts: 1, next_attempt_at: null, attempt_log: [{ attempt: 1, status: 200, error: null }] });
  });

  it('rotates its secret: shown once, and both secrets sign the deliveries for a day', async () => {
    const res = await send(t, 'POST', `/v1/account/webhooks/${id}/rotate-secret`, key);
    expect(res.status).toBe(200);
    expect(conforms(ACCOUNT_WEBHOOK_SECRET_RESPONSE, res.body)).toBe('ok');
    const rotated = res.body.secret as string;
    expect(rotated).not.toBe(secret);
    expect(Date.parse(res.body.endpoint.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    const before = receiver.received.length;
    await send(t, 'POST', `/v1/account/webhooks/${id}/test`, key);
    await receiver.waitFor(before + 1);
    const got = receiver.received.at(-1)!;
    const header = got.headers[SIGNATURE_HEADER.toLowerCase()] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(rotated, header, got.body)).toBe(true);
    expect(verifySignature(secret, header, got.body)).toBe(true);
    secret = rotated;
  });

  it('changes its settings, checking a new URL as at registration', async () => {
    const res = await send(t, 'POST', `/v1/account/webhooks/${id}`, key, { divergence_pct: 1.5, events: ['pair.divergence', 'fixing.published'], pairs: null });
    expect(res.status).toBe(200);
    expect(conforms(ACCOUNT_WEBHOOK_RESPONSE, res.body)).toBe('ok');
    expect(res.body.endpoint).toMatchObject({ divergence_pct: 1.5, events: ['pair.divergence', 'fixing.published'], pairs: null, url: receiver.url });
    refused(await send(strict, 'POST', `/v1/account/webhooks/${id}`, key, { url: 'https://192.168.1.10/hook' }), 400, 'validation_error', /private address/);
    refused(await send(t, 'POST', `/v1/account/webhooks/${id}`, key, {}), 400, 'validation_error', /^the body must not be empty$/);
    refused(await send(t, 'POST', `/v1/account/webhooks/${id}`, key, { stale_seconds: 100_000 }), 400, 'validation_error', /'stale_seconds' must be <= 86400/);
  });

  it("is another account's business: 404 for its id, as if it did not exist", async () => {
    const stranger = await t.key('enterprise');
    refused(await t.get(`/v1/account/webhooks/${id}/deliveries`, stranger), 404, 'not_found', new RegExp(`No webhook endpoint ${id}`));
    refused(await send(t, 'POST', `/v1/account/webhooks/${id}`, stranger, { enabled: false }), 404, 'not_found', /No webhook endpoint/);
    refused(await send(t, 'POST', `/v1/account/webhooks/${id}/test`, stranger), 404, 'not_found', /No webhook endpoint/);
    refused(await send(t, 'POST', `/v1/account/webhooks/${id}/rotate-secret`, stranger), 404, 'not_found', /No webhook endpoint/);
    refused(await send(t, 'DELETE', `/v1/account/webhooks/${id}`, stranger), 404, 'not_found', /No webhook endpoint/);
    expect((await t.get('/v1/account/webhooks', stranger)).body.endpoints).toEqual([]);
  });

  it('failing every delivery for 24 hours is listed as disabled with the reason; test events are refused until enabled again', async () => {
    const dead = await startReceiver(() => 503);
    try {
      const res = await send(t, 'POST', `/v1/account/webhooks/${id}`, key, { url: dead.url });
      expect(res.status).toBe(200);
      // the worker on a clock that has seen the endpoint fail from now to 24 hours on (the
      // service's own worker paused meanwhile: it would take these deliveries on today's clock)
      await worker.stop();
      const t0 = Date.now();
      let clock = t0;
      const late = new WebhookWorker({ sql: t.db.sql, log: testLog, secrets: createSecretBox({ keyHex: SECRET_KEY, keyDir: '/nonexistent' }), allowPrivate: true, now: () => clock });
      for (const at of [t0, t0 + 12 * 3_600_000, t0 + 24 * 3_600_000 + 1]) {
        clock = at;
        await emitEvent(t.db.sql, { type: 'fixing.published', data: { date: '2026-11-23' }, at: new Date(at) });
        await late.runOnce();
      }
      await late.stop();
      const list = await t.get('/v1/account/webhooks', key);
      expect(list.body.endpoints[0]).toMatchObject({ id, state: 'disabled', disabled_reason: expect.stringMatching(/every delivery failed for 24 hours \(last: HTTP 503\)/) });
      refused(await send(t, 'POST', `/v1/account/webhooks/${id}/test`, key), 409, 'conflict', /is disabled: enable it first/);

      const enabled = await send(t, 'POST', `/v1/account/webhooks/${id}`, key, { enabled: true, url: receiver.url });
      expect(enabled.body.endpoint).toMatchObject({ state: 'enabled', disabled_reason: null, failing_since: null });
      expect((await send(t, 'POST', `/v1/account/webhooks/${id}/test`, key)).status).toBe(202);
    } finally {
      worker.start();
      await dead.close();
    }
  });

  it('is deleted with its deliveries', async () => {
    const res = await send(t, 'DELETE', `/v1/account/webhooks/${id}`, key);
    expect(res.status).toBe(200);
    expect(conforms(ACCOUNT_WEBHOOK_RESPONSE, res.body)).toBe('ok');
    expect((await t.get('/v1/account/webhooks', key)).body.endpoints).toEqual([]);
    refused(await send(t, 'DELETE', `/v1/account/webhooks/${id}`, key), 404, 'not_found', /No webhook endpoint/);
    const [{ left }] = (await t.db.sql<{ left: number }[]>`SELECT count(*)::int AS left FROM webhook_deliveries WHERE endpoint_id = ${id}`) as unknown as [{ left: number }];
    expect(left).toBe(0);
  });
});
