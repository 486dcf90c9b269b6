// Per-minute rate limits and monthly quotas per customer and tier, exact under concurrency.
// - Per-minute: a fixed window aligned to the minute (the minute is part of the key), so
//   X-RateLimit-Reset is the end of the current minute.
// - Monthly: calendar month, UTC. Usage is written through to api_usage (every few seconds and at
//   shutdown) and restored from there once per customer and month in each process, before that
//   customer's first request of the month is counted, so it survives restarts.
// Every request is counted in this process's memory and, when REDIS_URL is set, in Redis (shared
// by every API process); the count that decides is the larger of the two. So a Redis outage, or
// a Redis that comes back empty, never lets a customer through twice in one window: this process's
// own count carries on across it, and is written back into Redis when that has fallen behind. A
// month's count is written back from api_usage (every process's count up to its last flush) plus
// this process's since: its own count alone would drop what the other processes had counted.
import type { Redis } from 'ioredis';
import type { Sql } from '../../lib/db/connect.js';
import type { Logger } from '../../lib/log.js';
import { fixedWindow, limitHeaders, refusalHeaders, type FixedWindow } from './window.js';
import { ApiError } from '../errors.js';
import { TIER_RULES, type Tier } from '../../lib/tiers.js';
import { MemoryCounters, RedisCounters } from './counters.js';
import { InFlight } from './concurrency.js';
import { addDailyUsage, addMonthlyUsage, monthlyUsage } from '../queries/limits.js';

export interface LimitSubject {
  readonly id: string;
  readonly tier: Tier;
}

export interface Decision {
  readonly headers: Record<string, string>;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const FREE_KEY_ISSUES_PER_HOUR = 5;
/** Requests a minute per client address to the public web endpoints and the transparency log (consumePublic). */
export const PUBLIC_PER_MINUTE = 60;

/** A month's counter outlives the month by a day (late requests of the month's last second). */
const MONTH_KEY_GRACE_MS = 86_400_000;

type Month = ReturnType<typeof monthOf>;

function monthOf(now: number): { key: string; start: number; next: number } {
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: new Date(start).toISOString().slice(0, 7), start, next };
}

/**
 * The 429 of a spent month. The month is the window that refuses: every header says when it
 * renews, as Retry-After does (the contract tells clients to wait until X-RateLimit-Reset; the
 * minute's would have them retry every minute until the 1st).
 */
function monthSpent(perMonth: number, month: Month, now: number, headers: Record<string, string>): ApiError {
  const monthLeft = Math.ceil((month.next - now) / 1000);
  return new ApiError(429, 'monthly_quota_exceeded', `Monthly quota of ${perMonth} requests used up; it renews on ${new Date(month.next).toISOString().slice(0, 10)}.`, {
    ...headers,
    'X-RateLimit-Limit': String(perMonth),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(month.next / 1000),
    'X-Quota-Limit': String(perMonth),
    'X-Quota-Remaining': '0',
    RateLimit: `"month";r=0;t=${monthLeft}, ${headers.RateLimit}`, // the refusing window first
    'Retry-After': String(monthLeft),
  });
}

