// The pipeline as the settlement tests run it: real ccxt against the simulated market, unpaced,
// on the test's clock, with short timeouts and retries, certifying settled buckets with a signer
// kept in `dir` (as make demo does: simulated, labelled so).
import path from 'node:path';
import { issueCertificates } from '../../api/certificates/issue.js';
import { createSigner } from '../../api/certificates/signer.js';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { Pipeline } from '../../pipeline/runner.js';
import type { SimMarket } from '../../pipeline/sim/index.js';
import { venues } from '../../pipeline/venues/index.js';
import { testLog } from './db.js';

export interface SimPipelineOptions {
  readonly sim: SimMarket;
  readonly db: Database;
  readonly now: () => number;
  /** var directory: the signing keys */
  readonly dir: string;
  /** more settings (SETTLE_AFTER_SECONDS, CYCLE_SECONDS, ...) */
  readonly env?: Record<string, string>;
  readonly retryDelaysMs?: readonly number[];
}

export function certifyingSimPipeline(o: SimPipelineOptions): Pipeline {
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: o.sim.url, AFRATES_VAR_DIR: o.dir, ...o.env });
  const signer = createSigner({ keyDir: path.join(o.dir, 'keys') });
  return new Pipeline({
    config,
    log: testLog,
    sql: o.db.sql,
    venues,
    unpaced: true,
    now: o.now,
    initialLookbackMs: 15 * 60_000,
    requestTimeoutMs: 400,
    retryDelaysMs: o.retryDelaysMs ?? [5],
    certify: (ranges) => issueCertificates(o.db.sql, ranges, { signer, issuerUrl: 'https://afrates.test', market: 'simulated', now: () => new Date(o.now()) }),
  });
}
