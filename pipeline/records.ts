// Publishing's records, one definition for the service's pipeline (pipeline/process.ts) and the
// tests' (test/support/pipeline.ts), so the two cannot drift apart.
import type { Sql, Tx } from '../lib/db/connect.js';
import type { CertificateSigner } from '../lib/signer.js';
import type { OnIssued } from './certify/issue.js';
import type { OnRestated } from './restate.js';
import { logIssued, logRestatement, signHead } from './transparency.js';
import { announceIssued, announceRestatement } from './webhooks/announce.js';

/**
 * What publishing records beside each change, in the transaction that stores it: the publisher's
 * fence (without one, the caller publishes alone), the transparency log entry and the webhook
 * event; and after a publish, the log's signed head.
 */
export function publishingRecords(sql: Sql, signer: CertificateSigner, fence?: (tx: Tx) => Promise<void>): { onIssued: OnIssued; onRestated: OnRestated; onPublished: (now: Date) => Promise<unknown> } {
  return {
    onIssued: async (tx, issued) => {
      await fence?.(tx);
      await logIssued(tx, issued);
      await announceIssued(tx, issued);
    },
    onRestated: async (tx, r) => {
      await fence?.(tx);
      await logRestatement(tx, r);
      await announceRestatement(tx, r);
    },
    onPublished: (now) => signHead(sql, signer, now, fence),
  };
}
