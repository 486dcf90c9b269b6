// A replication bundle: everything one certified rate was computed from, as canonical JSON
// (docs/methodology.md, "Replication bundles"). Its SHA-256 is written into the certificate and
// signed; verify/ recomputes the rate from it. Stored gzip-compressed, in parts of a statement's
// size (lib/db/batches.ts), and never changed.
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { batchesUnder, MAX_STATEMENT_BYTES, piecesUnder } from '../../lib/db/batches.js';
import type { Tx } from '../../lib/db/connect.js';
import { timestamp } from '../../lib/format.js';
import { METHODOLOGY_VERSION } from '../../lib/methodology/parameters.js';
import type { WindowInputs, WindowResult } from '../../lib/methodology/window.js';
import { canonicalJson } from '../../lib/signer.js';
import type { Software } from '../../lib/software.js';

export const BUNDLE_VERSION = 1;

export interface BundleContext {
  readonly id: string;
  readonly kind: 'certificate' | 'fixing';
  readonly market: 'real' | 'simulated';
  readonly parameters: Record<string, number | string>;
  readonly software: Software;
  readonly issuedAt: string;
}

export interface Bundle {
  /** the canonical JSON */
  readonly text: string;
  readonly sha256: string;
  readonly bytes: number;
}

export function buildBundle(inputs: WindowInputs, result: WindowResult, c: BundleContext): Bundle {
  const text = canonicalJson({
    bundle_version: BUNDLE_VERSION,
    kind: c.kind,
    id: c.id,
    pair: inputs.pair,
    base: inputs.base,
    quote: inputs.quote,
    market: c.market,
    window: { start: timestamp(inputs.start), end: timestamp(inputs.end) },
    methodology: { version: METHODOLOGY_VERSION, parameters: c.parameters },
    software: c.software,
    issued_at: c.issuedAt,
    venues: inputs.venues,
    trades: inputs.trades,
    synthetic: { usdt_leg: inputs.usdtLeg, fx: inputs.fx },
    result: {
      rate: result.rate,
      sources: result.sources,
      excluded: result.excluded,
      synthetic_price: result.syntheticPrice,
      divergence_pct: result.divergencePct,
      status: result.status,
      confidence: result.confidence,
      data_quality: result.dataQuality,
    },
  });
  return { text, sha256: crypto.createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text) };
}

/** Room a part's row keeps beside its piece of the bundle for the row's other parameters (its id and number). */
const PART_ROW_ROOM = 128;

/** Stores bundles once (inside the caller's transaction, beside their certificates), a few statements for many. */
export async function storeBundles(tx: Tx, bundles: ReadonlyArray<{ id: string; bundle: Bundle }>): Promise<void> {
  const stored = bundles.map(({ id, bundle }) => ({ id, bundle, parts: piecesUnder(zlib.gzipSync(bundle.text, { level: 9 }), MAX_STATEMENT_BYTES - PART_ROW_ROOM) }));
  const rows = stored.map(({ id, bundle, parts }) => ({ id, sha256: bundle.sha256, bytes: bundle.bytes, parts: parts.length }));
  for (const batch of batchesUnder(rows, (r) => Object.values(r))) await tx`INSERT INTO bundles ${tx(batch)}`;
  const partRows = stored.flatMap(({ id, parts }) => parts.map((gzip, part) => ({ id, part, gzip })));
  for (const batch of batchesUnder(partRows, (r) => Object.values(r))) await tx`INSERT INTO bundle_parts ${tx(batch)}`;
}
