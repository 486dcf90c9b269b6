// Counters with an expiry: in this process's memory, and in Redis (shared by every API process).
// Both count atomically (a synchronous Map update; Redis INCR), so concurrent requests can never
// be counted as one. Expiry is a timestamp checked on read and swept now and then, never a timer:
// a month-long window does not fit in a Node timer (2^31 ms is under 25 days).
import type { Redis } from 'ioredis';

export class MemoryCounters {
  private readonly counts = new Map<string, { n: number; expiresAt: number }>();
  private sweptAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Adds `by` to `key` (created expiring at `expiresAt`, ms) and returns the new count. */
  incr(key: string, expiresAt: number, by = 1): number {
    const now = this.now();
    this.sweep(now);
    const entry = this.counts.get(key);
    if (!entry || entry.expiresAt <= now) {
      this.counts.set(key, { n: by, expiresAt });
      return by;
    }
    entry.n += by;
    return entry.n;
  }

  /** The count of `key` (0 when absent or expired). */
  get(key: string): number {
    const entry = this.counts.get(key);
    return entry && entry.expiresAt > this.now() ? entry.n : 0;
  }

  /** Raises `key` to `value` when it holds less; returns the count. */
  raise(key: string, value: number, expiresAt: number): number {
    const n = this.get(key);
    if (n >= value) return n;
    this.counts.set(key, { n: value, expiresAt });
    return value;
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000 && this.counts.size < 100_000) return;
    this.sweptAt = now;
    for (const [key, entry] of this.counts) if (entry.expiresAt <= now) this.counts.delete(key);
  }
}

export class RedisCounters {
  constructor(
    private readonly redis: Redis,
    private readonly now: () => number = Date.now,
  ) {}

  /** Time to live in ms: relative, so that Redis's clock never has to agree with ours. */
  private ttl(expiresAt: number): number {
    return Math.max(1_000, Math.ceil(expiresAt - this.now()));
  }

  /** Adds `by` to `key` (expiring at `expiresAt`, ms) and returns the new count; rejects when Redis is unreachable. */
  async incr(key: string, expiresAt: number, by = 1): Promise<number> {
    const replies = await this.redis.multi().incrby(key, by).pexpire(key, this.ttl(expiresAt)).exec();
    const [err, count] = replies?.[0] ?? [new Error('no reply from Redis'), null];
    if (err) throw err;
    return Number(count);
  }

  /** Adds 1 to `key` if Redis holds it, and returns the new count; null when it does not. */
  async incrIfPresent(key: string, expiresAt: number): Promise<number | null> {
    const n = Number(await this.redis.eval(INCR_IF_PRESENT, 1, key, this.ttl(expiresAt)));
    return n < 0 ? null : n;
  }

  /**
   * Raises `key` to `value` when it holds less, or is absent, in one step: however many callers
   * raise it at once, the count ends at the largest value, never at their sum.
   */
  async raise(key: string, value: number, expiresAt: number): Promise<void> {
    await this.redis.eval(RAISE_THEN_ADD, 1, key, value, 0, this.ttl(expiresAt));
  }

  /** Raises `key` to `value` as raise() does, then adds 1, in one step; returns the count. */
  async raiseThenIncr(key: string, value: number, expiresAt: number): Promise<number> {
    return Number(await this.redis.eval(RAISE_THEN_ADD, 1, key, value, 1, this.ttl(expiresAt)));
  }
}

const INCR_IF_PRESENT = `if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n`;

const RAISE_THEN_ADD = `local n = tonumber(redis.call('GET', KEYS[1]) or '-1')
local target = math.max(n, tonumber(ARGV[1])) + tonumber(ARGV[2])
if target ~= n then redis.call('SET', KEYS[1], target, 'PX', ARGV[3]) end
return target`;
