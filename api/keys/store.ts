// API keys: `afr_live_` + 32 base62 characters. Only the SHA-256 of a key is stored or cached;
// the key itself exists once, in the response (or command output) that issues it.
// Lookups are cached for 60 s (in Redis when configured, so every API process shares it, each entry
// sealed for this deployment: RedisScope in api/redis.ts); a revoke
// clears the shared cache at once and is announced on a Redis channel, so every other process drops
// the key from its memory at once too (should Redis miss the announcement, within the 60 s).
// Keys belong to customers (sql/migrations/*_customers.sql): a customer's keys share its tier and
// limits, and the account operations (api/routes/account.ts) touch only the caller's customer.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import type postgres from 'postgres';
import type { Sql } from '../../lib/db/connect.js';
import * as q from '../queries/keys.js';
import type { KeyRecord, CustomerRecord, OwnKey } from '../queries/keys.js';
import type { Customer } from '../request.js';
import { subscriberOf, type RedisScope } from '../redis.js';
import type { Tier } from '../../lib/tiers.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PATTERN = /^afr_live_[0-9A-Za-z]{32}$/;
const CACHE_TTL_MS = 60_000;
/** last_used_at is written at most this often per key, in one batch, off the request path. */
const LAST_USED_EVERY_MS = 60_000;
/** Active keys one customer may hold (a key per environment; they share one budget). */
export const MAX_KEYS_PER_CUSTOMER = 20;

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

export const hashKey = (key: string) => crypto.hash('sha256', key, 'hex');

export interface IssueInput {
  readonly tier: Tier;
  readonly customerName?: string | null;
  readonly email?: string | null;
  readonly label?: string | null;
}

export type { CustomerRecord, KeyRecord, OwnKey } from '../queries/keys.js';

/** An account operation the customer cannot do (rendered as 404 or 409 by the route). */
export class AccountError extends Error {
  constructor(
    readonly reason: 'no_such_key' | 'last_key' | 'too_many_keys',
    message: string,
  ) {
    super(message);
  }
}

type Cached = { customer: Customer | null; until: number };
type Tx = postgres.TransactionSql;

export class KeyStore {
  private readonly memory = new Map<string, Cached>();
  /**
   * Keys revoked in the last CACHE_TTL_MS, made here or heard of: a lookup read from the database
   * before the revocation and answered after it must not put the key back in this process's cache.
   */
  private readonly revokedRecently = new Map<string, number>();
  /** key id -> when it was last used, not yet written */
  private readonly lastUsed = new Map<number, number>();
  private lastUsedTimer: NodeJS.Timeout | undefined;
  /** Hears revocations made by other processes (a subscribed connection can do nothing else). */
  private readonly revocations: Redis | null;

  constructor(
    private readonly sql: Sql,
    private readonly redis: Redis | null = null,
    private readonly now: () => number = Date.now,
    /** This deployment's part of Redis (needed with `redis`): a cached entry of another is never trusted. */
    readonly scope: RedisScope | null = null,
  ) {
    if (redis && !scope) throw new Error('a key cache in Redis needs the deployment\'s scope');
    this.revocations = redis ? subscriberOf(redis) : null;
    if (this.revocations) {
      const channel = `${scope!.prefix}:revoked`;
      this.revocations.on('error', () => undefined); // the shared connection reports Redis trouble
      this.revocations.on('ready', () => void this.revocations!.subscribe(channel).catch(() => undefined));
      this.revocations.on('message', (from: string, keyHash: string) => {
        if (from === channel) this.heardRevoked(keyHash);
      });
    }
  }

  /**
   * Issues a key for a new customer, or, for a free key with an email, for that email's free
   * customer when none of its keys is active (usage stays with the customer). An email whose free
   * customer has an active key is refused with SQLSTATE 23505 (409 conflict over HTTP), as the
   * unique index would refuse two concurrent issues.
   */
  async issue(input: IssueInput): Promise<{ apiKey: string; record: KeyRecord }> {
    return this.sql.begin(async (tx) => {
      if (input.tier === 'free' && input.email) {
        const existing = await q.lockFreeCustomerByEmail(tx, input.email);
        if (existing && existing.active > 0) throw Object.assign(new Error('this email already has an active free key'), { code: '23505' });
        if (existing) return this.insertKey(tx, Number(existing.id), input.label ?? null);
      }
      // the customer's id is its first key's id (see the migration)
      const id = await q.insertCustomer(tx, { tier: input.tier, name: input.customerName ?? null, email: input.email ?? null });
      return this.insertKey(tx, id, input.label ?? null, id);
    });
  }

