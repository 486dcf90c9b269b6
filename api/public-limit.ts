// The limit of the public web endpoints (GET /v1/board, /v1/board/stream, /v1/status/public) and
// of the transparency log's (GET /v1/transparency/...): PER_MINUTE requests per client address, and
// no monthly quota. They are answered from caches or a few indexed reads and cost next to nothing;
// counting them against the address's anonymous budget (the free tier's 10 a minute and 5,000 a
// month) would let one status page left open for a few days, or a monitor checking each new head,
// lock its office out of free-key issuance. Counted in memory and, with REDIS_URL, in Redis (the larger
// count decides, as in api/limits/limiter.ts).
import type { Redis } from 'ioredis';
import type { AppContext } from './request.js';
import { ApiError } from './errors.js';
import { MemoryCounters, RedisCounters } from './limits/counters.js';
import { fixedWindow, limitHeaders } from './limits/window.js';

export const PER_MINUTE = 60;
const MINUTE_MS = 60_000;

export class PublicLimit {
  private readonly local: MemoryCounters;
  private readonly shared: RedisCounters | null;

  constructor(
    redis: Redis | null,
    private readonly namespace = 'afrates',
    private readonly now: () => number = Date.now,
  ) {
    this.local = new MemoryCounters(now);
    this.shared = redis ? new RedisCounters(redis, now) : null;
  }

  /** Counts one request of the caller's address; 429 beyond PER_MINUTE. Sets the rate-limit headers. */
  async consume(ctx: AppContext): Promise<void> {
    const minute = fixedWindow(this.now(), MINUTE_MS);
    const key = `${this.namespace}:public:${ctx.ip}:${minute.n}`;
    let used = this.local.incr(key, minute.expiresAt);
    if (this.shared) used = Math.max(used, await this.shared.incr(key, minute.expiresAt).catch(() => used));
    const headers = limitHeaders('public', PER_MINUTE, used, minute, 60);
    if (used > PER_MINUTE) {
      throw new ApiError(429, 'rate_limit_exceeded', `At most ${PER_MINUTE} requests a minute per address to the public endpoints; retry after ${minute.secondsLeft} s.`, {
        ...headers,
        'Retry-After': String(minute.secondsLeft),
      });
    }
    ctx.set(headers);
  }
}
