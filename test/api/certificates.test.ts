// Certificates: enterprise only, deterministic, and both signatures verify independently with
// node:crypto (HMAC with the shared secret, Ed25519 with the published public key).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parametersInForce } from '../../lib/methodology/parameters.js';
import { softwareIdentity } from '../../lib/software.js';
import { Certifier } from '../../pipeline/certify/issue.js';
import { createSigner } from '../../lib/signer.js';
import { startTestApi, type TestApi } from '../support/api.js';
import * as ref from '../support/reference.js';

const SECRET = 'test-secret-for-certificates';
let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ hours: 3, env: { CERT_HMAC_SECRET: SECRET } });
});
afterAll(async () => {
  await t?.close();
});

describe('certificates', () => {
  it('are for Enterprise only', async () => {
    for (const tier of ['free', 'builder', 'professional'] as const) {
      const res = await t.get('/v1/certificates/BTCNGN', await t.key(tier));
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('tier_restricted');
    }
  });

  it('list one certificate per settled 5-minute VWAP, newest first, with download paths', async () => {
    const res = await t.get('/v1/certificates/BTCNGN?limit=1000', t.keys.enterprise);
    expect(res.status).toBe(200);
    // settled buckets only (here by the lag: SETTLE_AFTER_SECONDS after they end), as of the
    // harness's settlement: a bucket that settles later waits for the next cycle's certificate
    const settled = Math.floor((t.settledAt.getTime() - t.config.settleAfterSeconds * 1000) / 300_000) * 300_000;
    const buckets = ref.candles(t.trades.filter((x) => x.pair === 'BTCNGN'), '5m').filter((c) => c.bucket + 300_000 <= settled);
    expect(buckets.length).toBeGreaterThan(10);
    expect(res.body.count).toBe(buckets.length);
    const newest = buckets.at(-1)!;
    expect(ref.closeTo(res.body.certificates[0].rate, newest.vwap, 1e-10)).toBe(true);
    expect(res.body.certificates[0].certificate_url).toBe(`/v1/certificates/BTCNGN/${encodeURIComponent(res.body.certificates[0].timestamp)}`);
    const limited = await t.get('/v1/certificates/BTCNGN?limit=3', t.keys.enterprise);
    expect(limited.body.count).toBe(3);
    // one bound alone: the other follows it (a week before `end`; `end` at least `start`)
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const beforeData = await t.get(`/v1/certificates/BTCNGN?end=${day(Date.now() - 10 * 86_400_000)}`, t.keys.enterprise);
    expect([beforeData.status, beforeData.body.count]).toEqual([200, 0]);
    const fromToday = await t.get(`/v1/certificates/BTCNGN?start=${day(Date.now())}&limit=1000`, t.keys.enterprise);
    expect(fromToday.status).toBe(200);
    const ahead = await t.get(`/v1/certificates/BTCNGN?start=${day(Date.now() + 2 * 86_400_000)}`, t.keys.enterprise);
    expect([ahead.status, ahead.body.count]).toEqual([200, 0]);
  });

  it('page through a range holding more than the limit with Link rel="next", every certificate once', async () => {
    const all = (await t.get('/v1/certificates/BTCNGN?limit=1000', t.keys.enterprise)).body.certificates as { timestamp: string }[];
    expect(all.length).toBeGreaterThan(10);
    const seen: string[] = [];
    let next: string | null = '/v1/certificates/BTCNGN?limit=4';
    for (let pages = 0; next; pages++) {
      expect(pages).toBeLessThan(all.length); // no endless loop
      const page = await t.get(next, t.keys.enterprise);
      expect(page.status).toBe(200);
      expect(page.body.count).toBeLessThanOrEqual(4);
      seen.push(...page.body.certificates.map((c: { timestamp: string }) => c.timestamp));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1] ?? null;
    }
    expect(seen).toEqual(all.map((c) => c.timestamp)); // newest first, none lost, none twice
    const last = await t.get('/v1/certificates/BTCNGN?limit=1000', t.keys.enterprise);
    expect(last.headers.get('link')).toBeNull(); // all in one page: no next
    const bad = await t.get(`/v1/certificates/BTCNGN?cursor=${encodeURIComponent('2020-01-01T00:00:00+00:00')}`, t.keys.enterprise);
    expect(bad.body).toMatchObject({ error: 'validation_error', status: 400 });
  });

  it('verify with HMAC-SHA256 and Ed25519, and are byte-identical when fetched again', async () => {
    const list = await t.get('/v1/certificates/BTCNGN?limit=5', t.keys.enterprise);
    const url = list.body.certificates[2].certificate_url as string;
    const first = await fetch(`${t.api.url}${url}`, { headers: { 'X-API-Key': t.keys.enterprise } });
    const text = await first.text();
    const second = await (await fetch(`${t.api.url}${url}`, { headers: { 'X-API-Key': t.keys.enterprise } })).text();
    expect(second).toBe(text);

    const cert = JSON.parse(text);
    expect(first.status, text).toBe(200);
    expect(cert.certificate_id).toMatch(/^CERT-BTCNGN-\d{8}T\d{6}Z$/);
    expect(cert.validity).toEqual({ not_before: cert.data.timestamp, not_after: null });
    expect(cert.customer).toEqual({ tier: 'enterprise', customer_name: 'enterprise customer' });
    const payload = JSON.parse(cert.audit.signed_payload);
    expect(Object.keys(payload)).toEqual(['pair', 'rate', 'sources', 'time']);
    expect(payload).toMatchObject({ pair: 'BTCNGN', time: cert.data.timestamp, sources: cert.data.sources });
    expect(Number(payload.rate)).toBe(cert.data.rate);

    const hmac = crypto.createHmac('sha256', SECRET).update(cert.audit.signed_payload).digest('hex');
    expect(cert.audit.signature).toBe(hmac);

    const keys = await t.get('/v1/certificates/keys'); // public: no key needed
    const publicKey = crypto.createPublicKey(keys.body.keys[0].public_key_pem);
    expect(crypto.verify(null, Buffer.from(cert.audit.signed_payload), publicKey, Buffer.from(cert.audit.ed25519_signature, 'base64'))).toBe(true);
    const tampered = cert.audit.signed_payload.replace(payload.rate, String(Number(payload.rate) + 1));
    expect(crypto.verify(null, Buffer.from(tampered), publicKey, Buffer.from(cert.audit.ed25519_signature, 'base64'))).toBe(false);
  });

  it("carry one software version, package.json's, as health and the OpenAPI document do", async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect((await t.get('/v1/health')).body.version).toBe(version);
    expect((await t.get('/v1/openapi.json')).body.info.version).toBe(version);
    const list = await t.get('/v1/certificates/BTCNGN?limit=1', t.keys.enterprise);
    const cert = (await t.get(list.body.certificates[0].certificate_url, t.keys.enterprise)).body;
    const bundle = await t.get(cert.bundle.url, t.keys.enterprise);
    expect(bundle.status).toBe(200);
    expect(bundle.body.software).toMatchObject({ name: 'afrates', version });
  });

  it('are not issued for a bucket still open, nor for one closed but not settled yet', async () => {
    const open = Math.floor(Date.now() / 300_000) * 300_000;
    for (const bucket of [open, open - 300_000]) {
      const at = new Date(bucket).toISOString().replace('.000Z', '%2B00:00');
      const res = await t.get(`/v1/certificates/BTCNGN/${at}`, t.keys.enterprise);
      expect(res.status).toBe(404);
      expect(res.body.message).toMatch(/settle/);
    }
  });

  it('refuses a timestamp finer than a millisecond or not a real date, instead of serving another bucket', async () => {
    const list = await t.get('/v1/certificates/BTCNGN?limit=1', t.keys.enterprise);
    const at = list.body.certificates[0].timestamp as string; // e.g. 2026-11-20T08:10:00+00:00
    const finer = `${at.slice(0, 19)}.0009%2B00:00`;
    expect((await t.get(`/v1/certificates/BTCNGN/${finer}`, t.keys.enterprise)).body.error).toBe('validation_error');
    expect((await t.get('/v1/certificates/BTCNGN/2026-02-29T00:00:00%2B00:00', t.keys.enterprise)).body.error).toBe('validation_error');
  });

  it('answers 404 for a time without a published rate', async () => {
    const res = await t.get('/v1/certificates/BTCNGN/2001-01-01T00:00:00%2B00:00', t.keys.enterprise);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  it('stay verifiable after the signing key is rotated: every key that signed is listed, the one in use first', async () => {
    // the service comes back with a new Ed25519 key and certifies the next bucket that settles
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-rotated-'));
    const rotated = createSigner({ hmacSecret: SECRET, keyDir: dir });
    const [settled] = await t.db.sql<{ settled_through: Date }[]>`SELECT settled_through FROM pair_settlement WHERE pair = 'BTCNGN'`;
    const next = { pair: 'BTCNGN', from: settled!.settled_through, to: new Date(settled!.settled_through.getTime() + 300_000) };
    expect(await new Certifier(t.db.sql, { signer: rotated, issuerUrl: 'https://afrates.test', market: 'real', software: softwareIdentity(), parameters: parametersInForce(900) }).issue([next])).toBe(1);
    const restarted = await startTestApi({ db: t.db, env: { CERT_HMAC_SECRET: SECRET, CERT_ED25519_PRIVATE_KEY: fs.readFileSync(path.join(dir, 'cert-ed25519.pem'), 'utf8') } });
    try {
      const keys = (await restarted.get('/v1/certificates/keys')).body.keys as { key_id: string; public_key_pem: string }[];
      expect(keys[0]!.key_id).toBe(rotated.keyId);
      const byId = new Map(keys.map((k) => [k.key_id, crypto.createPublicKey(k.public_key_pem)]));
      const list = await restarted.get('/v1/certificates/BTCNGN?limit=1000', restarted.keys.enterprise);
      const signedBy = new Set<string>();
      for (const { certificate_url } of list.body.certificates as { certificate_url: string }[]) {
        const cert = (await restarted.get(certificate_url, restarted.keys.enterprise)).body;
        const key = byId.get(cert.audit.ed25519_key_id);
        expect(key, `${cert.certificate_id} names key ${cert.audit.ed25519_key_id}`).toBeDefined();
        expect(crypto.verify(null, Buffer.from(cert.audit.signed_payload), key!, Buffer.from(cert.audit.ed25519_signature, 'base64'))).toBe(true);
        signedBy.add(cert.audit.ed25519_key_id);
      }
      expect(signedBy.size).toBe(2); // the first key's certificates and the rotated key's
    } finally {
      await restarted.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
