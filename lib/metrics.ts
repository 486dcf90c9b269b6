// The service's Prometheus metrics: one registry per process, built with the process's shared parts
// (lib/process.ts) when METRICS_PORT is set, and the observers the API, the pipeline and the
// webhook worker record into (RequestObserver and PipelineMetrics, below: defined here, where both
// the API and the pipeline may import them), so that only this module knows prom-client. What is cheaper to read than to
// keep (open streams, Redis' state, the database, settlement lag, the webhook backlog) is read at
// each scrape; what the database holds, at most every few seconds and one reading at a time.
// Node's own (event-loop lag, memory, GC, handles) are prom-client's default metrics.
// The names are listed in docs/monitoring/README.md; the dashboard reads them.
import type { Redis } from 'ioredis';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Sql } from './db/connect.js';
import type { MetricsSource } from './metrics-server.js';
import { within } from './within.js';
import { webhookBacklog, type WebhookBacklog } from './webhooks/backlog.js';

/** Seconds: from a live rate answered from memory (~0.1 ms) to the API's deadline (15 s). */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];
/** Seconds: a venue run or a publish, from a quiet minute to a catch-up after downtime. */
const CYCLE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
/** Seconds: a webhook attempt, up to its time limit (5 s). */
const WEBHOOK_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** A reading of the database is reused this long (several scrapers, or a scrape retried). */
const READING_MS = 5_000;
/** A database that does not answer in this long is reported down (as GET /v1/health does). */
const READING_TIMEOUT_MS = 2_000;

/**
 * What the service's monitoring hears of each answered request. A route is its template
 * (`/v1/certificates/:pair/:timestamp`), never the path a client sent: what a client sends would
 * make a new series of every path.
 */
export interface RequestObserver {
  answered(method: string, route: string, status: number, seconds: number): void;
  /** A 429, by the caller's tier ('keyless': a request without a key, limited by address). */
  limited(tier: string): void;
}

/** What the pipeline tells its observer, as plain calls: the pipeline knows nothing of how they are counted or exposed. */
export interface PipelineMetrics {
  /** A venue's collection run ended (a run skipped while the venue pauses after failures is not one). */
  venueRun(venue: string, run: { readonly seconds: number; readonly inserted: number; readonly errors: readonly unknown[]; readonly late: number }): void;
  /**
   * A publish or an FX cycle ended, after `seconds`; `failed`: the publish steps (settle, refresh,
   * fx, fixings, restate, transparency, storage) or FX sources that failed in it.
   */
  cycle(kind: 'publish' | 'fx', seconds: number, failed: readonly string[]): void;
  /** Every pair's settled_through as recorded (at start, then after each settlement recorded). */
  settled(through: ReadonlyMap<string, Date>): void;
  /** Settled values restated in a publish (late trades moved them beyond the threshold). */
  restated(count: number): void;
}

interface DatabaseReading {
  readonly up: boolean;
  readonly seconds: number;
  readonly webhooks: WebhookBacklog | null;
  readonly at: number;
}

export class ServiceMetrics implements MetricsSource {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly limited: Counter<'tier'>;
  private readonly venueSeconds: Histogram<'venue'>;
  private readonly inserted: Counter<'venue'>;
  private readonly venueFailures: Counter<'venue'>;
  private readonly late: Counter<'venue'>;
  private readonly cycleSeconds: Histogram<'kind'>;
  private readonly cycleFailures: Counter<'kind' | 'step'>;
  private readonly cycleLast: Gauge<'kind'>;
  private readonly certificates: Counter;
  private readonly fixings: Counter;
  private readonly restatements: Counter;
  private readonly webhookAttempts: Histogram<'outcome'>;
  /** Each pair's settled_through, as the pipeline last recorded it. */
  private settledThrough: ReadonlyMap<string, Date> = new Map();
  private reading: DatabaseReading | null = null;
  private pendingReading: Promise<DatabaseReading> | null = null;

