// Request counts, errors and latency over the last 24 hours, by minute, for GET /v1/health, and one
// access log line per request (no key, no query values that could hold one).
import type Koa from 'koa';
import type { Logger } from '../../lib/log.js';
import type { AppState } from '../context.js';

const MINUTES = 24 * 60;

export class RequestMetrics {
  private readonly slots = new Map<number, { requests: number; errors: number; latencyMs: number }>();

  record(latencyMs: number, status: number, now = Date.now()): void {
    const minute = Math.floor(now / 60_000);
    const slot = this.slots.get(minute) ?? { requests: 0, errors: 0, latencyMs: 0 };
    slot.requests += 1;
    slot.latencyMs += latencyMs;
    if (status >= 500) slot.errors += 1;
    this.slots.set(minute, slot);
    if (this.slots.size > MINUTES + 5) {
      for (const m of this.slots.keys()) if (m <= minute - MINUTES) this.slots.delete(m);
    }
  }

  /** requests_24h, avg_latency_ms, error_rate (5xx share) over the last 24 hours. */
  summary(now = Date.now()): { requests_24h: number; avg_latency_ms: number; error_rate: number } {
    const since = Math.floor(now / 60_000) - MINUTES;
    let requests = 0;
    let errors = 0;
    let latency = 0;
    for (const [minute, s] of this.slots) {
      if (minute <= since) continue;
      requests += s.requests;
      errors += s.errors;
      latency += s.latencyMs;
    }
    return {
      requests_24h: requests,
      avg_latency_ms: requests ? Math.round((latency / requests) * 100) / 100 : 0,
      error_rate: requests ? Math.round((errors / requests) * 10_000) / 10_000 : 0,
    };
  }
}

/** Counts an answered request and writes its access log line. */
export function recordRequest(metrics: RequestMetrics, log: Logger, ctx: Koa.ParameterizedContext<AppState>, started: bigint): void {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (ctx.path !== '/v1/health') metrics.record(ms, ctx.status);
  log.info({ requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, customer: ctx.state.customer?.id }, 'request');
}
