// Enterprise: signed certificates of published 5-minute VWAPs. Certificates are issued once, when
// their bucket settles (api/certificates/issue.ts), and stored: these routes only read them back,
// so the same certificate is the same bytes forever (plus the requesting customer's section).
// GET /v1/certificates/keys (public) publishes the Ed25519 key for independent verification;
// GET .../bundle serves a certificate's replication bundle (pipeline/certify/bundle.ts) as stored.
import zlib from 'node:zlib';
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { notFound, validationError } from '../errors.js';
import { certificateId, date, dayStart, numeric, parseTimestamp, timestamp } from '../../lib/format.js';
import { knownPair, type Operation } from '../operation.js';
import { acceptsGzip } from '../middleware/compress.js';
import { bundleOf, certificateAt, certificateList, signingKeys } from '../queries/certificates.js';
import { BUNDLE_RESPONSE, CERTIFICATE_KEYS_RESPONSE, CERTIFICATE_LIST_RESPONSE, CERTIFICATE_RESPONSE, type CertificateKeysResponse, type CertificateListResponse, type CertificateResponse } from '../schemas.js';
import { DATE, NO_QUERY, PAIR, parseParams, parseQuery } from '../validate.js';

const DAY_MS = 86_400_000;
const BUCKET_MS = 300_000;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start: { ...DATE, description: 'first UTC day; default 7 days before end' },
    end: { ...DATE, description: 'last UTC day, inclusive; default today, or start if that is later' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    cursor: { type: 'string', maxLength: 40, description: 'from the Link rel="next" header of the previous page: the timestamp of its oldest certificate; this page is strictly older' },
  },
} as const;
const pairParams = { type: 'object', required: ['pair'], additionalProperties: false, properties: { pair: PAIR } } as const;
const certParams = {
  type: 'object',
  required: ['pair', 'timestamp'],
  additionalProperties: false,
  properties: { pair: PAIR, timestamp: { type: 'string', maxLength: 40, description: 'a timestamp from the list, e.g. 2026-11-20T10:05:00+00:00' } },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/certificates/keys', summary: 'Ed25519 public keys for verifying certificates: the one in use first, then every earlier one (no key needed)', tier: null, access: 'public', query: NO_QUERY, response: CERTIFICATE_KEYS_RESPONSE },
  { method: 'get', path: '/v1/certificates/:pair', feature: 'Certificates', summary: 'Certificates available for a pair, newest first; when the range holds more than `limit`, a Link rel="next" header gives the next page', tier: 'enterprise', params: pairParams, query: listQuery, response: CERTIFICATE_LIST_RESPONSE },
  { method: 'get', path: '/v1/certificates/:pair/:timestamp', feature: 'Certificates', summary: 'One signed rate certificate', tier: 'enterprise', params: certParams, query: NO_QUERY, response: CERTIFICATE_RESPONSE, errors: ['not_found'] },
  {
    method: 'get',
    path: '/v1/certificates/:pair/:timestamp/bundle', feature: 'Replication bundles',
    summary:
      "A certificate's replication bundle: every trade that entered the rate as stored, the venues left out and why, the synthetic price's inputs, the parameters, methodology and software version. " +
      'Canonical JSON, the same bytes forever; its SHA-256 (ETag, and bundle.sha256 in the certificate, which audit.certificate_signature covers) is of the JSON before compression. Sent gzip-encoded to clients that accept it. verify/afrates-verify.mjs recomputes the rate from it.',
    tier: 'enterprise',
    params: certParams,
    query: NO_QUERY,
    response: BUNDLE_RESPONSE,
    errors: ['not_found'],
  },
];

/** The bucket a certificate path names, or 400/404 in the contract's shape. */
function certificateBucket(deps: AppDeps, ctx: AppContext) {
  const params = parseParams(certParams, ctx.params);
  parseQuery(NO_QUERY, ctx);
  const pair = knownPair(deps, params.pair!, 'pair');
  const at = parseTimestamp(params.timestamp!);
  if (!at) throw validationError("path parameter 'timestamp' must be ISO 8601 with a +00:00 offset, e.g. 2026-11-20T10:05:00+00:00");
  if (at.getTime() % BUCKET_MS !== 0) throw notFound(`Certificates exist for 5-minute bucket starts only; ${params.timestamp} is not one.`);
  return { pair, at };
}