  constructor(opts: { readonly defaults?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.defaults !== false) collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: 'afrates_http_requests_total', help: 'Requests answered, by method, route template and status.', labelNames: ['method', 'route', 'status'], registers });
    this.latency = new Histogram({ name: 'afrates_http_request_duration_seconds', help: 'Time to answer a request, by method and route template.', labelNames: ['method', 'route'], buckets: REQUEST_BUCKETS, registers });
    this.limited = new Counter({ name: 'afrates_http_rate_limited_total', help: "Requests answered 429, by the caller's tier (keyless: limited by address).", labelNames: ['tier'], registers });
    this.venueSeconds = new Histogram({ name: 'afrates_venue_run_duration_seconds', help: "A venue's collection run (every pair it lists), by venue.", labelNames: ['venue'], buckets: CYCLE_BUCKETS, registers });
    this.inserted = new Counter({ name: 'afrates_trades_inserted_total', help: 'Trades stored, by venue.', labelNames: ['venue'], registers });
    this.venueFailures = new Counter({ name: 'afrates_venue_failures_total', help: "A venue's pairs whose collection failed, and failed market lists, by venue.", labelNames: ['venue'], registers });
    this.late = new Counter({ name: 'afrates_late_trades_total', help: 'Trades that arrived after their bucket was settled, by venue.', labelNames: ['venue'], registers });
    this.cycleSeconds = new Histogram({ name: 'afrates_cycle_duration_seconds', help: 'A publish (settle, refresh, certify, fixings, restatements) or an FX cycle.', labelNames: ['kind'], buckets: CYCLE_BUCKETS, registers });
    this.cycleFailures = new Counter({ name: 'afrates_cycle_failures_total', help: 'Publish steps and FX sources that failed, by cycle kind and step (or source).', labelNames: ['kind', 'step'], registers });
    this.cycleLast = new Gauge({ name: 'afrates_cycle_last_timestamp_seconds', help: 'When the last publish or FX cycle ended (Unix seconds).', labelNames: ['kind'], registers });
    this.certificates = new Counter({ name: 'afrates_certificates_issued_total', help: 'Certificates issued for settled buckets.', registers });
    this.fixings = new Counter({ name: 'afrates_fixings_published_total', help: 'Fixings published.', registers });
    this.restatements = new Counter({ name: 'afrates_restatements_total', help: 'Settled values restated after late trades moved them.', registers });
    this.webhookAttempts = new Histogram({ name: 'afrates_webhook_attempt_duration_seconds', help: 'Webhook delivery attempts, by outcome (delivered or failed), and their duration.', labelNames: ['outcome'], buckets: WEBHOOK_BUCKETS, registers });
    const metrics = this;
    new Gauge({
      name: 'afrates_settlement_lag_seconds',
      help: 'How far behind now each pair is settled (now - settled_through), as the pipeline last recorded it.',
      labelNames: ['pair'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        for (const [pair, at] of metrics.settledThrough) if (at) this.set({ pair }, Math.max(0, (now - at.getTime()) / 1000));
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The API's observer: every answered request, and the 429s by tier. */
  readonly requestObserver: RequestObserver = {
    answered: (method, route, status, seconds) => {
      this.requests.inc({ method, route, status });
      this.latency.observe({ method, route }, seconds);
    },
    limited: (tier) => this.limited.inc({ tier }),
  };

  /** The pipeline's observer. */
  readonly pipelineObserver: PipelineMetrics = {
    venueRun: (venue, run) => {
      this.venueSeconds.observe({ venue }, run.seconds);
      this.inserted.inc({ venue }, run.inserted);
      this.venueFailures.inc({ venue }, run.errors.length);
      this.late.inc({ venue }, run.late);
    },
    cycle: (kind, seconds, failed) => {
      this.cycleSeconds.observe({ kind }, seconds);
      for (const step of failed) this.cycleFailures.inc({ kind, step });
      this.cycleLast.set({ kind }, Date.now() / 1000);
    },
    settled: (through) => {
      this.settledThrough = new Map(through);
    },
    restated: (count) => this.restatements.inc(count),
  };

  certificatesIssued(n: number): void {
    this.certificates.inc(n);
  }

  fixingPublished(): void {
    this.fixings.inc();
  }

  webhookAttempt(delivered: boolean, seconds: number): void {
    this.webhookAttempts.observe({ outcome: delivered ? 'delivered' : 'failed' }, seconds);
  }

  /** The API's open event streams and its Redis client's state, read at each scrape. */
  watchApi(api: { readonly streams: () => number; readonly redis: Redis | null }): void {
    const registers = [this.registry];
    new Gauge({
      name: 'afrates_streams_open',
      help: 'Event streams (SSE) open in this process.',
      registers,
      collect() {
        this.set(api.streams());
      },
    });
    const redis = api.redis;
    if (!redis) return; // no REDIS_URL: nothing to report
    new Gauge({
      name: 'afrates_redis_up',
      help: "1 while this process's Redis connection is ready; 0 while it connects, reconnects or is closed.",
      registers,
      collect() {
        this.set(redis.status === 'ready' ? 1 : 0);
      },
    });
  }

  /**
   * A pipeline process: whether it holds the publisher lease now (1: it publishes; 0: another
   * pipeline process does, this one collects), with its venues. Summed over processes it is 1.
   */
  watchPublisher(lease: { holds(): boolean; readonly me: { readonly venues: readonly string[] } }): void {
    new Gauge({
      name: 'afrates_publisher',
      help: 'This pipeline process holds the publisher lease (1) or only collects (0); venues: the venues it collects.',
      labelNames: ['venues'],
      registers: [this.registry],
      collect() {
        this.set({ venues: lease.me.venues.join(',') }, lease.holds() ? 1 : 0);
      },
    });
  }

  /**
   * The database, read at scrape time: whether it answers (and how fast), its configured
   * connections, and with `webhooks` (the process that delivers them) the webhook backlog.
   */
  watchDatabase(db: { readonly sql: Sql; readonly kind: 'embedded' | 'server'; readonly maxConnections: number; readonly webhooks: boolean }): void {
    const registers = [this.registry];
    const read = () => this.readDatabase(db.sql, db.webhooks);
    new Gauge({
      name: 'afrates_database_up',
      help: `1 when the database answered within ${READING_TIMEOUT_MS / 1000} s at the last reading (every ${READING_MS / 1000} s at most).`,
      labelNames: ['kind'],
      registers,
      async collect() {
        this.set({ kind: db.kind }, (await read()).up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'afrates_database_check_seconds',
      help: "How long the last reading's statement took.",
      registers,
      async collect() {
        this.set((await read()).seconds);
      },
    });
    new Gauge({ name: 'afrates_database_connections_max', help: "The connection pool's size (the embedded database admits one).", registers }).set(db.maxConnections);
    if (!db.webhooks) return;
    const backlogGauges: [string, string, (b: WebhookBacklog) => number][] = [
      ['afrates_webhook_events_waiting', 'Webhook events not yet fanned out into deliveries.', (b) => b.eventsWaiting],
      ['afrates_webhook_deliveries_pending', 'Webhook deliveries not yet delivered nor given up.', (b) => b.deliveriesPending],
    ];
    for (const [name, help, pick] of backlogGauges) {
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const b = (await read()).webhooks;
          if (b) this.set(pick(b));
        },
      });
    }
    new Gauge({
      name: 'afrates_webhook_endpoints',
      help: 'Webhook endpoints by state: enabled, failing (enabled, every delivery failing since the last success), disabled.',
      labelNames: ['state'],
      registers,
      async collect() {
        const b = (await read()).webhooks;
        if (!b) return;
        this.set({ state: 'enabled' }, b.endpointsEnabled);
        this.set({ state: 'failing' }, b.endpointsFailing);
        this.set({ state: 'disabled' }, b.endpointsDisabled);
      },
    });
  }

  /** One reading at a time, reused for READING_MS: every scrape-time gauge of the database shares it. */
  private readDatabase(sql: Sql, webhooks: boolean): Promise<DatabaseReading> {
    const now = Date.now();
    if (this.reading && now - this.reading.at < READING_MS) return Promise.resolve(this.reading);
    this.pendingReading ??= (async () => {
      const t0 = performance.now();
      let reading: DatabaseReading;
      try {
        const backlog = await within(READING_TIMEOUT_MS, webhooks ? webhookBacklog(sql) : sql`SELECT 1`.then(() => null));
        reading = { up: true, seconds: (performance.now() - t0) / 1000, webhooks: backlog, at: Date.now() };
      } catch {
        reading = { up: false, seconds: (performance.now() - t0) / 1000, webhooks: null, at: Date.now() };
      }
      this.reading = reading;
      return reading;
    })().finally(() => (this.pendingReading = null));
    return this.pendingReading;
  }
}
