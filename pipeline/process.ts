// The pipeline's part of a process (ROLE all or pipeline), as the service starts it: the venues it
// collects (VENUES), the publisher lease, and everything publishing does, wired here once:
// certificates, restatements and the signed transparency head (publishingPipeline, which builds the
// tests' publishing pipelines too, on pipeline/records.ts), webhook deliveries (a loop of their own) and webhook alerts
// (after every cycle, and soon after stored trades), each counted in the process's metrics.
import { ConfigError, type Config } from '../lib/config.js';
import type { Database } from '../lib/db/connect.js';
import { Coalesced, Paced } from '../lib/coalesced.js';
import { LiveSnapshot } from '../lib/live/snapshot.js';
import type { Logger } from '../lib/log.js';
import type { ServiceMetrics } from '../lib/metrics.js';
import type { ServiceProcess } from '../lib/process.js';
import { PublisherLease, processIdentity } from './lease.js';
import { publishing, type PublishingOptions } from './records.js';
import { Pipeline, type PipelineOptions } from './runner.js';
import { venues } from './venues/index.js';
import { runAlerts } from './webhooks/alerts.js';
import { observePairs } from './webhooks/observations.js';
import { WebhookWorker } from './webhooks/worker.js';

/** The least time between two alert observations asked for by stored trades. */
const ALERT_SPACING_MS = 500;

export interface PipelinePart {
  readonly pipeline: Pipeline;
  readonly lease: PublisherLease;
}

export interface PipelinePartOptions {
  /** The API's live snapshot when this process serves one: rebuilt after each cycle, and the alerts read its rates. */
  readonly snapshot?: LiveSnapshot;
  /** Run after each cycle and its alerts (the API's month files), not waited for. */
  readonly afterCycle?: () => void;
}

export async function startPipelinePart(p: ServiceProcess, opts: PipelinePartOptions = {}): Promise<PipelinePart> {
  const { config, log, db, metrics } = p;
  // VENUES: the venues this process collects (every one by default)
  const unknown = (config.venues ?? []).filter((id) => !venues.some((v) => v.id === id));
  if (unknown.length > 0) throw new ConfigError('VENUES', `names no venue afrates knows: ${unknown.join(', ')} (known: ${venues.map((v) => v.id).join(', ')})`);
  const collected = config.venues ? venues.filter((v) => config.venues!.includes(v.id)) : venues;
  // Any number of pipeline processes may run on one database server: each collects its venues,
  // the holder of the publisher lease alone publishes (pipeline/lease.ts), and every publishing
  // transaction is fenced by it. A database of one connection has this process alone.
  const lease = new PublisherLease({
    sql: db.sql,
    log,
    me: processIdentity(config.role === 'all' ? 'all' : 'pipeline', collected.map((v) => v.id), config.version),
    sole: db.sole,
    onChange: (holds) => {
      if (holds) webhooks.wake();
    },
  });
  metrics?.watchPublisher(lease);
  p.stops('publisher lease', () => lease.stop()); // given up once nothing of this process publishes
  // webhook deliveries: a loop of their own, never inside a cycle or a request
  const webhooks = new WebhookWorker({
    sql: db.sql,
    log,
    secrets: p.webhookSecrets,
    allowPrivate: config.webhooksAllowPrivate,
    // deliveries are made by the publishing process alone: each is made once, not once per process
    active: () => lease.holds(),
    onAttempt: metrics ? (delivered, seconds) => metrics.webhookAttempt(delivered, seconds) : undefined,
  });
  p.stops('webhook deliveries', () => webhooks.stop());
  webhooks.start();
  lease.start();
  let stopping = false;
  const pipeline = publishingPipeline(
    { config, log, sql: db.sql, signer: p.signer, lease, metrics },
    {
      venues: collected,
      onCycle: async () => {
        await opts.snapshot?.refresh();
        // alerts: the publisher's (once for the service, not once per process)
        if (lease.holds()) await alerts.run();
        opts.afterCycle?.();
      },
      notices: p.notices,
      // without the database's job scheduler, the pipeline runs compression and retention
      runStorageJobs: !db.schedulesJobs,
      copyTrades: db.takesCopy,
      // the simulated market is local and unlimited; real venues get their published pacing
      unpaced: config.market === 'simulated',
      metrics: metrics?.pipelineObserver,
    },
  );
  // live rates for the alerts in a process without the API's snapshot, read only when an endpoint
  // watches them; one snapshot kept across cycles, so its outlier rule remembers who is out as the API's does
  let alertRates: LiveSnapshot | null = null;
  const ratesNow = async (): Promise<LiveSnapshot> => {
    alertRates ??= new LiveSnapshot(db.sql, log);
    await alertRates.refresh();
    return alertRates;
  };
  // webhook alerts: after every cycle, and within a second of stored trades (folded together)
  const alerts = new Coalesced(() => runAlerts({ sql: db.sql, log, observe: async ({ rates }) => observePairs(db.sql, rates ? (opts.snapshot ?? (await ratesNow())) : null), wake: () => webhooks.wake(), fence: lease.fence }), () => !stopping);
  const alertsSoon = new Paced(alerts, ALERT_SPACING_MS, (err) => log.warn({ err }, 'webhook alerts not observed'));
  const unlisten = await p.notices.listen(() => {
    if (lease.holds()) alertsSoon.ask();
  });
  p.stops('webhook alerts', async () => {
    stopping = true;
    alertsSoon.stop();
    await unlisten();
    await alerts.current?.catch(() => {});
  });
  p.stops('pipeline', () => pipeline.stop());
  return { pipeline, lease };
}

/**
 * A pipeline that publishes (publishing()), as the service's does and the tests' publishing
 * pipelines do, on the pipeline's clock, each certificate and fixing counted in `metrics`.
 * `pipeline`: the rest of its options (venues, loops, pacing).
 */
export function publishingPipeline(o: PublishingOptions & { readonly metrics?: ServiceMetrics | null }, pipeline: Omit<PipelineOptions, 'config' | 'log' | 'sql' | 'lease' | 'certifier' | 'onRestated' | 'onPublished'>): Pipeline {
  const { config, log, sql, lease, metrics } = o;
  const { certifier, onRestated, onPublished } = publishing(o, pipeline.now);
  return new Pipeline({
    ...pipeline,
    config,
    log,
    sql,
    lease,
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
    onRestated,
    onPublished,
  });
}

/** The backfill command's pipeline (make backfill): every venue, collecting only, nothing published. */
export function backfillPipeline(config: Config, log: Logger, db: Pick<Database, 'sql' | 'takesCopy'>): Pipeline {
  // the simulated market (make demo's, DEMO=1) has no limits to respect; real venues get their published pacing
  return new Pipeline({ config, log, sql: db.sql, venues, copyTrades: db.takesCopy, unpaced: config.market === 'simulated' });
}
