// The transparency log's public endpoints over HTTP: signed heads that verify with the published
// key, proofs that verify by RFC 9162 (as written out in test/support/rfc9162.ts) against those
// heads, every bad parameter refused in the error shape, no key needed, a per-address limit.
import crypto from 'node:crypto';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_PER_MINUTE as PER_MINUTE } from '../../api/limits/limiter.js';
import { ERROR, TRANSPARENCY_CONSISTENCY_RESPONSE, TRANSPARENCY_HEADS_RESPONSE, TRANSPARENCY_HEAD_RESPONSE, TRANSPARENCY_INCLUSION_RESPONSE } from '../../api/schemas.js';
import { append, publishHead } from '../../lib/transparency/log.js';
import { startTestApi, type HttpResult, type TestApi } from '../support/api.js';
import { rfcLeafHash, rfcVerifyConsistency, rfcVerifyInclusion, rootOfEntries } from '../support/rfc9162.js';

let t: TestApi;
const ajv = new Ajv({ strict: false, allErrors: true });
const unhex = (h: string) => Buffer.from(h, 'hex');
const today = () => new Date().toISOString().slice(0, 10);

// TRUST_PROXY=1: each group of requests comes from an address of its own (X-Forwarded-For), so
// the per-address limit of one test does not spend another's
let nextAddress = 1;
function client() {
  const ip = `198.51.100.${nextAddress++}`;
  return (path: string): Promise<HttpResult> => t.get(path, null, { 'X-Forwarded-For': ip });
}

function fits(schema: object, body: unknown): void {
  const validate = ajv.compile(schema);
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
}

/** Every entry's text in leaf order, read from the database: the log as a monitor would mirror it. */
async function loggedTexts(): Promise<string[]> {
  return (await t.db.sql<{ entry: string }[]>`SELECT entry FROM transparency_entries ORDER BY leaf_index`).map((r) => r.entry);
}

const sign = (payload: string) => ({ signature: t.api.deps.signer.ed25519(payload), keyId: t.api.deps.signer.keyId });
const entries = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `TEST-FIXING-${from + i}`, kind: 'fixing' as const, entry: { pair: 'BTCNGN', seq: from + i, rate: '101234.5' } }));

beforeAll(async () => {
  t = await startTestApi({ env: { TRUST_PROXY: '1' } });
});
afterAll(async () => {
  await t?.close();
});

describe('before the first head', () => {
  it('GET /v1/transparency/head is 404 not_found, and so is a proof that needs the newest head', async () => {
    const get = client();
    const head = await get('/v1/transparency/head');
    expect(head.status).toBe(404);
    fits(ERROR, head.body);
    expect(head.body).toMatchObject({ error: 'not_found', status: 404 });
    await append(t.db.sql, entries(0, 3));
    const proof = await get('/v1/transparency/proof/inclusion?id=TEST-FIXING-0');
    expect(proof.status).toBe(404);
    expect(proof.body.error).toBe('not_found');
  });
});