  /** A new key of `customerId`, with its tier, name and email; `id` forces the key's id. */
  private async insertKey(tx: Tx, customerId: number, label: string | null, id?: number): Promise<{ apiKey: string; record: KeyRecord }> {
    const apiKey = generateKey();
    const record = await q.insertKey(tx, { customerId, keyHash: hashKey(apiKey), prefix: apiKey.slice(0, 13), label, id });
    return { apiKey, record };
  }

  /** An active key of the email's free customer, if any (one free customer per email). */
  activeFreeKey(email: string): Promise<KeyRecord | null> {
    return q.activeFreeKey(this.sql, email);
  }

  async list(): Promise<KeyRecord[]> {
    return q.allKeys(this.sql);
  }

  async revoke(id: number): Promise<KeyRecord | null> {
    const row = await q.revokeKey(this.sql, id);
    if (!row) return null;
    await this.forget(row.key_hash);
    const { key_hash: _hash, customer_id: _c, label: _l, ...record } = row;
    return record;
  }

  /**
   * Drops a revoked key from this process's cache, marks it revoked in the shared one, and tells the
   * other processes. Marked, not deleted: a lookup another process read from the database before
   * the revocation fills the shared cache only where it is empty, so it cannot put the key back.
   */
  private async forget(keyHash: string): Promise<void> {
    this.heardRevoked(keyHash);
    if (!this.redis || !this.scope) return;
    const redisKey = `${this.scope.prefix}:key:${keyHash}`;
    await this.redis.set(redisKey, this.scope.seal(redisKey, 'null'), 'PX', CACHE_TTL_MS).catch(() => undefined);
    await this.redis.publish(`${this.scope.prefix}:revoked`, keyHash).catch(() => undefined);
  }

  private heardRevoked(keyHash: string): void {
    const now = this.now();
    this.memory.delete(keyHash);
    if (this.revokedRecently.size > 10_000) for (const [hash, until] of this.revokedRecently) if (until <= now) this.revokedRecently.delete(hash);
    this.revokedRecently.set(keyHash, now + CACHE_TTL_MS);
  }

  /**
   * Revokes a key and issues its replacement for the same customer and label, in one transaction:
   * whatever happens, the customer ends with exactly one of the two active. Concurrent rotations of
   * one key queue on its row; the first wins, the others find it revoked (null).
   */
  async rotate(id: number, customerId?: number): Promise<{ apiKey: string; record: KeyRecord; replaced: KeyRecord } | null> {
    const result = await this.sql.begin(async (tx) => {
      const old = await q.revokeKey(tx, id, customerId ?? null);
      if (!old) return null;
      const issued = await this.insertKey(tx, Number(old.customer_id), old.label);
      return { ...issued, old };
    });
    if (!result) return null;
    // after the commit: a cache filled from the database before it could otherwise keep the old key
    await this.forget(result.old.key_hash);
    const { key_hash: _h, customer_id: _c, label: _l, ...replaced } = result.old;
    return { apiKey: result.apiKey, record: result.record, replaced };
  }

  customer(customerId: number): Promise<CustomerRecord | null> {
    return q.customer(this.sql, customerId);
  }

  /** A customer's active keys, oldest first. */
  async keysOf(customerId: number): Promise<OwnKey[]> {
    return q.keysOf(this.sql, customerId);
  }

  /** A new key for a customer (its tier: a customer never chooses one), at most MAX_KEYS_PER_CUSTOMER active. */
  async createFor(customerId: number, label: string | null): Promise<{ apiKey: string; record: KeyRecord }> {
    return this.sql.begin(async (tx) => {
      await this.lockCustomer(tx, customerId);
      if ((await q.keysOf(tx, customerId)).length >= MAX_KEYS_PER_CUSTOMER) throw new AccountError('too_many_keys', `At most ${MAX_KEYS_PER_CUSTOMER} active keys per account; revoke one first.`);
      return this.insertKey(tx, customerId, label);
    });
  }

