// Issues certificates for newly settled buckets (pipeline/settle.ts hands over the ranges; the
// composition root wires the two): one per settled 5-minute bucket of a public pair that has
// exchange trades, built from the data as it stands at settlement, signed, and stored once
// (certificates table, append-only). The API only ever reads them back, so a certificate is the
// same bytes forever, whatever trades arrive later. What gets certified is the 5-minute VWAP across
// venues with the live rate's outlier rule applied (certifiedRate).
import crypto from 'node:crypto';
import type { Sql } from '../../lib/db/connect.js';
import { num, numeric, timestamp } from '../format.js';
import { registerSigningKey } from '../queries/certificates.js';
import type { CertificateResponse } from '../schemas.js';
import * as v from '../verification.js';
import { byBucket, certifiedRate, type VenueBucketRow } from './rate.js';
import { signedRatePayload, type CertificateSigner } from './signer.js';

const BUCKET_MS = 300_000;

export interface SettledRange {
  readonly pair: string;
  readonly from: Date | null;
  readonly to: Date;
}

export interface IssueOptions {
  readonly signer: CertificateSigner;
  /** issuer.url (PUBLIC_URL). */
  readonly issuerUrl: string;
  /** Simulated data says so inside the signed payload. */
  readonly market: 'real' | 'simulated';
  readonly now?: () => Date;
}

/** What a stored certificate holds: the contract's certificate without the requester's section. */
export type StoredCertificate = Omit<CertificateResponse, 'customer'>;

const compact = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');

/** Signers whose key this process has recorded in certificate_keys. */
const registered = new WeakSet<CertificateSigner>();

/** Certifies every bucket with trades in each range that has no certificate yet; returns how many. */
export async function issueCertificates(sql: Sql, ranges: readonly SettledRange[], o: IssueOptions): Promise<number> {
  if (!registered.has(o.signer)) {
    await registerSigningKey(sql, o.signer); // before the first signature: the key is listed for good
    registered.add(o.signer);
  }
  let issued = 0;
  for (const range of ranges) {
    const [pair] = await sql<{ base: string; quote: string }[]>`SELECT base, quote FROM pairs WHERE pair = ${range.pair} AND visibility = 'public'`;
    if (!pair) continue;
    const rows = await sql<VenueBucketRow[]>`
      SELECT e.bucket, e.exchange, e.pv, e.volume, e.trades
      FROM candles_5m_by_exchange e
      WHERE e.pair = ${range.pair} AND e.bucket >= ${range.from ?? new Date(0)}
        AND e.bucket <= ${new Date(range.to.getTime() - BUCKET_MS)}
        AND NOT EXISTS (SELECT 1 FROM certificates c WHERE c.pair = e.pair AND c.bucket = e.bucket)
      ORDER BY e.bucket, e.exchange`;
    if (rows.length === 0) continue;
    const buckets = byBucket(rows);
    const first = rows[0]!.bucket;
    const last = rows[rows.length - 1]!.bucket;
    const synthetic = new Map(
      (
        await sql<{ bucket: Date; synthetic_price: string | null }[]>`
          SELECT bucket, synthetic_price FROM candles_with_synthetic('5m', ${range.pair}, ${first}, ${new Date(last.getTime() + BUCKET_MS)})`
      ).map((r) => [r.bucket.getTime(), r.synthetic_price === null ? null : Number(r.synthetic_price)]),
    );
    for (const [bucket, venues] of buckets) {
      const cert = certificate({ pair: range.pair, ...pair }, new Date(bucket), venues, synthetic.get(bucket) ?? null, o);
      const stored = await sql`
        INSERT INTO certificates (pair, bucket, rate, body) VALUES (${range.pair}, ${new Date(bucket)}, ${String(cert.data.rate)}, ${JSON.stringify(cert)})
        ON CONFLICT (pair, bucket) DO NOTHING RETURNING 1`;
      issued += stored.length;
    }
  }
  return issued;
}

function certificate(
  pair: { pair: string; base: string; quote: string },
  bucket: Date,
  venues: readonly VenueBucketRow[],
  synthetic: number | null,
  o: IssueOptions,
): StoredCertificate {
  const certified = certifiedRate(venues);
  const div = v.divergence(certified.rate, synthetic);
  const signedPayload = signedRatePayload(pair.pair, String(num(certified.rate)), certified.sources, timestamp(bucket), o.market);
  return {
    certificate_id: `CERT-${pair.pair}-${compact(bucket)}`,
    schema_version: '1.0',
    issuer: { name: 'afrates', url: o.issuerUrl },
    issued_at: timestamp(o.now?.() ?? new Date()),
    data: {
      pair: pair.pair,
      base: pair.base,
      quote: pair.quote,
      timestamp: timestamp(bucket),
      rate: numeric(certified.rate),
      currency: pair.quote,
      calculation: 'vwap',
      sources: certified.sources,
      vwap_sources_count: certified.sources.length,
    },
    verification: {
      status: v.verificationStatus(div, pair.quote),
      confidence: v.confidence({ sources: certified.prices.length, dispersion: v.dispersion(certified.prices), divergence: div, quote: pair.quote, ageSeconds: 0 }),
      divergence_pct: div === null ? null : v.percent(div),
      synthetic_price: num(synthetic),
      data_quality: certified.prices.length >= 2 ? 'high' : 'medium',
    },
    audit: {
      collection_id: `COL-${crypto.createHash('sha256').update(`${pair.pair}|${bucket.toISOString()}|${certified.trades}|${certified.volume}`).digest('hex').slice(0, 20)}`,
      algorithm: 'HMAC-SHA256',
      signature: o.signer.hmac(signedPayload),
      signed_payload: signedPayload,
      ed25519_signature: o.signer.ed25519(signedPayload),
      ed25519_key_id: o.signer.keyId,
    },
    validity: { not_before: timestamp(bucket), not_after: null },
  };
}
