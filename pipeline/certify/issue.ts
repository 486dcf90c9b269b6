// Certified rates, issued by the pipeline: a certificate per settled 5-minute bucket of a public pair
// with exchange trades (pipeline/settle.ts hands over the newly settled ranges), and the daily
// fixings (pipeline/fixings.ts says which are due). Each is computed from its window's trades as
// they stand by the methodology's rules (lib/methodology/window.ts), with its replication bundle
// frozen beside it, stored once with it in the same transaction (append-only tables; a backlog's
// buckets share one a batch at a time). The API only reads them back, so a certificate, a fixing
// and a bundle are the same bytes forever.
import { createHash } from 'node:crypto';
import type { Sql, Tx } from '../../lib/db/connect.js';
import { batchesUnder } from '../../lib/db/batches.js';
import { certificateId, timestamp } from '../../lib/format.js';
import { fixingId, type FixingSlot } from '../../lib/methodology/fixings.js';
import { METHODOLOGY_VERSION, param } from '../../lib/methodology/parameters.js';
import { computeWindow, type WindowInputs, type WindowResult } from '../../lib/methodology/window.js';
import { canonicalJson, registerSigningKey, signedRatePayload, type CertificateSigner } from '../../lib/signer.js';
import type { Logger } from '../../lib/log.js';
import type { Software } from '../../lib/software.js';
import { StoppedPartWay, type SettledRange } from '../settle.js';
import { buildBundle, storeBundles, type Bundle } from './bundle.js';
import { readWindowInputs, readWindowsInputs } from './inputs.js';

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
  /** Where a backlog's progress is told (a new database's history: thousands of buckets). */
  readonly log?: Logger;
}

/** A backlog at least this large is announced, with a progress line every as many certificates. */
const BACKLOG_TOLD = 500;
/**
 * Traded buckets certified in one transaction: at most CERTIFY_BATCH (two hours of a pair that
 * trades in every bucket) holding at most CERTIFY_BATCH_TRADES trades, or one bucket however many
 * it holds. Their reads and writes take a few statements instead of about fourteen a bucket, and
 * a batch stays short (a bucket of 5,800 trades certifies in ~200 ms: bench/README.md, bundles),
 * so the embedded database's one connection goes back to API reads between batches.
 */
const CERTIFY_BATCH = 24;
export const CERTIFY_BATCH_TRADES = 2_000;

