// API keys: `afr_live_` + 32 base62 characters. Only the SHA-256 of a key is stored or cached;
// the key itself exists once, in the response (or command output) that issues it.
// Lookups are cached for 60 s (in Redis when configured, so every API process shares it); a revoke
// clears the shared cache at once, and other processes' in-memory caches within 60 s.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Sql } from '../../lib/db/connect.js';
import type { Customer } from '../context.js';
import type { Tier } from '../tiers.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PATTERN = /^afr_live_[0-9A-Za-z]{32}$/;
const CACHE_TTL_MS = 60_000;

export function generateKey(): string {
  // rejection sampling keeps every character uniformly likely
  let out = '';
  while (out.length < 32) {
    for (const byte of crypto.randomBytes(48)) {
      if (byte < 248 && out.length < 32) out += BASE62[byte % 62];
    }
  }
  return `afr_live_${out}`;
}

export const hashKey = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

export interface KeyRecord {
  readonly id: number;
  readonly prefix: string;
  readonly tier: Tier;
  readonly customer_name: string | null;
  readonly email: string | null;
  readonly created_at: Date;
  readonly revoked_at: Date | null;
}

export interface IssueInput {
  readonly tier: Tier;
  readonly customerName?: string | null;
  readonly email?: string | null;
}

type Cached = { customer: Customer | null; until: number };

export class KeyStore {
  private readonly memory = new Map<string, Cached>();

  constructor(
    private readonly sql: Sql,
    private readonly redis: Redis | null = null,
    private readonly now: () => number = Date.now,
    private readonly namespace = 'afrates',
  ) {}

  async issue(input: IssueInput): Promise<{ apiKey: string; record: KeyRecord }> {
    const apiKey = generateKey();
    const [record] = await this.sql<KeyRecord[]>`
      INSERT INTO api_keys (key_hash, key_prefix, tier, customer_name, email)
      VALUES (${hashKey(apiKey)}, ${apiKey.slice(0, 13)}, ${input.tier}, ${input.customerName ?? null}, ${input.email ?? null})
      RETURNING id, key_prefix AS prefix, tier, customer_name, email, created_at, revoked_at`;
    return { apiKey, record: record! };
  }

  /** The active free key of an email, if any (one per email). */
  async activeFreeKey(email: string): Promise<KeyRecord | null> {
    const [row] = await this.sql<KeyRecord[]>`
      SELECT id, key_prefix AS prefix, tier, customer_name, email, created_at, revoked_at FROM api_keys
      WHERE lower(email) = lower(${email}) AND tier = 'free' AND revoked_at IS NULL`;
    return row ?? null;
  }

  async list(): Promise<KeyRecord[]> {
    return this.sql<KeyRecord[]>`
      SELECT id, key_prefix AS prefix, tier, customer_name, email, created_at, revoked_at
      FROM api_keys ORDER BY id`;
  }

  async revoke(id: number): Promise<KeyRecord | null> {
    const [row] = await this.sql<(KeyRecord & { key_hash: string })[]>`
      UPDATE api_keys SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL
      RETURNING id, key_hash, key_prefix AS prefix, tier, customer_name, email, created_at, revoked_at`;
    if (!row) return null;
    this.memory.delete(row.key_hash);
    await this.redis?.del(`${this.namespace}:key:${row.key_hash}`).catch(() => undefined); // other processes: within 60 s
    const { key_hash: _hash, ...record } = row;
    return record;
  }

  /** Revokes a key and issues its replacement with the same tier, name and email. */
  async rotate(id: number): Promise<{ apiKey: string; record: KeyRecord } | null> {
    const old = await this.revoke(id);
    if (!old) return null;
    return this.issue({ tier: old.tier, customerName: old.customer_name, email: old.email });
  }

  /** The customer a key belongs to, or null for an unknown or revoked key. */
  async authenticate(apiKey: string): Promise<Customer | null> {
    if (!KEY_PATTERN.test(apiKey)) return null;
    const hash = hashKey(apiKey);
    const now = this.now();
    const hit = this.memory.get(hash);
    if (hit && hit.until > now) return hit.customer;

    let customer: Customer | null | undefined;
    const redisKey = `${this.namespace}:key:${hash}`;
    if (this.redis) {
      // Redis down: the database answers instead
      const shared = await this.redis.get(redisKey).catch(() => null);
      if (shared !== null) customer = JSON.parse(shared) as Customer | null;
    }
    if (customer === undefined) {
      const [row] = await this.sql<{ id: string; tier: Tier; customer_name: string | null }[]>`
        SELECT id::text, tier, customer_name FROM api_keys WHERE key_hash = ${hash} AND revoked_at IS NULL`;
      customer = row ? { id: `key:${row.id}`, tier: row.tier, name: row.customer_name } : null;
      await this.redis?.set(redisKey, JSON.stringify(customer), 'PX', CACHE_TTL_MS).catch(() => undefined);
    }
    this.memory.set(hash, { customer, until: now + CACHE_TTL_MS });
    if (this.memory.size > 100_000) this.memory.clear(); // bounded: a flood of random keys can't grow it
    return customer;
  }
}