describe('heads and proofs', () => {
  let first: { tree_size: number; root_hash: string };

  beforeAll(async () => {
    await append(t.db.sql, entries(3, 37));
    await publishHead(t.db.sql, sign, new Date());
  });

  it('the newest head is signed with the published Ed25519 key, over the root of the logged entries, without a key', async () => {
    const get = client();
    const res = await get('/v1/transparency/head');
    expect(res.status).toBe(200);
    fits(TRANSPARENCY_HEAD_RESPONSE, res.body);
    first = res.body;
    const texts = await loggedTexts();
    expect(res.body.tree_size).toBe(texts.length);
    expect(res.body.root_hash).toBe(rootOfEntries(texts).toString('hex'));
    expect(JSON.parse(res.body.signed_payload)).toEqual({ root_hash: res.body.root_hash, timestamp: res.body.timestamp, tree_size: res.body.tree_size });

    const keys = await get('/v1/certificates/keys');
    const key = keys.body.keys.find((k: { key_id: string }) => k.key_id === res.body.key_id);
    expect(key).toBeDefined();
    const publicKey = crypto.createPublicKey(key.public_key_pem);
    expect(crypto.verify(null, Buffer.from(res.body.signed_payload), publicKey, Buffer.from(res.body.signature, 'base64'))).toBe(true);
    const forged = res.body.signed_payload.replace(`"tree_size":${res.body.tree_size}`, `"tree_size":${res.body.tree_size - 1}`);
    expect(crypto.verify(null, Buffer.from(forged), publicKey, Buffer.from(res.body.signature, 'base64'))).toBe(false);
  });

  it('lists the heads of a UTC day', async () => {
    const get = client();
    const res = await get(`/v1/transparency/heads?date=${today()}`);
    expect(res.status).toBe(200);
    fits(TRANSPARENCY_HEADS_RESPONSE, res.body);
    expect(res.body).toMatchObject({ date: today(), count: 1 });
    expect(res.body.heads[0]).toEqual({ ...first, kept: false });
    expect((await get('/v1/transparency/heads')).body).toEqual(res.body); // today by default
    expect((await get('/v1/transparency/heads?date=2020-01-01')).body).toEqual({ date: '2020-01-01', count: 0, heads: [] });
  });

  it("proves an entry's inclusion in the newest head's tree, and in any earlier tree that holds it", async () => {
    const get = client();
    const texts = await loggedTexts();
    const res = await get('/v1/transparency/proof/inclusion?id=TEST-FIXING-17');
    expect(res.status).toBe(200);
    fits(TRANSPARENCY_INCLUSION_RESPONSE, res.body);
    expect(res.body).toMatchObject({ id: 'TEST-FIXING-17', tree_size: first.tree_size, entry: '{"pair":"BTCNGN","rate":"101234.5","seq":17}' });
    expect(res.body.leaf_hash).toBe(rfcLeafHash(res.body.entry).toString('hex'));
    expect(rfcVerifyInclusion(res.body.leaf_index, res.body.tree_size, unhex(res.body.leaf_hash), res.body.audit_path.map(unhex), unhex(first.root_hash))).toBe(true);

    const earlier = res.body.leaf_index + 1;
    const older = await get(`/v1/transparency/proof/inclusion?id=TEST-FIXING-17&tree_size=${earlier}`);
    expect(older.status).toBe(200);
    expect(rfcVerifyInclusion(res.body.leaf_index, earlier, unhex(res.body.leaf_hash), older.body.audit_path.map(unhex), rootOfEntries(texts.slice(0, earlier)))).toBe(true);
  });

  it('proves each newer head consistent with an older one', async () => {
    const get = client();
    const texts = await loggedTexts();
    const res = await get(`/v1/transparency/proof/consistency?first=10&second=${first.tree_size}`);
    expect(res.status).toBe(200);
    fits(TRANSPARENCY_CONSISTENCY_RESPONSE, res.body);
    expect(rfcVerifyConsistency(10, first.tree_size, rootOfEntries(texts.slice(0, 10)), unhex(first.root_hash), res.body.proof.map(unhex))).toBe(true);
    expect((await get(`/v1/transparency/proof/consistency?first=${first.tree_size}&second=${first.tree_size}`)).body.proof).toEqual([]);

    // the log grows and signs a new head: a monitor holding the first checks the second against it
    await append(t.db.sql, entries(40, 23));
    await publishHead(t.db.sql, sign, new Date());
    const second = (await get('/v1/transparency/head')).body;
    expect(second.tree_size).toBe(first.tree_size + 23);
    const proof = await get(`/v1/transparency/proof/consistency?first=${first.tree_size}&second=${second.tree_size}`);
    expect(rfcVerifyConsistency(first.tree_size, second.tree_size, unhex(first.root_hash), unhex(second.root_hash), proof.body.proof.map(unhex))).toBe(true);
    expect((await get(`/v1/transparency/heads?date=${today()}`)).body.count).toBe(2);
  });

  it('refuses every bad parameter in the error shape', async () => {
    const get = client();
    const size = (await get('/v1/transparency/head')).body.tree_size as number;
    const cases: [string, number][] = [
      ['/v1/transparency/proof/inclusion', 400],
      ['/v1/transparency/proof/inclusion?id=', 400],
      ['/v1/transparency/proof/inclusion?id=has%20space', 400],
      [`/v1/transparency/proof/inclusion?id=${'x'.repeat(201)}`, 400],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-1&tree_size=0', 400],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-1&tree_size=-3', 400],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-1&tree_size=1.5', 400],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-1&tree_size=abc', 400],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-1&tree_size=1e3', 400],
      [`/v1/transparency/proof/inclusion?id=TEST-FIXING-1&tree_size=${size + 1}`, 400],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-1&tree_size=1&tree_size=2', 400],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-1&leaf=1', 400],
      ['/v1/transparency/proof/inclusion?id=NO-SUCH-ENTRY', 404],
      ['/v1/transparency/proof/inclusion?id=TEST-FIXING-9&tree_size=9', 404], // leaf 9 joined the tree of 10
      ['/v1/transparency/proof/consistency', 400],
      ['/v1/transparency/proof/consistency?first=1', 400],
      ['/v1/transparency/proof/consistency?first=0&second=5', 400],
      ['/v1/transparency/proof/consistency?first=6&second=5', 400],
      [`/v1/transparency/proof/consistency?first=1&second=${size + 1}`, 400],
      ['/v1/transparency/proof/consistency?first=x&second=5', 400],
      ['/v1/transparency/proof/consistency?first=999999999999999999&second=5', 400],
      ['/v1/transparency/heads?date=2026-13-01', 400],
      ['/v1/transparency/heads?date=yesterday', 400],
      ['/v1/transparency/head?x=1', 400],
    ];
    for (const [path, status] of cases) {
      const res = await get(path);
      expect(res.status, path).toBe(status);
      fits(ERROR, res.body);
      expect(res.body.error, path).toBe(status === 400 ? 'validation_error' : 'not_found');
      expect(res.body.message, path).not.toMatch(/select|transparency_entries|at .*\.ts/i);
    }
  });
});

describe('the public limit', () => {
  it(`answers 429 with the rate-limit headers past ${PER_MINUTE} requests a minute per address, leaving other addresses alone`, async () => {
    const get = client();
    let refused: HttpResult | null = null;
    let answered = 0;
    // a minute boundary can reset the count once: at most two minutes' worth
    for (let i = 0; i < 2 * PER_MINUTE + 5 && !refused; i++) {
      const res = await get('/v1/transparency/proof/consistency?first=1&second=2');
      if (res.status === 429) refused = res;
      else {
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe(String(PER_MINUTE));
        answered++;
      }
    }
    expect(answered).toBeGreaterThanOrEqual(PER_MINUTE);
    expect(refused?.body).toMatchObject({ error: 'rate_limit_exceeded', status: 429 });
    expect(refused?.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await client()('/v1/transparency/head')).status).toBe(200);
  });
});