/** Consecutive buckets cut into batches under both bounds. */
function batchesOf(buckets: ReadonlyArray<{ bucket: Date; trades: number }>): Date[][] {
  const out: Date[][] = [];
  let batch: Date[] = [];
  let trades = 0;
  for (const b of buckets) {
    if (batch.length > 0 && (batch.length === CERTIFY_BATCH || trades + b.trades > CERTIFY_BATCH_TRADES)) {
      out.push(batch);
      batch = [];
      trades = 0;
    }
    batch.push(b.bucket);
    trades += b.trades;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

interface PairRef {
  readonly pair: string;
  readonly base: string;
  readonly quote: string;
}

/** What a certified window becomes besides its stored row: told to whoever records it further (the transparency log). */
export interface Issued {
  readonly id: string;
  readonly kind: 'certificate' | 'fixing';
  readonly pair: string;
  readonly time: string;
  /** a fixing's day in its zone (YYYY-MM-DD); a certificate's UTC day */
  readonly date: string;
  readonly rate: string | null;
  /** SHA-256 (hex) of the canonical JSON of the certificate as stored */
  readonly certificateSha256: string;
  readonly bundleSha256: string;
}

/** Recorded in the transaction that stores a certified window (the transparency log's append). */
export type OnIssued = (tx: Tx, issued: readonly Issued[]) => Promise<void>;

export const bundlePath = (pair: string, bucket: Date) => `/v1/certificates/${pair}/${encodeURIComponent(timestamp(bucket))}/bundle`;
export const fixingBundlePath = (pair: string, slot: FixingSlot) => `/v1/fixings/${pair}/${slot.date}/${slot.kind}/bundle`;

/** Issues certificates and fixings; built once per process by pipeline/process.ts (its signing key is recorded before its first signature). */
export class Certifier {
  private keyRecorded = false;

  constructor(
    private readonly sql: Sql,
    private readonly o: CertifierOptions,
    private readonly onIssued?: OnIssued,
  ) {}

  private async recordKey(): Promise<void> {
    if (this.keyRecorded) return;
    await registerSigningKey(this.sql, this.o.signer); // before the first signature: listed for good
    this.keyRecorded = true;
  }

  /**
   * Certifies every bucket with trades in each range that has no certificate yet; returns how many.
   * A pair's buckets are certified CERTIFY_BATCH at a time, each batch read together and stored in
   * one small transaction, and `stopped` is asked between them: a process told to stop in the
   * middle of a backlog ends within one batch's work (StoppedPartWay), what is stored stays, and
   * the next run certifies the rest (buckets with a certificate are never certified again).
   */
  async issue(ranges: readonly SettledRange[], stopped: () => boolean = () => false): Promise<number> {
    await this.recordKey();
    const batches: Array<{ pair: PairRef; buckets: Date[] }> = [];
    let due = 0;
    for (const range of ranges) {
      if (stopped()) throw new StoppedPartWay('certificates');
      const [pair] = await this.sql<PairRef[]>`SELECT pair, base, quote FROM public_pairs WHERE pair = ${range.pair}`;
      if (!pair) continue;
      const buckets = await this.sql<{ bucket: Date; trades: number }[]>`
        SELECT e.bucket, sum(e.trades)::int AS trades FROM candles_5m_by_exchange e
        WHERE e.pair = ${range.pair} AND e.bucket >= ${range.from ?? new Date(0)}
          AND e.bucket <= ${new Date(range.to.getTime() - BUCKET_MS)}
          AND NOT EXISTS (SELECT 1 FROM certificates c WHERE c.pair = e.pair AND c.bucket = e.bucket)
        GROUP BY e.bucket ORDER BY e.bucket`;
      for (const batch of batchesOf(buckets)) batches.push({ pair, buckets: batch });
      due += buckets.length;
    }
    const told = due >= BACKLOG_TOLD;
    if (told) this.o.log?.info({ buckets: due }, 'certifying a backlog of settled buckets');
    let issued = 0;
    let done = 0;
    for (const { pair, buckets } of batches) {
      if (stopped()) {
        this.o.log?.info({ issued, left: due - done }, 'stopping: certificates left for the next run');
        throw new StoppedPartWay('certificates');
      }
      issued += await this.certifyBuckets(pair, buckets);
      if (told && Math.floor((done + buckets.length) / BACKLOG_TOLD) > Math.floor(done / BACKLOG_TOLD)) this.o.log?.info({ done: done + buckets.length, of: due }, 'certifying a backlog of settled buckets');
      done += buckets.length;
    }
    return issued;
  }

  /** Certifies a pair's buckets (those with trades) in one transaction; returns how many were stored. */
  private async certifyBuckets(pair: PairRef, buckets: readonly Date[]): Promise<number> {
    const windows = await readWindowsInputs(this.sql, pair, buckets.map((start) => ({ start, end: new Date(start.getTime() + BUCKET_MS) })));
    const made = windows
      .filter((inputs) => inputs.trades.length > 0)
      .map((inputs) => {
        const result = computeWindow(inputs);
        const id = certificateId(pair.pair, inputs.start);
        return { bucket: inputs.start, result, id, ...this.certified(inputs, result, { id, kind: 'certificate', bundleUrl: bundlePath(pair.pair, inputs.start) }) };
      });
    if (made.length === 0) return 0;
    return this.sql.begin(async (tx) => {
      const rows = made.map((c) => ({ pair: pair.pair, bucket: c.bucket, rate: c.result.rate!, body: JSON.stringify(c.body) }));
      const stored = new Set<number>();
      for (const batch of batchesUnder(rows, (r) => Object.values(r))) {
        for (const r of await tx<{ bucket: Date }[]>`INSERT INTO certificates ${tx(batch)} ON CONFLICT (pair, bucket) DO NOTHING RETURNING bucket`) stored.add(r.bucket.getTime());
      }
      const kept = made.filter((c) => stored.has(c.bucket.getTime()));
      if (kept.length === 0) return 0;
      await storeBundles(tx, kept);
      await this.onIssued?.(tx, kept.map((c) => issuedOf(c.id, 'certificate', c.body, c.result, c.bundle, c.bucket.toISOString().slice(0, 10))));
      return kept.length;
    });
  }

  /** Publishes a fixing once (a window without trades too: then it carries no rate); false when it exists. */
  async fix(pair: PairRef, slot: FixingSlot): Promise<boolean> {
    await this.recordKey();
    const inputs = await readWindowInputs(this.sql, pair, slot.windowStart, slot.time);
    const result = computeWindow(inputs);
    const id = fixingId(pair.pair, slot);
    const fixing = { kind: slot.kind, date: slot.date, zone: slot.zone, time: timestamp(slot.time), local_time: slot.localTime, window_start: timestamp(slot.windowStart), window_end: timestamp(slot.time) };
    const { body, bundle } = this.certified(inputs, result, { id, kind: 'fixing', bundleUrl: fixingBundlePath(pair.pair, slot), fixing });
    return this.sql.begin(async (tx) => {
      const stored = await tx`
        INSERT INTO fixings (id, pair, kind, date, time, rate, body) VALUES (${id}, ${pair.pair}, ${slot.kind}, ${slot.date}, ${slot.time}, ${result.rate}, ${JSON.stringify(body)})
        ON CONFLICT DO NOTHING RETURNING 1`;
      if (stored.length === 0) return false;
      await storeBundles(tx, [{ id, bundle }]);
      await this.onIssued?.(tx, [issuedOf(id, 'fixing', body, result, bundle, slot.date)]);
      return true;
    });
  }

  /**
   * A certified window's signed record and bundle. The contract's certificate fields as ever;
   * methodology_version, inputs and bundle are added, and audit.certificate_signature is an
   * Ed25519 signature over the canonical JSON of all of it without that field, so the bundle's
   * hash cannot be swapped unnoticed. A fixing adds `fixing` (its time and zone), and its signed
   * payload names it.
   */
  private certified(inputs: WindowInputs, result: WindowResult, c: { id: string; kind: 'certificate' | 'fixing'; bundleUrl: string; fixing?: Record<string, string> }) {
    const issuedAt = timestamp(this.o.now?.() ?? new Date());
    const bundle = buildBundle(inputs, result, { id: c.id, kind: c.kind, market: this.o.market, parameters: this.o.parameters, software: this.o.software, issuedAt });
    const time = timestamp(c.kind === 'fixing' ? inputs.end : inputs.start);
    const sources = result.sources.map((s) => s.exchange);
    const signedPayload = signedRatePayload(inputs.pair, result.rate, sources, time, this.o.market, c.fixing?.kind);
    const body = {
      [c.kind === 'fixing' ? 'fixing_id' : 'certificate_id']: c.id,
      schema_version: '1.1',
      methodology_version: METHODOLOGY_VERSION,
      issuer: { name: 'afrates', url: this.o.issuerUrl },
      issued_at: issuedAt,
      ...(c.fixing ? { fixing: c.fixing } : {}),
      data: {
        pair: inputs.pair,
        base: inputs.base,
        quote: inputs.quote,
        timestamp: time,
        rate: result.rate === null ? null : Number(result.rate),
        currency: inputs.quote,
        calculation: 'vwap' as const,
        sources,
        vwap_sources_count: sources.length,
      },
      verification: {
        status: result.status,
        confidence: result.confidence,
        divergence_pct: result.divergencePct,
        synthetic_price: result.syntheticPrice === null ? null : Number(result.syntheticPrice),
        data_quality: result.dataQuality,
      },
      inputs: { venues: result.sources, excluded: result.excluded },
      bundle: { sha256: bundle.sha256, bytes: bundle.bytes, url: c.bundleUrl },
      ...(result.rate === null ? { notes: 'No trade in the window: no rate (minimum-data rule).' } : {}),
      audit: {
        collection_id: `COL-${bundle.sha256.slice(0, 20)}`,
        algorithm: 'HMAC-SHA256' as const,
        signature: this.o.signer.hmac(signedPayload),
        signed_payload: signedPayload,
        ed25519_signature: this.o.signer.ed25519(signedPayload),
        ed25519_key_id: this.o.signer.keyId,
      },
      ...(c.kind === 'certificate' ? { validity: { not_before: time, not_after: null } } : {}),
    };
    return { body: { ...body, audit: { ...body.audit, certificate_signature: this.o.signer.ed25519(canonicalJson(body)) } }, bundle };
  }
}

function issuedOf(id: string, kind: Issued['kind'], body: { data: { pair: string; timestamp: string } }, result: WindowResult, bundle: Bundle, date: string): Issued {
  return { id, kind, pair: body.data.pair, time: body.data.timestamp, date, rate: result.rate, certificateSha256: sha256(canonicalJson(body)), bundleSha256: bundle.sha256 };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
