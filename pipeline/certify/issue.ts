// Certificates for newly settled buckets (pipeline/settle.ts hands over the ranges): one per
// settled 5-minute bucket of a public pair with exchange trades, computed from the trades as they
// stand at settlement by the methodology's rules (lib/methodology/window.ts), with its replication
// bundle frozen beside it, both stored once in one transaction (append-only tables). The API only
// reads them back, so a certificate and its bundle are the same bytes forever.
import type { Sql } from '../../lib/db/connect.js';
import { certificateId, timestamp } from '../../lib/format.js';
import { METHODOLOGY_VERSION, param } from '../../lib/methodology/parameters.js';
import { computeWindow, type WindowInputs, type WindowResult } from '../../lib/methodology/window.js';
import { canonicalJson, registerSigningKey, signedRatePayload, type CertificateSigner } from '../../lib/signer.js';
import type { Software } from '../../lib/software.js';
import type { SettledRange } from '../settle.js';
import { buildBundle, storeBundle, type Bundle } from './bundle.js';
import { readWindowInputs } from './inputs.js';

const BUCKET_MS = param('bucket_seconds') * 1000;

export interface CertifierOptions {
  readonly signer: CertificateSigner;
  /** issuer.url (PUBLIC_URL). */
  readonly issuerUrl: string;
  /** Simulated data says so inside the signed payload and the bundle. */
  readonly market: 'real' | 'simulated';
  readonly software: Software;
  /** Every methodology parameter in force (parametersInForce). */
  readonly parameters: Record<string, number | string>;
  readonly now?: () => Date;
}

export const bundlePath = (pair: string, bucket: Date) => `/v1/certificates/${pair}/${encodeURIComponent(timestamp(bucket))}/bundle`;

/** Issues certificates; built once in the composition root (its signing key is recorded before its first signature). */
export class Certifier {
  private keyRecorded = false;

  constructor(
    private readonly sql: Sql,
    private readonly o: CertifierOptions,
  ) {}

  /** Certifies every bucket with trades in each range that has no certificate yet; returns how many. */
  async issue(ranges: readonly SettledRange[]): Promise<number> {
    if (!this.keyRecorded) {
      await registerSigningKey(this.sql, this.o.signer); // before the first signature: listed for good
      this.keyRecorded = true;
    }
    let issued = 0;
    for (const range of ranges) {
      const [pair] = await this.sql<{ pair: string; base: string; quote: string }[]>`
        SELECT pair, base, quote FROM pairs WHERE pair = ${range.pair} AND visibility = 'public'`;
      if (!pair) continue;
      const buckets = await this.sql<{ bucket: Date }[]>`
        SELECT DISTINCT e.bucket FROM candles_5m_by_exchange e
        WHERE e.pair = ${range.pair} AND e.bucket >= ${range.from ?? new Date(0)}
          AND e.bucket <= ${new Date(range.to.getTime() - BUCKET_MS)}
          AND NOT EXISTS (SELECT 1 FROM certificates c WHERE c.pair = e.pair AND c.bucket = e.bucket)
        ORDER BY e.bucket`;
      for (const { bucket } of buckets) {
        if (await this.certifyBucket(pair, bucket)) issued++;
      }
    }
    return issued;
  }

  private async certifyBucket(pair: { pair: string; base: string; quote: string }, bucket: Date): Promise<boolean> {
    const inputs = await readWindowInputs(this.sql, pair, bucket, new Date(bucket.getTime() + BUCKET_MS));
    if (inputs.trades.length === 0) return false;
    const result = computeWindow(inputs);
    const id = certificateId(pair.pair, bucket);
    const issuedAt = timestamp(this.o.now?.() ?? new Date());
    const bundle = buildBundle(inputs, result, { id, kind: 'certificate', market: this.o.market, parameters: this.o.parameters, software: this.o.software, issuedAt });
    const cert = certificate(inputs, result, bundle, id, issuedAt, this.o);
    return this.sql.begin(async (tx) => {
      const stored = await tx`
        INSERT INTO certificates (pair, bucket, rate, body) VALUES (${pair.pair}, ${bucket}, ${result.rate!}, ${JSON.stringify(cert)})
        ON CONFLICT (pair, bucket) DO NOTHING RETURNING 1`;
      if (stored.length === 0) return false;
      await storeBundle(tx, id, bundle);
      return true;
    });
  }
}

/**
 * The certificate as stored (the requesting customer's section is added when it is served). The
 * contract's fields as before; methodology_version, inputs and bundle are added, and
 * audit.certificate_signature is an Ed25519 signature over the canonical JSON of all of it
 * without that field, so the bundle's hash cannot be swapped unnoticed.
 */
function certificate(inputs: WindowInputs, result: WindowResult, bundle: Bundle, id: string, issuedAt: string, o: CertifierOptions) {
  const time = timestamp(inputs.start);
  const sources = result.sources.map((s) => s.exchange);
  const signedPayload = signedRatePayload(inputs.pair, result.rate!, sources, time, o.market);
  const body = {
    certificate_id: id,
    schema_version: '1.1',
    methodology_version: METHODOLOGY_VERSION,
    issuer: { name: 'afrates', url: o.issuerUrl },
    issued_at: issuedAt,
    data: {
      pair: inputs.pair,
      base: inputs.base,
      quote: inputs.quote,
      timestamp: time,
      rate: Number(result.rate),
      currency: inputs.quote,
      calculation: 'vwap' as const,
      sources,
      vwap_sources_count: sources.length,
    },
    verification: {
      status: result.status,
      confidence: result.confidence!,
      divergence_pct: result.divergencePct,
      synthetic_price: result.syntheticPrice === null ? null : Number(result.syntheticPrice),
      data_quality: result.dataQuality,
    },
    inputs: { venues: result.sources, excluded: result.excluded },
    bundle: { sha256: bundle.sha256, bytes: bundle.bytes, url: bundlePath(inputs.pair, inputs.start) },
    audit: {
      collection_id: `COL-${bundle.sha256.slice(0, 20)}`,
      algorithm: 'HMAC-SHA256' as const,
      signature: o.signer.hmac(signedPayload),
      signed_payload: signedPayload,
      ed25519_signature: o.signer.ed25519(signedPayload),
      ed25519_key_id: o.signer.keyId,
    },
    validity: { not_before: time, not_after: null },
  };
  return { ...body, audit: { ...body.audit, certificate_signature: o.signer.ed25519(canonicalJson(body)) } };
}
