// What the pipeline writes into the transparency log (lib/transparency/): an entry for every
// certificate, fixing and restatement, appended in the transaction that stores it, so none exists
// without its entry; and a signed tree head after every publish that logged one (docs/methodology.md,
// section 16).
import type { Sql, Tx } from '../lib/db/connect.js';
import { restatementId, timestamp } from '../lib/format.js';
import type { CertificateSigner } from '../lib/signer.js';
import { appendEntries, publishHead, type NewEntry } from '../lib/transparency/log.js';
import type { Issued } from './certify/issue.js';
import type { Restatement } from './restate.js';

/** A certificate's or fixing's entry: what it certifies, and the hashes that commit to the rest. */
export const issuedEntry = (i: Omit<Issued, 'date'>): NewEntry => ({
  id: i.id,
  kind: i.kind,
  entry: { id: i.id, kind: i.kind, pair: i.pair, time: i.time, rate: i.rate, certificate_sha256: i.certificateSha256, bundle_sha256: i.bundleSha256 },
});

export async function logIssued(tx: Tx, issued: readonly Issued[]): Promise<void> {
  await appendEntries(
    tx,
    issued.map(issuedEntry),
  );
}

/** A restatement's entry: the value restated, before and after, and why. */
export async function logRestatement(tx: Tx, r: Restatement): Promise<void> {
  const id = restatementId(r.id);
  await appendEntries(tx, [
    {
      id,
      kind: 'restatement',
      entry: { id, kind: 'restatement', pair: r.pair, subject: r.subject, time: timestamp(r.time), ref: r.ref, original: r.original, previous: r.previous, restated: r.restated, change_pct: r.changePct, late_trades: r.lateTrades },
    },
  ]);
}

/**
 * Signs the tree as it stands with the certificate key, when it has grown since the last head or
 * a new UTC day has begun: a cycle that logged nothing adds no head to the day's list. `fence`:
 * the publisher's lease, checked in the transaction that stores the head.
 */
export async function signHead(sql: Sql, signer: CertificateSigner, now: Date, fence?: (tx: Tx) => Promise<void>) {
  return publishHead(sql, (payload) => ({ signature: signer.ed25519(payload), keyId: signer.keyId }), now, { fence, unlessSigned: true });
}
