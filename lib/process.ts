// What a process of the service holds whichever roles it runs (pipeline/process.ts,
// api/process.ts): its database, the signer and the webhook secret box, the trade notices, the
// metrics registry (METRICS_PORT) and its listener, and the stop of everything started in it, in
// reverse order, every step run even if one before it fails.
import path from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/connect.js';
import { tradeNotices, type TradeNotices } from './db/notices.js';
import type { Logger } from './log.js';
import { ServiceMetrics } from './metrics.js';
import { startMetricsServer, type MetricsHandle } from './metrics-server.js';
import { createSigner, type CertificateSigner } from './signer.js';
import { createSecretBox, type SecretBox } from './webhooks/secrets.js';

export interface ServiceProcess {
  readonly config: Config;
  readonly log: Logger;
  readonly db: Database;
  readonly signer: CertificateSigner;
  /** Webhook signing secrets: sealed by the API, opened by the delivery worker. */
  readonly webhookSecrets: SecretBox;
  /** Which pairs just had trades stored, heard by every part that serves or watches live rates. */
  readonly notices: TradeNotices;
  /** The process's one registry, or null without METRICS_PORT (nothing is recorded without a listener to read it). */
  readonly metrics: ServiceMetrics | null;
  /** A failure the process cannot run on (already logged): the caller's onFatal stops it, exit 1. */
  fail(reason: Error): void;
  /** A part to stop with the process: stopped in the reverse order of starting. */
  stops(part: string, close: () => Promise<void> | void): void;
  /** Opens the metrics listener, once everything it reports is started (null without METRICS_PORT). */
  serveMetrics(): Promise<MetricsHandle | null>;
  stop(): Promise<void>;
}

export interface ProcessOptions {
  /**
   * A failure the process cannot run on (already logged: the embedded database stopped, the
   * database became another deployment under it): the caller stops and exits non-zero.
   */
  readonly onFatal?: (reason: Error) => void;
  /** A database already open (the tests'): used instead of opening the config's, and left open at stop. */
  readonly database?: Database;
}

export async function openProcess(config: Config, log: Logger, opts: ProcessOptions = {}): Promise<ServiceProcess> {
  const db = opts.database ?? (await openDatabase(config, log, { onFatal: opts.onFatal }));
  const closers: Array<[string, () => Promise<void> | void]> = opts.database ? [] : [['database', () => db.close()]];
  const stop = async () => {
    let failed: unknown;
    for (const [name, close] of closers.reverse()) {
      try {
        await close();
      } catch (err) {
        log.error({ err, part: name }, 'stopping failed');
        failed ??= err;
      }
    }
    closers.length = 0;
    if (failed) throw failed;
  };
  try {
    const metrics = config.metricsPort !== null ? new ServiceMetrics() : null;
    metrics?.watchDatabase({ sql: db.sql, kind: db.kind, maxConnections: db.sql.options.max, webhooks: config.role !== 'api' });
    const keyDir = path.join(config.varDir, 'keys');
    return {
      config,
      log,
      db,
      signer: createSigner({ hmacSecret: config.certSecret, ed25519PrivateKeyPem: config.certEd25519Key, keyDir }),
      webhookSecrets: createSecretBox({ keyHex: config.webhookSecretKey, keyDir }),
      notices: tradeNotices(db.sql, db.kind),
      metrics,
      fail: (reason) => opts.onFatal?.(reason),
      stops: (part, close) => void closers.push([part, close]),
      async serveMetrics() {
        if (!metrics) return null;
        const handle = await startMetricsServer(metrics, { host: config.metricsHost, port: config.metricsPort!, token: config.metricsToken }, log);
        closers.push(['metrics listener', () => handle.close()]);
        return handle;
      },
      stop,
    };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
