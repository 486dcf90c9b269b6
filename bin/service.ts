// The composition root: starts what this process runs (ROLE: all, api or pipeline) on one database,
// wires the pipeline to the API's parts (live snapshot refresh after each cycle, certificates for
// newly settled buckets), and stops it all in reverse order. `make run` and `make demo` come
// through here. It sits above pipeline/ and api/, so neither has to import the other. With
// METRICS_PORT set it builds the process's metrics registry (bin/metrics.ts), hands its observers
// to the API, the pipeline and the webhook worker, and serves it on a listener of its own.
import path from 'node:path';
import { ConfigError, type Config } from '../lib/config.js';
import { openDatabase, type Database } from '../lib/db/connect.js';
import { tradeNotices } from '../lib/db/notices.js';
import { openReadRouter } from '../lib/db/replicas.js';
import type { Logger } from '../lib/log.js';
import { startAdmin } from '../api/admin/server.js';
import { startMetricsServer, type MetricsHandle } from '../lib/metrics-server.js';
import { ServiceMetrics } from './metrics.js';
import { parametersInForce } from '../lib/methodology/parameters.js';
import { createSigner } from '../lib/signer.js';
import { softwareIdentity } from '../lib/software.js';
import { LiveSnapshot } from '../api/live/snapshot.js';
import { buildDeps, startApi, type RunningApi } from '../api/server.js';
import { storeDueMonthFiles } from '../api/month-files.js';
import { observePairs } from '../api/webhooks/observations.js';
import { Coalesced, Paced } from '../lib/coalesced.js';
import { createSecretBox } from '../lib/webhooks/secrets.js';
import type { Pipeline } from '../pipeline/runner.js';

export interface Service {
  readonly db: Database;
  readonly api: RunningApi | null;
  readonly pipeline: Pipeline | null;
  /** The metrics listener (METRICS_PORT), or null. */
  readonly metrics: MetricsHandle | null;
  /** Ends the start-up that `starting` began: health says what is so from here on. */
  ready(): void;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  /** Start the pipeline's loops (default true); false leaves that to the caller (the demo first loads history). */
  readonly collect?: boolean;
  /** The embedded database stopped on its own (already logged): the caller stops and exits non-zero. */
  readonly onDatabaseFatal?: (reason: Error) => void;
  /**
   * The caller publishes what the database holds before it is served (the demo's history): until
   * ready(), health answers 503 `starting` instead of a status of what is only half published.
   */
  readonly starting?: boolean;
}

/** The least time between two alert observations asked for by stored trades. */
const ALERT_SPACING_MS = 500;

/** Month files made ahead per run, after a cycle: a few, so that a backlog (a new database's history) is spread over many cycles. */
const MONTH_FILES_PER_RUN = 6;

