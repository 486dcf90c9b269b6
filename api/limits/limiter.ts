// Per-minute rate limits and monthly quotas per customer and tier, counted with
// rate-limiter-flexible in Redis (shared by every API process) or in memory.
// - Per-minute: a fixed window aligned to the minute (the window's minute is part of the key), so
//   X-RateLimit-Reset is the end of the current minute.
// - Monthly: calendar month, UTC. Usage is also written through to api_usage (every few seconds
//   and at shutdown), and a counter the store has lost (a process restart without Redis, or a Redis
//   restart) is seeded back from there, so usage survives restarts either way.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Sql } from '../../lib/db/connect.js';
import type { Logger } from '../../lib/log.js';
import { ApiError } from '../errors.js';
import { TIER_RULES, type Tier } from '../tiers.js';

export interface LimitSubject {
  readonly id: string;
  readonly tier: Tier;
}

export interface Decision {
  readonly headers: Record<string, string>;
}

const FREE_KEY_ISSUES_PER_HOUR = 5;
const MONTH_COUNTER_SECONDS = 32 * 86_400;

function monthOf(now: number): { key: string; start: Date; next: Date } {
  const d = new Date(now);
  const start = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  return { key: start.toISOString().slice(0, 7), start, next };
}

export class RateLimiter {
  private readonly perMinute = new Map<number, RateLimiterAbstract>();
  private readonly perMonth = new Map<number, RateLimiterAbstract>();
  private readonly issuance: RateLimiterAbstract;
  /** customer|month -> requests counted here and not yet written to api_usage */
  private readonly unflushed = new Map<string, number>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly redis: Redis | null,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
    private readonly namespace = 'afrates',
  ) {
    this.issuance = this.create(FREE_KEY_ISSUES_PER_HOUR, 3600, `${namespace}:issue`);
  }

  private create(points: number, duration: number, keyPrefix: string): RateLimiterAbstract {
    const memory = new RateLimiterMemory({ points, duration, keyPrefix });
    // Redis down: count in this process's memory meanwhile rather than fail every request
    return this.redis ? new RateLimiterRedis({ storeClient: this.redis, points, duration, keyPrefix, insuranceLimiter: memory }) : memory;
  }

  private limiterFor(cache: Map<number, RateLimiterAbstract>, points: number, duration: number, prefix: string) {
    let limiter = cache.get(points);
    if (!limiter) {
      limiter = this.create(points, duration, `${prefix}:${points}`);
      cache.set(points, limiter);
    }
    return limiter;
  }

  /** Starts writing monthly usage through to the database every `seconds`. */
  startFlushing(seconds = 5): void {
    this.flushTimer = setInterval(() => void this.flush().catch((err) => this.log.warn({ err }, 'usage flush failed')), seconds * 1000);
    this.flushTimer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flush();
  }

  /** Writes counted-but-unsaved usage to api_usage. */
  async flush(): Promise<void> {
    const pending = [...this.unflushed.entries()];
    this.unflushed.clear();
    for (const [i, [entry, count]] of pending.entries()) {
      const [customer, month] = entry.split('|') as [string, string];
      try {
        await this.sql`
          INSERT INTO api_usage (customer, month, requests) VALUES (${customer}, ${`${month}-01`}::date, ${count})
          ON CONFLICT (customer, month) DO UPDATE SET requests = api_usage.requests + excluded.requests`;
      } catch (err) {
        // keep this entry and every one not yet written for the next flush
        for (const [e, c] of pending.slice(i)) this.unflushed.set(e, (this.unflushed.get(e) ?? 0) + c);
        throw err;
      }
    }
  }

  /** Counts one request of `subject`; throws 429 when over the minute's limit or the month's quota. */
  async consume(subject: LimitSubject): Promise<Decision> {
    const rules = TIER_RULES[subject.tier];
    const now = this.now();
    const minute = Math.floor(now / 60_000);
    const reset = (minute + 1) * 60;
    const secondsLeft = Math.max(1, reset - Math.floor(now / 1000));
    const limiter = this.limiterFor(this.perMinute, rules.perMinute, 60, `${this.namespace}:minute`);
    const month = monthOf(now);
    const policy = [`"minute";q=${rules.perMinute};w=60`];
    if (rules.perMonth !== null) policy.push(`"month";q=${rules.perMonth};w=${Math.round((month.next.getTime() - month.start.getTime()) / 1000)}`);

    let used: number;
    try {
      used = (await limiter.consume(`${subject.id}:${minute}`)).consumedPoints;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      used = err.consumedPoints;
    }
    const headers: Record<string, string> = {
      'X-RateLimit-Limit': String(rules.perMinute),
      'X-RateLimit-Remaining': String(Math.max(0, rules.perMinute - used)),
      'X-RateLimit-Reset': String(reset),
      'RateLimit-Policy': policy.join(', '),
      RateLimit: `"minute";r=${Math.max(0, rules.perMinute - used)};t=${secondsLeft}`,
    };
    if (used > rules.perMinute) {
      throw new ApiError(429, 'rate_limit_exceeded', `Rate limit of ${rules.perMinute} requests per minute exceeded; retry after ${secondsLeft} s.`, {
        ...headers,
        'Retry-After': String(secondsLeft),
      });
    }

    if (rules.perMonth !== null) {
      // the month is in the key, so a counter only has to outlive the longest month
      const monthly = this.limiterFor(this.perMonth, rules.perMonth, MONTH_COUNTER_SECONDS, `${this.namespace}:month`);
      const key = `${subject.id}:${month.key}`;
      let usedThisMonth: number;
      try {
        usedThisMonth = (await monthly.consume(key)).consumedPoints;
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        usedThisMonth = err.consumedPoints;
      }
      // 1 = a counter the store did not have: the month's first request, or a lost counter
      if (usedThisMonth === 1) usedThisMonth = await this.restore(monthly, key, subject.id, month, now);
      if (usedThisMonth > rules.perMonth) {
        const retry = Math.ceil((month.next.getTime() - now) / 1000);
        throw new ApiError(429, 'monthly_quota_exceeded', `Monthly quota of ${rules.perMonth} requests used up; it renews on ${month.next.toISOString().slice(0, 10)}.`, {
          ...headers,
          'Retry-After': String(retry),
        });
      }
      const entry = `${subject.id}|${month.key}`;
      this.unflushed.set(entry, (this.unflushed.get(entry) ?? 0) + 1);
      const monthLeft = Math.ceil((month.next.getTime() - now) / 1000);
      headers['X-Quota-Limit'] = String(rules.perMonth);
      headers['X-Quota-Remaining'] = String(rules.perMonth - usedThisMonth);
      headers.RateLimit += `, "month";r=${rules.perMonth - usedThisMonth};t=${monthLeft}`;
    }
    return { headers };
  }

  /** Puts back the usage api_usage holds for a counter the store had lost; returns the count. */
  private async restore(limiter: RateLimiterAbstract, key: string, customer: string, month: { key: string; next: Date }, now: number): Promise<number> {
    try {
      const [row] = await this.sql<{ requests: string }[]>`
        SELECT requests::text FROM api_usage WHERE customer = ${customer} AND month = ${`${month.key}-01`}::date`;
      const stored = Number(row?.requests ?? 0) + (this.unflushed.get(`${customer}|${month.key}`) ?? 0);
      if (stored === 0) return 1;
      await limiter.set(key, stored + 1, MONTH_COUNTER_SECONDS);
      return stored + 1;
    } catch (err) {
      this.log.warn({ err: (err as Error).message, customer }, 'monthly usage not restored; counting from here');
      return 1;
    }
  }

  /** POST /v1/auth/free-key: at most 5 an hour per client address. */
  async consumeIssuance(address: string): Promise<void> {
    try {
      await this.issuance.consume(address);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retry = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ApiError(429, 'rate_limit_exceeded', `At most ${FREE_KEY_ISSUES_PER_HOUR} free keys an hour per address; retry after ${retry} s.`, {
        'Retry-After': String(retry),
      });
    }
  }
}
