// GET /v1/health: no key, not rate limited. Reports what is true now: database and Redis reached,
// collector and FX cycles recent, data ages, uptime and the last 24 hours of requests, and each
// read replica's state when there are any (from memory: lib/db/replicas.ts probes them). Since anyone
// may call it as often as they like, what it reads from the database and Redis is read at most
// once a second, by one call at a time (every other call gets that reading). A database that is
// there but does not answer the reading in time (busy with a long refresh; on the embedded database
// its one connection is that work's) is `busy`, not `error`: only one that fails or is not there
// is. While the service publishes what it holds before serving it (make demo's history), health
// answers 503 with status `starting`, as a readiness probe expects.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { timestamp } from '../../lib/format.js';
import { within } from '../../lib/within.js';
import { type Operation } from '../operation.js';
import { NO_QUERY, parseQuery } from '../validate.js';
import { collectorState, type CollectorState } from '../queries/rates.js';
import { presentTransport, venueTransports, type VenueTransportRow } from '../queries/venues.js';
import { HEALTH_RESPONSE, type HealthResponse } from '../schemas.js';
import { presentPipeline } from '../status.js';

export const operations: Operation[] = [
  { method: 'get', path: '/v1/health', summary: 'Service health (no key needed, not rate limited)', description: 'While the service publishes what it already holds before serving it (make demo\'s history), the answer is 503 with this body, status `starting` and `Retry-After`; a readiness probe waits for a 200.', tier: null, access: 'open', query: NO_QUERY, response: HEALTH_RESPONSE },
];

/** How long a health reading is answered again before the database and Redis are asked anew. */
export const READING_MS = 1_000;

/** How long the database gets to answer the reading, and then to show it is there at all. */
const READ_WITHIN_MS = 2_000;
const ANSWERS_WITHIN_MS = 1_000;

interface Reading {
  readonly state: CollectorState | undefined;
  /** How each venue's trades arrive (its stream, or REST alone); the last known while the database does not answer. */
  readonly venues: readonly VenueTransportRow[];
  readonly database: 'ok' | 'busy' | 'error';
  readonly redis: 'ok' | 'error' | 'disabled';
  readonly at: number;
  /** Taken while the service was starting: not answered again once it has started. */
  readonly starting: boolean;
}

async function read(deps: AppDeps, previous: Reading | null): Promise<Reading> {
  const starting = deps.startup.starting;
  let state: CollectorState | undefined;
  let database: Reading['database'] = 'ok';
  let answered = false;
  const reading = collectorState(deps.sql).finally(() => (answered = true));
  try {
    state = await within(READ_WITHIN_MS, reading);
  } catch {
    // failed, or still waiting: busy if the database is there (its answer to other work is merely
    // slow), else an error; a busy database's collector is as last read (its cycles are recorded
    // in it, so nothing newer is known)
    const there = !answered && deps.databaseAnswers ? await deps.databaseAnswers(ANSWERS_WITHIN_MS).catch(() => false) : false;
    database = there ? 'busy' : 'error';
    state = there ? previous?.state : undefined;
  }
  // the service's request figures: this process's counts written, the table's sums read (its last
  // reading stands when the database is unreachable)
  await within(2_000, deps.metrics.read()).catch(() => undefined);
  let redis: Reading['redis'] = 'disabled';
  if (deps.redis) redis = await within(1_000, deps.redis.ping()).then(() => 'ok' as const, () => 'error' as const);
  const venues = state ? await within(READ_WITHIN_MS, venueTransports(deps.sql)).catch(() => previous?.venues ?? []) : (previous?.venues ?? []);
  return { state, venues, database, redis, at: Date.now(), starting };
}

export function mount(router: AppRouter, deps: AppDeps): void {
  let last: Reading | null = null;
  let pending: Promise<Reading> | null = null;
  // a reading taken while the service was starting is not answered once it has started: it may
  // predate what the start published (the first cycle's record)
  const stale = (r: Reading) => r.starting && !deps.startup.starting;
  const fetchReading = () =>
    (pending ??= read(deps, last)
      .then((r) => (last = r))
      .finally(() => (pending = null)));
  const current = async (now: number): Promise<Reading> => {
    if (last && now - last.at <= READING_MS && !stale(last)) return last;
    const reading = await fetchReading();
    return stale(reading) ? fetchReading() : reading;
  };
  router.get('/v1/health', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const now = Date.now();
    const { state, venues, database, redis } = await current(now);

    const age = (d: Date | null | undefined) => (d ? Math.max(0, Math.floor((now - d.getTime()) / 1000)) : null);
    const collectorOk = state?.trades_at != null && now - state.trades_at.getTime() <= 3 * deps.config.cycleSeconds * 1000 + 60_000;
    const fxOk = state?.fx_at != null && now - state.fx_at.getTime() <= 2 * deps.config.fxCycleSeconds * 1000 + 60_000;
    const mode = state?.market ?? deps.config.market;
    const starting = deps.startup.starting;
    if (starting) {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
    }
    ctx.body = {
      status: starting ? 'starting' : database === 'ok' && collectorOk && redis !== 'error' ? 'ok' : 'degraded',
      mode,
      timestamp: timestamp(now),
      version: mode === 'simulated' ? `${deps.config.version}+simulated` : deps.config.version,
      uptime_seconds: Math.floor((now - deps.startedAt.getTime()) / 1000),
      services: {
        database,
        redis,
        data_collector: collectorOk ? 'ok' : 'error',
        fx_updates: fxOk ? 'ok' : 'error',
      },
      // the replicas are a capacity matter: reads fall back to the primary, so they leave status alone
      ...(deps.read.hasReplicas ? { database_replicas: deps.read.states().map((r) => ({ name: r.name, state: r.state, lag_seconds: r.lagSeconds === null ? null : Math.round(r.lagSeconds * 10) / 10 })) } : {}),
      // which processes collect and which one publishes (on a database server there may be several)
      ...(state?.pipeline ? { pipeline: presentPipeline(state.pipeline, now) } : {}),
      venues: venues.map((v) => presentTransport(v, now)),
      data_freshness: { crypto_prices_age_seconds: age(state?.newest_trade), fx_rates_age_seconds: age(state?.newest_fx) },
      metrics: deps.metrics.summary(now),
    } satisfies HealthResponse;
  });
}
