// Enterprise: signed certificates of published 5-minute VWAPs. Deterministic: built only from
// stored data and the signing keys, so the same request gives the same bytes.
// GET /v1/certificates/keys (public) publishes the Ed25519 key for independent verification.
import crypto from 'node:crypto';
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { notFound, validationError } from '../errors.js';
import { dayStart, num, numeric, parseTimestamp, timestamp } from '../format.js';
import { knownPair, requireTier, type Operation } from '../operation.js';
import { signedRatePayload } from '../certificates/signer.js';
import { certificateAt, venueBuckets } from '../queries/certificates.js';
import { byBucket, certifiedRate } from '../certificates/rate.js';
import { CERTIFICATE_KEYS_RESPONSE, CERTIFICATE_LIST_RESPONSE, CERTIFICATE_RESPONSE, type CertificateKeysResponse, type CertificateListResponse, type CertificateResponse } from '../schemas.js';
import { DATE, PAIR, parseParams, parseQuery } from '../validate.js';
import * as v from '../verification.js';

const DAY_MS = 86_400_000;
const BUCKET_MS = 300_000;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start: { ...DATE, description: 'first UTC day; default 7 days ago' },
    end: { ...DATE, description: 'last UTC day, inclusive; default today' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  },
} as const;
const pairParams = { type: 'object', required: ['pair'], additionalProperties: false, properties: { pair: PAIR } } as const;
const certParams = {
  type: 'object',
  required: ['pair', 'timestamp'],
  additionalProperties: false,
  properties: { pair: PAIR, timestamp: { type: 'string', maxLength: 40, description: 'a timestamp from the list, e.g. 2026-11-20T10:05:00+00:00' } },
} as const;
const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/certificates/keys', summary: 'Ed25519 public key for verifying certificates (no key needed)', tier: null, query: noQuery, response: CERTIFICATE_KEYS_RESPONSE },
  { method: 'get', path: '/v1/certificates/:pair', summary: 'Certificates available for a pair', tier: 'enterprise', params: pairParams, query: listQuery, response: CERTIFICATE_LIST_RESPONSE },
  { method: 'get', path: '/v1/certificates/:pair/:timestamp', summary: 'One signed rate certificate', tier: 'enterprise', params: certParams, query: noQuery, response: CERTIFICATE_RESPONSE },
];

const compact = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/certificates/keys', async (ctx: AppContext) => {
    parseQuery(noQuery, ctx.query);
    ctx.body = { keys: [{ key_id: deps.signer.keyId, algorithm: 'Ed25519', public_key_pem: deps.signer.publicKeyPem }] } satisfies CertificateKeysResponse;
  });

  router.get('/v1/certificates/:pair', async (ctx: AppContext) => {
    requireTier(ctx, 'enterprise', 'Certificates');
    const pair = knownPair(deps, parseParams(pairParams, ctx.params).pair!, 'pair');
    const q = parseQuery(listQuery, ctx.query);
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const from = q.start ? dayStart(q.start) : new Date(today - 7 * DAY_MS);
    const to = q.end ? new Date(dayStart(q.end).getTime() + DAY_MS) : new Date(today + DAY_MS);
    if (to <= from) throw validationError("'end' must not be before 'start'");
    const buckets = [...byBucket(await venueBuckets(deps.sql, pair.pair, from, to, q.limit))];
    ctx.body = {
      pair: pair.pair,
      count: buckets.length,
      certificates: buckets.map(([bucket, rows]) => ({
        timestamp: timestamp(bucket),
        rate: numeric(certifiedRate(rows).rate),
        certificate_url: `/v1/certificates/${pair.pair}/${encodeURIComponent(timestamp(bucket))}`,
      })),
    } satisfies CertificateListResponse;
  });

  router.get('/v1/certificates/:pair/:timestamp', async (ctx: AppContext) => {
    requireTier(ctx, 'enterprise', 'Certificates');
    const params = parseParams(certParams, ctx.params);
    parseQuery(noQuery, ctx.query);
    const pair = knownPair(deps, params.pair!, 'pair');
    const at = parseTimestamp(params.timestamp!);
    if (!at) throw validationError("path parameter 'timestamp' must be ISO 8601 with a +00:00 offset, e.g. 2026-11-20T10:05:00+00:00");
    if (at.getTime() % BUCKET_MS !== 0) throw notFound(`Certificates exist for 5-minute bucket starts only; ${params.timestamp} is not one.`);
    const found = await certificateAt(deps.sql, pair.pair, at);
    if (!found) throw notFound(`No published rate for ${pair.pair} at ${timestamp(at)} (certificates exist once a 5-minute bucket has closed).`);

    const certified = certifiedRate(found.venues);
    const rate = certified.rate;
    const synthetic = found.syntheticPrice === null ? null : Number(found.syntheticPrice);
    const div = v.divergence(rate, synthetic);
    const prices = certified.prices;
    const row = { bucket: at, sources: certified.sources, trades: certified.trades, volume: certified.volume };
    const signedPayload = signedRatePayload(pair.pair, String(num(rate)), row.sources, timestamp(row.bucket));
    const customer = ctx.state.customer!;
    ctx.body = {
      certificate_id: `CERT-${pair.pair}-${compact(row.bucket)}`,
      schema_version: '1.0',
      issuer: { name: 'afrates', url: deps.config.publicUrl },
      // when the 5-minute VWAP closed: fixed by the data, so the certificate is reproducible
      issued_at: timestamp(row.bucket.getTime() + BUCKET_MS),
      data: {
        pair: pair.pair,
        base: pair.base,
        quote: pair.quote,
        timestamp: timestamp(row.bucket),
        rate: numeric(rate),
        currency: pair.quote,
        calculation: 'vwap',
        sources: row.sources,
        vwap_sources_count: row.sources.length,
      },
      verification: {
        status: v.verificationStatus(div, pair.quote),
        confidence: v.confidence({ sources: prices.length, dispersion: v.dispersion(prices), divergence: div, quote: pair.quote, ageSeconds: 0 }),
        divergence_pct: div === null ? null : v.percent(div),
        synthetic_price: num(synthetic),
        data_quality: prices.length >= 2 ? 'high' : 'medium',
      },
      audit: {
        collection_id: `COL-${crypto.createHash('sha256').update(`${pair.pair}|${row.bucket.toISOString()}|${row.trades}|${row.volume}`).digest('hex').slice(0, 20)}`,
        algorithm: 'HMAC-SHA256',
        signature: deps.signer.hmac(signedPayload),
        signed_payload: signedPayload,
        ed25519_signature: deps.signer.ed25519(signedPayload),
        ed25519_key_id: deps.signer.keyId,
      },
      customer: { tier: customer.tier, customer_name: customer.name },
      validity: { not_before: timestamp(row.bucket), not_after: null },
    } satisfies CertificateResponse;
  });
}