export class RateLimiter {
  /** Each customer's requests in flight in this process (its concurrency share: api/limits/concurrency.ts). */
  readonly inFlight: InFlight;
  private readonly local: MemoryCounters;
  private readonly shared: RedisCounters | null;
  /** customer|month -> the restore of that month's usage, run once per process. */
  private readonly restored = new Map<string, Promise<void>>();
  /** customer|month -> requests counted here and not yet written to api_usage */
  private readonly unflushed = new Map<string, number>();
  /** customer|YYYY-MM-DD -> the same for api_usage_daily (key customers: the dashboard's chart) */
  private readonly unflushedDaily = new Map<string, number>();
  /** customer|month -> a write-back of that month's count into an emptied Redis, under way */
  private readonly recovering = new Map<string, Promise<number>>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sql: Sql,
    redis: Redis | null,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    /** Prefix of every Redis key: the deployment's (RedisScope), so several can share one Redis. */
    private readonly namespace = 'afrates',
  ) {
    this.local = new MemoryCounters(now);
    this.shared = redis ? new RedisCounters(redis, now) : null;
    this.inFlight = new InFlight(now);
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

  /** Writes counted-but-unsaved usage to api_usage and api_usage_daily. */
  async flush(): Promise<void> {
    await this.flushMonthly();
    const pending = [...this.unflushedDaily.entries()];
    this.unflushedDaily.clear();
    for (const [i, [entry, count]] of pending.entries()) {
      const [customer, day] = entry.split('|') as [string, string];
      try {
        await addDailyUsage(this.sql, customer, day, count);
      } catch (err) {
        for (const [e, c] of pending.slice(i)) this.unflushedDaily.set(e, (this.unflushedDaily.get(e) ?? 0) + c);
        throw err;
      }
    }
  }

  private async flushMonthly(): Promise<void> {
    const pending = [...this.unflushed.entries()];
    this.unflushed.clear();
    for (const [i, [entry, count]] of pending.entries()) {
      const [customer, month] = entry.split('|') as [string, string];
      try {
        await addMonthlyUsage(this.sql, customer, month, count);
      } catch (err) {
        // keep this entry and every one not yet written for the next flush
        for (const [e, c] of pending.slice(i)) this.unflushed.set(e, (this.unflushed.get(e) ?? 0) + c);
        throw err;
      }
    }
  }

  /**
   * Counts one request in memory and in Redis and returns the larger count. Redis unreachable:
   * this process's count alone (health reports Redis as down). Redis behind this process's count:
   * this process's count is put back.
   */
  private count(key: string, expiresAt: number): number | Promise<number> {
    const mine = this.local.incr(key, expiresAt);
    // without Redis, no promise to make and wait for: the common case of a request answered from memory
    return this.shared ? this.countShared(this.shared, key, expiresAt, mine) : mine;
  }

  private async countShared(shared: RedisCounters, key: string, expiresAt: number, mine: number): Promise<number> {
    let theirs: number;
    try {
      theirs = await shared.incr(key, expiresAt);
    } catch {
      return mine;
    }
    if (theirs >= mine) return theirs;
    void shared.raise(key, mine, expiresAt).catch(() => {});
    return mine;
  }

  /**
   * Counts one request of a customer's month, in memory and in Redis. Redis counts it only where it
   * holds the month (restoreOnce puts it there): where it does not (lost in an outage, a restart
   * without persistence), the requests accepted so far are written back from api_usage and this
   * request counted on top, in one step, once: a request counted into the emptied month and then
   * written back over would count twice (docs/decisions.md, "Limits are exact under concurrency").
   */
  private countMonth(key: string, expiresAt: number, recover: () => Promise<number>): number | Promise<number> {
    const mine = this.local.incr(key, expiresAt);
    return this.shared ? this.countMonthShared(this.shared, key, expiresAt, mine, recover) : mine;
  }

  private async countMonthShared(shared: RedisCounters, key: string, expiresAt: number, mine: number, recover: () => Promise<number>): Promise<number> {
    let theirs: number | null;
    try {
      theirs = await shared.incrIfPresent(key, expiresAt);
    } catch {
      return mine;
    }
    if (theirs !== null && theirs >= mine) return theirs;
    try {
      const accepted = await recover();
      if (theirs === null) return await shared.raiseThenIncr(key, accepted, expiresAt);
      // counted in a month another process wrote back with less than this one knows: raised to it
      await shared.raise(key, accepted + 1, expiresAt);
      return Math.max(accepted + 1, theirs);
    } catch {
      return Math.max(mine, this.local.get(key));
    }
  }

  /** What api_usage holds for a customer's month: every process's count up to its last flush. */
  private storedUsage(customer: string, month: string): Promise<number> {
    return monthlyUsage(this.sql, customer, month);
  }

  /**
   * A month Redis has lost: the requests accepted so far, api_usage plus this process's since its
   * last flush, raised into this process's count and returned for Redis. Not this process's count:
   * that holds the requests still being counted (a burst's), which each count themselves on top.
   * One read at a time per customer and month.
   */
  private recoverMonth(entry: string, key: string, customer: string, month: string, expiresAt: number): Promise<number> {
    let running = this.recovering.get(entry);
    if (!running) {
      running = (async () => {
        const accepted = (await this.storedUsage(customer, month)) + (this.unflushed.get(entry) ?? 0);
        this.local.raise(key, accepted, expiresAt);
        this.log.warn({ customer, month, requests: accepted }, "Redis had lost this month's usage: written back from api_usage");
        return accepted;
      })().finally(() => this.recovering.delete(entry));
      this.recovering.set(entry, running);
    }
    return running;
  }

  /** The current minute's month and each tier's RateLimit-Policy, worked out once a minute. */
  private window: { n: number; day: string; month: ReturnType<typeof monthOf>; policy: Map<Tier, string> } | null = null;

  private windowOf(now: number, minute: FixedWindow) {
    if (this.window?.n !== minute.n) {
      const month = monthOf(now);
      const policy = new Map<Tier, string>();
      for (const [tier, rules] of Object.entries(TIER_RULES) as [Tier, (typeof TIER_RULES)[Tier]][]) {
        const parts = [`"minute";q=${rules.perMinute};w=60`];
        if (rules.perMonth !== null) parts.push(`"month";q=${rules.perMonth};w=${Math.round((month.next - month.start) / 1000)}`);
        policy.set(tier, parts.join(', '));
      }
      this.window = { n: minute.n, day: new Date(now).toISOString().slice(0, 10), month, policy };
    }
    return this.window;
  }

  /** Counts one request of `subject`; throws 429 when over the minute's limit or the month's quota. */
  async consume(subject: LimitSubject): Promise<Decision> {
    const rules = TIER_RULES[subject.tier];
    const now = this.now();
    // the minute's window of this request (its seconds left), the month and policies cached per minute
    const minute = fixedWindow(now, MINUTE_MS);
    const { day, month, policy } = this.windowOf(now, minute);
    const used = await this.count(`${this.namespace}:minute:${subject.id}:${minute.n}`, minute.expiresAt);
    const headers = limitHeaders('minute', rules.perMinute, used, minute, 60, policy.get(subject.tier)!);
    if (used > rules.perMinute) {
      // a spent month outranks the minute: past the minute's limit its refusal still says the 1st
      if (rules.perMonth !== null && (await this.monthSpentHere(subject.id, month, rules.perMonth))) throw monthSpent(rules.perMonth, month, now, headers);
      throw new ApiError(429, 'rate_limit_exceeded', `Rate limit of ${rules.perMinute} requests per minute exceeded; retry after ${minute.secondsLeft} s.`, {
        ...headers,
        'Retry-After': String(minute.secondsLeft),
      });
    }

    if (rules.perMonth !== null) {
      const entry = `${subject.id}|${month.key}`;
      const key = `${this.namespace}:month:${subject.id}:${month.key}`;
      const expiresAt = month.next + MONTH_KEY_GRACE_MS;
      await this.restoreOnce(entry, key, subject.id, month.key, expiresAt);
      const usedThisMonth = await this.countMonth(key, expiresAt, () => this.recoverMonth(entry, key, subject.id, month.key, expiresAt));
      if (usedThisMonth > rules.perMonth) throw monthSpent(rules.perMonth, month, now, headers);
      this.unflushed.set(entry, (this.unflushed.get(entry) ?? 0) + 1);
      const monthLeft = Math.ceil((month.next - now) / 1000);
      headers['X-Quota-Limit'] = String(rules.perMonth);
      headers['X-Quota-Remaining'] = String(rules.perMonth - usedThisMonth);
      headers.RateLimit += `, "month";r=${rules.perMonth - usedThisMonth};t=${monthLeft}`;
    }
    if (subject.id.startsWith('key:')) {
      const entry = `${subject.id}|${day}`;
      this.unflushedDaily.set(entry, (this.unflushedDaily.get(entry) ?? 0) + 1);
    }
    return { headers };
  }

  /**
   * Whether this process's count of the month has reached `perMonth`, without I/O of its own: it
   * waits for the month's restore only when one is already under way or done (the minute's first
   * requests start it), so a flood past the minute, or a database that is down, adds no query.
   */
  private async monthSpentHere(customer: string, month: Month, perMonth: number): Promise<boolean> {
    const restore = this.restored.get(`${customer}|${month.key}`);
    if (restore) await restore;
    return this.local.get(`${this.namespace}:month:${customer}:${month.key}`) >= perMonth;
  }

  /**
   * Puts back the month's usage recorded in api_usage, once per customer and month in this process:
   * concurrent first requests all wait for the same restore, then count on top of it.
   */
  private restoreOnce(entry: string, key: string, customer: string, month: string, expiresAt: number): Promise<void> {
    let restore = this.restored.get(entry);
    if (!restore) {
      restore = (async () => {
        try {
          // raised, not seeded: after a restore that failed, this process has counted from 0, and
          // a seed (set only if absent) would leave the stored month out for good
          const accepted = (await this.storedUsage(customer, month)) + (this.unflushed.get(entry) ?? 0);
          this.local.raise(key, accepted, expiresAt);
          // 0 included: Redis counts a month only where it holds it (countMonth)
          await this.shared?.raise(key, accepted, expiresAt).catch(() => {});
        } catch (err) {
          this.restored.delete(entry); // try again with the next request
          this.log.warn({ err: (err as Error).message, customer }, 'monthly usage not restored; counting from here');
        }
      })();
      this.restored.set(entry, restore);
      if (this.restored.size > 100_000) this.restored.clear(); // bounded: a flood of addresses can't grow it
    }
    return restore;
  }

  /**
   * The public web endpoints (GET /v1/board, /v1/board/stream, /v1/status/public) and the
   * transparency log's (GET /v1/transparency/...): PUBLIC_PER_MINUTE requests a minute per client
   * address, and no monthly quota. They are answered from caches or a few indexed reads and cost
   * next to nothing; counting them against the address's anonymous budget (the free tier's 10 a
   * minute and 5,000 a month) would let one status page left open for a few days, or a monitor
   * checking each new head, lock its office out of free-key issuance. Returns the window's headers.
   */
  async consumePublic(address: string): Promise<Record<string, string>> {
    const minute = fixedWindow(this.now(), MINUTE_MS);
    const used = await this.count(`${this.namespace}:public:${address}:${minute.n}`, minute.expiresAt);
    if (used <= PUBLIC_PER_MINUTE) return limitHeaders('public', PUBLIC_PER_MINUTE, used, minute, 60);
    throw new ApiError(429, 'rate_limit_exceeded', `At most ${PUBLIC_PER_MINUTE} requests a minute per address to the public endpoints; retry after ${minute.secondsLeft} s.`, refusalHeaders('public', PUBLIC_PER_MINUTE, minute, 60));
  }

  /** POST /v1/auth/free-key: at most 5 an hour per client address (a fixed window on the hour). */
  async consumeIssuance(address: string): Promise<void> {
    const hour = fixedWindow(this.now(), HOUR_MS);
    const used = await this.count(`${this.namespace}:issue:${address}:${hour.n}`, hour.expiresAt);
    if (used <= FREE_KEY_ISSUES_PER_HOUR) return;
    // this window's headers, not the per-minute window's: they must agree with Retry-After
    throw new ApiError(429, 'rate_limit_exceeded', `At most ${FREE_KEY_ISSUES_PER_HOUR} free keys an hour per address; retry after ${hour.secondsLeft} s.`, refusalHeaders('issue', FREE_KEY_ISSUES_PER_HOUR, hour, 3600));
  }
}
