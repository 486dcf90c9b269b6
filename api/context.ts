// What the API is built from (AppDeps); what a request carries is in api/request.ts (re-exported
// here for the routes).
import type { Config } from '../lib/config.js';
import type { Sql } from '../lib/db/connect.js';
import type { ReadRouter } from '../lib/db/replicas.js';
import type { Logger } from '../lib/log.js';
import type { KeyStore } from './keys/store.js';
import type { RateLimiter } from './limits/limiter.js';
import type { LiveSnapshot } from '../lib/live/snapshot.js';
import type { LiveJsonCache } from './live/cache.js';
import type { RequestMetrics } from './middleware/metrics.js';
import type { RequestObserver } from '../lib/metrics.js';
import type { CertificateSigner } from '../lib/signer.js';
import type { EventStreams } from './sse.js';
import type { Redis } from 'ioredis';
import type { Lookup } from '../lib/webhooks/addresses.js';
import type { SecretBox } from '../lib/webhooks/secrets.js';

export type { AppContext, AppRouter, AppState, Customer } from './request.js';

export interface PairInfo {
  readonly pair: string;
  readonly base: string;
  readonly quote: string;
}


export interface AppDeps {
  readonly config: Config;
  readonly log: Logger;
  /** The primary: writes, and reads that must see this process's own writes (keys, usage, account, webhooks). */
  readonly sql: Sql;
  /** Read-only queries of published data: on a read replica that is caught up, else on the primary. */
  readonly read: ReadRouter;
  readonly redis: Redis | null;
  readonly keys: KeyStore;
  readonly limiter: RateLimiter;
  readonly snapshot: LiveSnapshot;
  /** The snapshot's rates as JSON, made once per pair, presentation and second. */
  readonly liveJson: LiveJsonCache;
  readonly metrics: RequestMetrics;
  /** The per-address limit of the public records and pages (operations with access 'public'). */
  /** The open event streams of this process. */
  readonly streams: EventStreams;
  /** The service's Prometheus metrics, when they are on (METRICS_PORT): every answered request. */
  readonly observer?: RequestObserver;
  readonly signer: CertificateSigner;
  /** Seals webhook endpoints' signing secrets (WEBHOOK_SECRET_KEY, or the key kept in var/keys/). */
  readonly webhookSecrets: SecretBox;
  readonly startedAt: Date;
  /**
   * Set while the service publishes what it already holds before serving it (make demo's history):
   * health answers 503 `starting` until then. Cleared once, never set again.
   */
  readonly startup: { starting: boolean };
  /**
   * Whether the database is there apart from the pool's connections (lib/db/connect.ts): health
   * calls a database that does not answer its reading in time but is there `busy`. Without it
   * such a database reads as `error`.
   */
  readonly databaseAnswers?: (timeoutMs: number) => Promise<boolean>;
  /** The public pairs, by identifier (loaded from the pairs table at start). */
  readonly pairs: ReadonlyMap<string, PairInfo>;
  /** How webhook URLs' hosts are resolved when registered (default: the system's resolver; tests inject one). */
  readonly webhookLookup?: Lookup;
}