  /**
   * Revokes one of a customer's keys; never its last active key (the account would be locked out
   * for good: rotate it instead). The customer's row is locked, so two revokes at once can't both
   * pass the check.
   */
  async revokeOwn(customerId: number, keyId: number): Promise<KeyRecord> {
    const row = await this.sql.begin(async (tx) => {
      await this.lockCustomer(tx, customerId);
      const keys = await q.keysOf(tx, customerId);
      if (!keys.some((k) => k.id === keyId)) throw new AccountError('no_such_key', `No active key ${keyId} in this account.`);
      if (keys.length === 1) throw new AccountError('last_key', 'This is the account\'s last active key: rotate it instead of revoking it.');
      return (await q.revokeKey(tx, keyId, customerId))!;
    });
    await this.forget(row.key_hash);
    const { key_hash: _hash, customer_id: _c, label: _l, ...record } = row;
    return record;
  }

  private async lockCustomer(tx: Tx, customerId: number): Promise<void> {
    if (!(await q.lockCustomer(tx, customerId))) throw new AccountError('no_such_key', 'No such account.');
  }

  /**
   * Remembers that a key was used; written to last_used_at in one batch at most once a minute
   * (a dashboard figure, not worth a write on every request).
   */
  private noteUse(keyId: number): void {
    const now = this.now();
    this.lastUsed.set(keyId, now);
    if (!this.lastUsedTimer) {
      this.lastUsedTimer = setTimeout(() => {
        this.lastUsedTimer = undefined;
        void this.flushLastUsed();
      }, LAST_USED_EVERY_MS);
      this.lastUsedTimer.unref();
    }
  }

  /** Writes the noted uses (also at close). */
  async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const uses = [...this.lastUsed].map(([id, at]) => ({ id, t: new Date(at).toISOString() }));
    this.lastUsed.clear();
    await q.noteLastUsed(this.sql, uses).catch(() => undefined); // a dashboard figure: a lost write is not worth an error
  }

  async close(): Promise<void> {
    clearTimeout(this.lastUsedTimer);
    this.lastUsedTimer = undefined;
    this.revocations?.disconnect();
    await this.flushLastUsed();
  }

  /** The customer a key belongs to, or null for an unknown or revoked key. */
  authenticate(apiKey: string): Customer | null | Promise<Customer | null> {
    if (!KEY_PATTERN.test(apiKey)) return null;
    const hash = hashKey(apiKey);
    const now = this.now();
    const hit = this.memory.get(hash);
    if (hit && hit.until > now) {
      if (hit.customer?.keyId !== undefined) this.noteUse(hit.customer.keyId);
      return hit.customer; // no promise: most requests end here
    }
    return this.lookUp(hash, now);
  }

  private async lookUp(hash: string, now: number): Promise<Customer | null> {
    let customer: Customer | null | undefined;
    const redisKey = `${this.scope?.prefix}:key:${hash}`;
    if (this.redis && this.scope) {
      // Redis down: the database answers instead; so does an entry this deployment did not seal
      const stored = await this.redis.get(redisKey).catch(() => null);
      const shared = stored === null ? null : this.scope.open(redisKey, stored);
      if (shared !== null) customer = JSON.parse(shared) as Customer | null;
    }
    if (customer === undefined) {
      const row = await q.customerOfKey(this.sql, hash);
      customer = row ? { id: `key:${row.customer_id}`, tier: row.tier, name: row.name, keyId: Number(row.key_id), customerId: Number(row.customer_id) } : null;
      if (this.scope) await this.redis?.set(redisKey, this.scope.seal(redisKey, JSON.stringify(customer)), 'PX', CACHE_TTL_MS, 'NX').catch(() => undefined);
    }
    // revoked while this was read: refused, and not cached
    if (customer && (this.revokedRecently.get(hash) ?? 0) > this.now()) return null;
    this.memory.set(hash, { customer, until: now + CACHE_TTL_MS });
    if (this.memory.size > 100_000) this.memory.clear(); // bounded: a flood of random keys can't grow it
    if (customer?.keyId !== undefined) this.noteUse(customer.keyId);
    return customer;
  }
}