const noCertificate = (deps: AppDeps, pair: string, at: Date) =>
  notFound(
    `No certificate for ${pair} at ${timestamp(at)}: certificates are issued for 5-minute buckets with exchange trades once they settle ` +
      `(every venue has collected past the bucket's end, or ${Math.round(deps.config.settleAfterSeconds / 60)} minutes after it); GET /v1/certificates/${pair} lists them.`,
  );

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/certificates/keys', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    // the key in use first, then every earlier one: a certificate stays verifiable after a rotation
    const earlier = (await deps.read.run((sql) => signingKeys(sql))).filter((k) => k.key_id !== deps.signer.keyId);
    ctx.body = {
      keys: [{ key_id: deps.signer.keyId, public_key_pem: deps.signer.publicKeyPem }, ...earlier].map((k) => ({ key_id: k.key_id, algorithm: 'Ed25519' as const, public_key_pem: k.public_key_pem })),
    } satisfies CertificateKeysResponse;
  });

  router.get('/v1/certificates/:pair', async (ctx: AppContext) => {
    const pair = knownPair(deps, parseParams(pairParams, ctx.params).pair!, 'pair');
    const q = parseQuery(listQuery, ctx);
    // a bound not given follows the one given: ?end=<a month ago> alone is the week up to it
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const lastDay = q.end ? dayStart(q.end).getTime() : Math.max(today, q.start ? dayStart(q.start).getTime() : today);
    const from = q.start ? dayStart(q.start) : new Date(lastDay - 7 * DAY_MS);
    const to = new Date(lastDay + DAY_MS);
    if (to <= from) throw validationError("'end' must not be before 'start'");
    // A week holds 2,016 certificates a pair, over the largest limit: when more are left, the
    // Link header gives the next page (keyset on the bucket, strictly older), the body keeps the
    // contract's shape.
    let before = to;
    if (q.cursor !== undefined) {
      const at = parseTimestamp(q.cursor);
      if (!at) throw validationError("'cursor' must be the timestamp of a certificate of the previous page");
      if (at <= from || at >= to) throw validationError("'cursor' lies outside [start, end]");
      before = at;
    }
    const found = await deps.read.run((sql) => certificateList(sql, pair.pair, from, before, q.limit + 1));
    const rows = found.slice(0, q.limit);
    if (found.length > q.limit) {
      const next = new URLSearchParams({ start: date(from), end: date(new Date(lastDay)), limit: String(q.limit), cursor: timestamp(rows.at(-1)!.bucket) });
      ctx.set('Link', `</v1/certificates/${pair.pair}?${next}>; rel="next"`);
    }
    ctx.body = {
      pair: pair.pair,
      count: rows.length,
      certificates: rows.map((r) => ({
        timestamp: timestamp(r.bucket),
        rate: numeric(r.rate),
        certificate_url: `/v1/certificates/${pair.pair}/${encodeURIComponent(timestamp(r.bucket))}`,
        restated: r.restated_at !== null,
        ...(r.restated_at ? { restatements_url: `/v1/restatements?pair=${pair.pair}&since=${encodeURIComponent(timestamp(r.restated_at))}` } : {}),
      })),
    } satisfies CertificateListResponse;
  });

  router.get('/v1/certificates/:pair/:timestamp', async (ctx: AppContext) => {
    const { pair, at } = certificateBucket(deps, ctx);
    const body = await deps.read.run((sql) => certificateAt(sql, pair.pair, at));
    if (!body) throw noCertificate(deps, pair.pair, at);
    const { validity, ...issued } = JSON.parse(body) as Omit<CertificateResponse, 'customer'>;
    const customer = ctx.state.customer!;
    ctx.body = {
      ...issued,
      customer: { tier: customer.tier, customer_name: customer.name },
      validity,
    } satisfies CertificateResponse;
  });

  router.get('/v1/certificates/:pair/:timestamp/bundle', async (ctx: AppContext) => {
    const { pair, at } = certificateBucket(deps, ctx);
    const { bundle, certified } = await deps.read.run(async (sql) => {
      const found = await bundleOf(sql, certificateId(pair.pair, at));
      return { bundle: found, certified: found ? true : Boolean(await certificateAt(sql, pair.pair, at)) };
    });
    if (!bundle) {
      if (certified) throw notFound(`The certificate for ${pair.pair} at ${timestamp(at)} was issued before replication bundles existed (methodology 1.0.0); it has none.`);
      throw noCertificate(deps, pair.pair, at);
    }
    sendBundle(ctx, bundle);
  });
}

/**
 * A replication bundle as stored: gzipped JSON, sent as it is to a client that takes gzip, else
 * unzipped; immutable (its ETag is its SHA-256), so a client keeps it for good.
 */
export function sendBundle(ctx: AppContext, bundle: { readonly sha256: string; readonly gzip: Buffer }): void {
  ctx.type = 'application/json';
  ctx.set('ETag', `"${bundle.sha256}"`);
  ctx.set('Cache-Control', 'private, max-age=31536000, immutable');
  ctx.set('Vary', 'Accept-Encoding');
  if (acceptsGzip(ctx.get('Accept-Encoding'))) {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = bundle.gzip;
  } else {
    ctx.body = zlib.gunzipSync(bundle.gzip);
  }
}
