// What publishing records, one definition for the service's pipeline (pipeline/process.ts) and the
// tests' (test/support/pipeline.ts, test/support/api.ts), so the two cannot drift apart.
import type { Config } from '../lib/config.js';
import type { Sql } from '../lib/db/connect.js';
import type { Logger } from '../lib/log.js';
import { parametersInForce } from '../lib/methodology/parameters.js';
import type { CertificateSigner } from '../lib/signer.js';
import { softwareIdentity } from '../lib/software.js';
import { Certifier } from './certify/issue.js';
import type { PublisherLease } from './lease.js';
import type { OnRestated } from './restate.js';
import { logIssued, logRestatement, signHead } from './transparency.js';
import { announceIssued, announceRestatement } from './webhooks/announce.js';

export interface PublishingOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly sql: Sql;
  readonly signer: CertificateSigner;
  /** The publisher lease: every publishing transaction is fenced by it (none: the caller publishes alone). */
  readonly lease?: PublisherLease;
}

/**
 * What publishing records: certificates and fixings issued by `certifier` (PUBLIC_URL their
 * issuer, MARKET, the software, the parameters in force; `clock` its time, the system's by
 * default); beside each change, in the transaction that stores it, the lease's fence, the
 * transparency log entry and the webhook event; and after a publish, the log's signed head.
 */
export function publishing(o: PublishingOptions, clock?: () => number): { certifier: Certifier; onRestated: OnRestated; onPublished: (now: Date) => Promise<unknown> } {
  const { config, sql, signer, lease } = o;
  const fence = lease?.fence;
  const certifier = new Certifier(
    sql,
    { signer, issuerUrl: config.publicUrl, market: config.market, software: softwareIdentity(config.gitCommit), parameters: parametersInForce(config.settleAfterSeconds), log: o.log, now: clock ? () => new Date(clock()) : undefined },
    async (tx, issued) => {
      await fence?.(tx);
      await logIssued(tx, issued);
      await announceIssued(tx, issued);
    },
  );
  return {
    certifier,
    onRestated: async (tx, r) => {
      await fence?.(tx);
      await logRestatement(tx, r);
      await announceRestatement(tx, r);
    },
    onPublished: (now) => signHead(sql, signer, now, fence),
  };
}
