// Keys at rest and in the cache: only hashes stored, the 60-second cache, revocation seen by the
// revoking process at once and by every other process within 60 seconds (at once with Redis).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { generateKey, hashKey, KEY_PATTERN, KeyStore } from '../../api/keys/store.js';
import { scopeOf } from '../../api/redis.js';
import { deploymentSecret } from '../../lib/db/deployment.js';
import { openTestDatabase } from '../support/db.js';
import { until } from '../support/wait.js';

let db: Database;
let clock = 1_000_000;
const now = () => clock;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe('keys', () => {
  it('look like afr_live_ + 32 base62 characters and are stored only as SHA-256', async () => {
    const keys = new Set(Array.from({ length: 200 }, generateKey));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(KEY_PATTERN);
    const store = new KeyStore(db.sql);
    const { apiKey } = await store.issue({ tier: 'builder', customerName: 'Hash Co' });
    const rows = await db.sql`SELECT * FROM api_keys WHERE customer_name = 'Hash Co'`;
    expect(rows[0]!.key_hash).toBe(hashKey(apiKey));
    expect(JSON.stringify(rows)).not.toContain(apiKey.slice(9));
  });

  it('a revoke is refused at once where it happened, and by other processes within 60 s', async () => {
    const here = new KeyStore(db.sql, null, now);
    const elsewhere = new KeyStore(db.sql, null, now);
    const { apiKey, record } = await here.issue({ tier: 'professional' });
    expect(await here.authenticate(apiKey)).toMatchObject({ tier: 'professional' });
    expect(await elsewhere.authenticate(apiKey)).toMatchObject({ tier: 'professional' });
    await here.revoke(record.id);
    expect(await here.authenticate(apiKey)).toBeNull();
    clock += 59_000;
    expect(await elsewhere.authenticate(apiKey)).not.toBeNull(); // cached, as the contract allows
    clock += 2_000;
    expect(await elsewhere.authenticate(apiKey)).toBeNull();
  });

  it('with Redis, a revoke is refused at once by every process: the shared cache cleared, the others told', async () => {
    const redis = new Redis('redis://127.0.0.1:6379');
    const scope = scopeOf(await deploymentSecret(db.sql), `keys-${process.pid}-${Date.now()}`);
    const ns = scope.prefix;
    const a = new KeyStore(db.sql, redis, now, scope);
    const otherRedis = new Redis('redis://127.0.0.1:6379');
    const elsewhere = new KeyStore(db.sql, otherRedis, now, scope); // another process
    try {
      const { apiKey, record } = await a.issue({ tier: 'builder' });
      expect(await a.authenticate(apiKey)).not.toBeNull();
      expect(await elsewhere.authenticate(apiKey)).not.toBeNull(); // now in its memory for 60 s
      expect(await redis.exists(`${ns}:key:${hashKey(apiKey)}`)).toBe(1);
      await until('both listening', async () => (await redis.pubsub('NUMSUB', `${ns}:revoked`))[1] === 2, 2_000);
      await a.revoke(record.id);
      expect(scope.open(`${ns}:key:${hashKey(apiKey)}`, (await redis.get(`${ns}:key:${hashKey(apiKey)}`))!)).toBe('null'); // marked revoked
      const fresh = new KeyStore(db.sql, redis, now, scope); // a third, cold cache
      expect(await fresh.authenticate(apiKey)).toBeNull();
      await fresh.close();
      // the clock stands still: only the announcement can have dropped it from the other's memory
      await until('the other process dropped the key', async () => (await elsewhere.authenticate(apiKey)) === null, 2_000);
    } finally {
      await a.close();
      await elsewhere.close();
      redis.disconnect();
      otherRedis.disconnect();
    }
  });

  it('with Redis, a lookup read before a revoke and answered after it puts the key back in no cache', async () => {
    // Another process read the key as active from the database; the revoke then cleared the
    // caches and told everyone; the lookup's answer came in after and cached the key as active,
    // in Redis and in that process's memory: every process took the revoked key for 60 s more.
    const redis = new Redis('redis://127.0.0.1:6379');
    const otherRedis = new Redis('redis://127.0.0.1:6379');
    const scope = scopeOf(await deploymentSecret(db.sql), `keys-race-${process.pid}-${Date.now()}`);
    const ns = scope.prefix;
    let gate: Promise<void> | null = null;
    let release = () => {};
    let answered = () => {};
    const slow = new Proxy(db.sql, {
      apply(target, self, [strings, ...values]: [TemplateStringsArray, ...unknown[]]) {
        const query = (target as unknown as (s: TemplateStringsArray, ...v: unknown[]) => Promise<unknown>)(strings, ...values);
        // the key lookup's answer arrives late (a busy database, a pause)
        if (gate && strings.join('?').includes('k.key_hash =')) return query.then(async (rows) => (answered(), await gate, rows));
        return query;
      },
    });
    const a = new KeyStore(db.sql, redis, now, scope);
    const b = new KeyStore(slow, otherRedis, now, scope); // another process
    try {
      await until('both listening', async () => (await redis.pubsub('NUMSUB', `${ns}:revoked`))[1] === 2, 2_000);
      const { apiKey, record } = await a.issue({ tier: 'builder' });
      gate = new Promise<void>((r) => (release = r));
      const read = new Promise<void>((r) => (answered = r));
      const inFlight = b.authenticate(apiKey); // read as active, answer held back
      await read;
      await a.revoke(record.id);
      // the announcement heard: b's subscribed connection tells nobody when it hears one, so this
      // waits long enough for a message over loopback
      await new Promise((r) => setTimeout(r, 200));
      release();
      await inFlight;
      const fresh = new KeyStore(db.sql, redis, now, scope); // a third process, a cold cache: reads Redis
      expect(await fresh.authenticate(apiKey)).toBeNull();
      await fresh.close();
      expect(await b.authenticate(apiKey)).toBeNull(); // and not in the late process's memory
    } finally {
      await a.close();
      await b.close();
      redis.disconnect();
      otherRedis.disconnect();
    }
  });

  it('an unknown key is cached as unknown but never grows the cache without bound', async () => {
    const store = new KeyStore(db.sql, null, now);
    expect(await store.authenticate('afr_live_' + '0'.repeat(32))).toBeNull();
    expect(await store.authenticate('not-a-key')).toBeNull();
  });
});

