// Request counts, errors and latency over the last 24 hours, for GET /v1/health, and one access log
// line per request (no key, no query values that could hold one). The figures are the service's,
// not this process's: each process counts by minute in memory and adds its counts to
// api_request_minutes every few seconds, at every health reading and at shutdown; health sums the
// table and what is not in it yet, so they survive restarts and cover every API process. Beside
// them, each answer goes to the service's Prometheus metrics when they are on (RequestObserver,
// lib/metrics.ts).
import type Koa from 'koa';
import type { Sql } from '../../lib/db/connect.js';
import type { Logger } from '../../lib/log.js';
import type { RequestObserver } from '../../lib/metrics.js';
import type { AppState } from '../request.js';
import { addRequestMinutes, dropRequestMinutes, requestTotals } from '../queries/metrics.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

interface Counts {
  requests: number;
  errors: number;
  latencyMs: number;
}

export type MetricsSummary = {
  requests_24h: number;
  avg_latency_ms: number;
  error_rate: number;
};

export class RequestMetrics {
  /** minute (ms) -> counted here and not yet added to api_request_minutes */
  private pending = new Map<number, Counts>();
  /** A batch being written: counted by summary() until the table holds it. */
  private writing: Map<number, Counts> | null = null;
  /** The table's sums over the last 24 hours at the last reading, and when that was. */
  private stored: { counts: Counts; at: number } | null = null;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Writes and readings, one at a time: a reading taken while a write commits would count it twice, or not at all. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
  ) {}

  record(latencyMs: number, status: number, now = Date.now()): void {
    const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    // every answered request passes here: counted in place, no object of its own
    let slot = this.pending.get(minute);
    if (!slot) this.pending.set(minute, (slot = { requests: 0, errors: 0, latencyMs: 0 }));
    slot.requests += 1;
    slot.latencyMs += latencyMs;
    if (status >= 500) slot.errors += 1;
  }

  /** Starts adding this process's counts to the table every `seconds`. */
  startFlushing(seconds = 5): void {
    this.flushTimer = setInterval(() => void this.flush().catch((err) => this.log.warn({ err: (err as Error).message }, 'request metrics not written')), seconds * 1000);
    this.flushTimer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flush().catch((err) => this.log.warn({ err: (err as Error).message }, 'request metrics not written at shutdown'));
  }

  /** Adds what was counted here to api_request_minutes (kept for the next try if that fails). */
  flush(now = Date.now()): Promise<void> {
    return this.inTurn(() => this.write(now));
  }

  /**
   * Flushes, then reads the table's sums over the last 24 hours (health calls this at most once a
   * second). What is counted after the flush is added by summary(): nothing is counted twice.
   */
  read(now = Date.now()): Promise<void> {
    return this.inTurn(async () => {
      await this.write(now);
      this.stored = { counts: await requestTotals(this.sql, new Date(now - DAY_MS)), at: now };
    });
  }

  private inTurn(work: () => Promise<void>): Promise<void> {
    const turn = this.queue.then(work);
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async write(now: number): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = (this.writing = this.pending);
    this.pending = new Map();
    const counts = [...batch.values()];
    const rows = [...batch].map(([minute, c]) => ({ minute: new Date(minute).toISOString(), requests: c.requests, errors: c.errors, latency_ms: c.latencyMs }));
    try {
      await addRequestMinutes(this.sql, rows);
      // in the table now, and not in the last reading of it
      if (this.stored) for (const c of counts) add(this.stored.counts, c);
    } catch (err) {
      for (const [minute, c] of batch) this.add(minute, c);
      throw err;
    } finally {
      this.writing = null;
    }
    await dropRequestMinutes(this.sql, new Date(now - DAY_MS - 3_600_000));
  }

  /**
   * requests_24h, avg_latency_ms, error_rate (5xx share) over the last 24 hours: the last reading of
   * the table and what this process counted since. The database unreachable: the last reading.
   */
  summary(now = Date.now()): MetricsSummary {
    const total: Counts = { ...(this.stored?.counts ?? { requests: 0, errors: 0, latencyMs: 0 }) };
    for (const batch of [this.pending, this.writing ?? new Map<number, Counts>()]) {
      for (const [minute, c] of batch) if (minute > now - DAY_MS) add(total, c);
    }
    return {
      requests_24h: total.requests,
      avg_latency_ms: total.requests ? Math.round((total.latencyMs / total.requests) * 100) / 100 : 0,
      error_rate: total.requests ? Math.round((total.errors / total.requests) * 10_000) / 10_000 : 0,
    };
  }

  private add(minute: number, c: Counts): void {
    const slot = this.pending.get(minute);
    if (slot) add(slot, c);
    else this.pending.set(minute, { ...c });
  }
}

function add(to: Counts, c: Counts): void {
  to.requests += c.requests;
  to.errors += c.errors;
  to.latencyMs += c.latencyMs;
}

/** Hands each answered request to the observer, under its method and route. */
export type ObserveRequest = (ctx: Koa.ParameterizedContext<AppState>, seconds: number) => void;

/** Methods counted by name; any other is counted as OTHER. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A path no route or page serves (a 404): counted under this one route. */
const UNMATCHED_ROUTE = '(unmatched)';

export function observeRequests(observer: RequestObserver, routeOf: (path: string, method: string) => string | null): ObserveRequest {
  return (ctx, seconds) => {
    observer.answered(METHODS.has(ctx.method) ? ctx.method : 'OTHER', routeOf(ctx.path, ctx.method) ?? UNMATCHED_ROUTE, ctx.status, seconds);
    if (ctx.status === 429) observer.limited(ctx.state.customer?.tier ?? 'keyless');
  };
}

/** Counts an answered request (health's figures, and the observer's when there is one) and writes its access log line. */
export function recordRequest(metrics: RequestMetrics, log: Logger, ctx: Koa.ParameterizedContext<AppState>, started: bigint, observe?: ObserveRequest): void {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (ctx.path !== '/v1/health') metrics.record(ms, ctx.status);
  observe?.(ctx, ms / 1000);
  log.info({ requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, customer: ctx.state.customer?.id }, 'request');
}