export async function startService(config: Config, log: Logger, opts: ServiceOptions = {}): Promise<Service> {
  const db = await openDatabase(config, log, { onFatal: opts.onDatabaseFatal });
  // What was started, to stop in reverse order: every step runs even if one before it fails.
  const closers: Array<[string, () => Promise<void> | void]> = [['database', () => db.close()]];
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
  let api: RunningApi | null = null;
  let pipeline: Pipeline | null = null;
  let metricsHandle: MetricsHandle | null = null;
  // one registry for the whole process; nothing is recorded without a listener to read it
  const metrics = config.metricsPort !== null ? new ServiceMetrics() : null;
  try {
    metrics?.watchDatabase({ sql: db.sql, kind: db.kind, maxConnections: db.sql.options.max, webhooks: config.role !== 'api' });
    const signer = createSigner({ hmacSecret: config.certSecret, ed25519PrivateKeyPem: config.certEd25519Key, keyDir: path.join(config.varDir, 'keys') });
    // webhook signing secrets are sealed by the API and opened by the delivery worker with one box
    const webhookSecrets = createSecretBox({ keyHex: config.webhookSecretKey, keyDir: path.join(config.varDir, 'keys') });
    // the API's read replicas (DATABASE_READ_URL); a pipeline-only process reads the primary alone
    // which pairs just had trades stored, heard by every process that serves or watches live rates
    const notices = tradeNotices(db.sql, db.kind);
    const read = await openReadRouter(db.sql, config.role === 'pipeline' ? { ...config, databaseReadUrls: [] } : config, log);
    closers.push(['read replicas', () => read.close()]);
    // the live snapshot the API serves (its deps build it, with the replicas' fence); a
    // pipeline-only process keeps none
    let snapshot: LiveSnapshot | null = null;
    if (config.role !== 'pipeline') {
      const deps = await buildDeps(config, log, db.sql, { read, signer, webhookSecrets, observer: metrics?.requestObserver, starting: opts.starting, databaseAnswers: db.answers });
      closers.push(['redis', () => deps.redis?.disconnect()]);
      snapshot = deps.snapshot;
      closers.push(['snapshot', () => deps.snapshot.stop()]);
      await snapshot.refresh();
      await snapshot.hear(notices);
      metrics?.watchApi({ streams: () => deps.streams.size, redis: deps.redis });
      api = await startApi(deps);
      closers.push(['api', () => api!.close()]);
      const admin = await startAdmin(deps.keys, config.varDir, config.adminPort, log);
      closers.push(['admin endpoint', () => admin.close()]);
    }
    if (config.role !== 'api') {
      // loaded only here: an API-only process (ROLE=api) never loads ccxt and the venues (~100 MB)
      const [{ Pipeline }, { venues }, { Certifier }, transparency, { WebhookWorker }, { onPublished }] = await Promise.all([
        import('../pipeline/runner.js'),
        import('../pipeline/venues/index.js'),
        import('../pipeline/certify/issue.js'),
        import('../pipeline/transparency.js'),
        import('../pipeline/webhooks/worker.js'),
        import('../pipeline/webhooks/alerts.js'),
      ]);
      const { announceIssued, announceRestatement } = await import('../pipeline/webhooks/announce.js');
      const { PublisherLease, processIdentity } = await import('../pipeline/lease.js');
      // VENUES: the venues this process collects (every one by default)
      const unknown = (config.venues ?? []).filter((id) => !venues.some((v) => v.id === id));
      if (unknown.length > 0) throw new ConfigError('VENUES', `names no venue afrates knows: ${unknown.join(', ')} (known: ${venues.map((v) => v.id).join(', ')})`);
      const collected = config.venues ? venues.filter((v) => config.venues!.includes(v.id)) : venues;
      // Any number of pipeline processes may run on one database server: each collects its venues,
      // the holder of the publisher lease alone publishes (pipeline/lease.ts), and every publishing
      // transaction is fenced by it. On the embedded database this process is the only one.
      const lease = new PublisherLease({
        sql: db.sql,
        log,
        me: processIdentity(config.role === 'all' ? 'all' : 'pipeline', collected.map((v) => v.id), config.version),
        sole: db.kind === 'embedded',
        onChange: (holds) => {
          if (holds) webhooks.wake();
        },
      });
      metrics?.watchPublisher(lease);
      closers.push(['publisher lease', () => lease.stop()]); // given up once nothing of this process publishes
      const fence = (tx: Parameters<typeof lease.fence>[0]) => lease.fence(tx);
      const certifier = new Certifier(
        db.sql,
        { signer, issuerUrl: config.publicUrl, market: config.market, software: softwareIdentity(config.gitCommit), parameters: parametersInForce(config.settleAfterSeconds), log },
        // in the transaction that stores each: the publisher's fence, its transparency log entry and its webhook event
        async (tx, issued) => {
          await fence(tx);
          await transparency.logIssued(tx, issued);
          await announceIssued(tx, issued);
        },
      );
      // webhook deliveries: a loop of their own, never inside a cycle or a request
      const webhooks = new WebhookWorker({
        sql: db.sql,
        log,
        secrets: webhookSecrets,
        allowPrivate: config.webhooksAllowPrivate,
        // deliveries are made by the publishing process alone: each is made once, not once per process
        active: () => lease.holds(),
        onAttempt: metrics ? (delivered, seconds) => metrics.webhookAttempt(delivered, seconds) : undefined,
      });
      closers.push(['webhook deliveries', () => webhooks.stop()]);
      webhooks.start();
      lease.start();
      // complete months' export files, made ahead of their first request after a cycle, a few a
      // run, never inside one (api/month-files.ts)
      let stopping = false;
      const monthFiles = new Coalesced(() => storeDueMonthFiles(db.sql, log, MONTH_FILES_PER_RUN), () => !stopping);
      closers.push(['month files', async () => {
        stopping = true;
        await monthFiles.current?.catch(() => {});
      }]);
      pipeline = new Pipeline({
        config,
        log,
        sql: db.sql,
        venues: collected,
        lease,
        onCycle: async () => {
          await snapshot?.refresh();
          // alerts and month files: the publisher's (once for the service, not once per process)
          if (!lease.holds()) return;
          await alerts.run();
          if (!stopping) monthFiles.run().catch((err: unknown) => log.warn({ err }, 'month files not made ahead'));
        },
        notices,
        certifier: {
          issue: async (ranges, stopped) => {
            const issued = await certifier.issue(ranges, stopped);
            if (issued > 0) log.info({ issued }, 'certificates issued for settled buckets');
            metrics?.certificatesIssued(issued);
            return issued;
          },
          fix: async (pair, slot) => {
            const published = await certifier.fix(pair, slot);
            if (published) metrics?.fixingPublished();
            return published;
          },
        },
        onRestated: async (tx, r) => {
          await fence(tx);
          await transparency.logRestatement(tx, r);
          await announceRestatement(tx, r);
        },
        onPublished: (now) => transparency.signHead(db.sql, signer, now, fence),
        // the embedded database has no job scheduler: the pipeline runs compression and retention
        runStorageJobs: db.kind === 'embedded',
        // a server takes COPY; the embedded database's socket does not
        copyTrades: db.kind === 'server',
        // the simulated market is local and unlimited; real venues get their published pacing
        unpaced: config.market === 'simulated',
        metrics: metrics?.pipelineObserver,
      });
      const p = pipeline;
      // webhook alerts: after every cycle, and within a second of stored trades (folded together)
      const alerts = new Coalesced(() => onPublished({ sql: db.sql, log, observe: async ({ rates }) => observePairs(db.sql, rates ? (snapshot ?? (await ratesNow())) : null), wake: () => webhooks.wake(), fence }), () => !stopping);
      const alertsSoon = new Paced(alerts, ALERT_SPACING_MS, (err) => log.warn({ err }, 'webhook alerts not observed'));
      const unlisten = await notices.listen(() => {
        if (lease.holds()) alertsSoon.ask();
      });
      closers.push(['webhook alerts', async () => {
        alertsSoon.stop();
        await unlisten();
        await alerts.current?.catch(() => {});
      }]);
      // live rates for webhook alerts in a pipeline-only process, read only when an endpoint watches
      // them; one snapshot kept across cycles, so its outlier rule remembers who is out as the API's does
      let alertRates: LiveSnapshot | null = null;
      async function ratesNow(): Promise<LiveSnapshot> {
        alertRates ??= new LiveSnapshot(db.sql, log);
        await alertRates.refresh();
        return alertRates;
      }
      closers.push(['pipeline', () => p.stop()]);
    } else {
      snapshot!.follow(); // another process runs the pipeline: notice its cycles
    }
    if (metrics) {
      const handle = (metricsHandle = await startMetricsServer(metrics, { host: config.metricsHost, port: config.metricsPort!, token: config.metricsToken }, log));
      closers.push(['metrics listener', () => handle.close()]);
    }
    if (opts.collect !== false) pipeline?.start();
    const ready = () => {
      if (api) api.deps.startup.starting = false;
    };
    return { db, api, pipeline, metrics: metricsHandle, ready, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

/**
 * Stops the service cleanly on SIGINT/SIGTERM. `make run` runs under tsx, which passes a Ctrl-C on
 * to this process while the terminal sends it too: a repeat within two seconds is that same
 * request. A signal after that exits at once (exit 1), for a stop that hangs.
 * Returns `fail`: the same clean stop for a failure the process cannot run on (the embedded
 * database died), then exit 1; the API keeps serving what it holds in memory until then, and a
 * stop that hangs is cut short after FAIL_STOP_MS.
 */
export function stopOnSignals(stop: () => Promise<void>, log: Logger): (reason: Error) => void {
  let stoppingSince: number | null = null;
  const stopThenExit = (code: number) =>
    stop().then(
      () => process.exit(code),
      (err) => {
        log.error({ err }, 'unclean stop');
        process.exit(1);
      },
    );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stoppingSince !== null) {
        if (Date.now() - stoppingSince < 2_000) return;
        log.warn({ signal }, 'second signal: exiting without a clean stop');
        process.exit(1);
      }
      stoppingSince = Date.now();
      log.info({ signal }, 'stopping');
      // Container runtimes send SIGKILL 10 s after SIGTERM: long work stops between two of its
      // transactions (a backlog of certificates, fixings), but a statement under way is not cut
      // short (the embedded database cannot cancel one), so a stop still going after
      // SIGNAL_STOP_MS exits at once. Nothing is lost: an unfinished transaction rolls back, and
      // what was left is done by the next start.
      setTimeout(() => {
        log.warn({ signal, waited_ms: SIGNAL_STOP_MS }, 'the clean stop is taking too long: exiting without it');
        process.exit(1);
      }, SIGNAL_STOP_MS).unref();
      void stopThenExit(0);
    });
  }
  return (reason) => {
    if (stoppingSince !== null) return; // already stopping; the exit follows
    stoppingSince = Date.now();
    log.info({ cause: reason.message }, 'stopping');
    setTimeout(() => process.exit(1), FAIL_STOP_MS).unref();
    void stopThenExit(1);
  };
}

/** How long a stop after a fatal failure may take before the process exits anyway. */
const FAIL_STOP_MS = 10_000;
/** How long a stop asked for by SIGTERM or SIGINT may take before the process exits anyway (under the runtimes' 10 s). */
const SIGNAL_STOP_MS = 9_000;
