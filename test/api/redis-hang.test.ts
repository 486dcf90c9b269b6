// Redis that stops answering (paused, failing over, a dropped link) rather than refusing
// connections. Every keyed request waited for its 15 s deadline and answered 503; the service
// must fall back as it does when Redis is down: limits in memory, keys from the database.
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KeyStore } from '../../api/keys/store.js';
import { connectRedis } from '../../api/redis.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testLog } from '../support/db.js';
import { startRedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

const PORT = 20_000 + Math.floor(Math.random() * 10_000);
let redis: ChildProcess;
let link: Link;
let t: TestApi;

/**
 * The network between the API and Redis. `cut()` black-holes every connection made so far, for
 * good, as a failover or a dead link leaves them: nothing passes, nothing is closed. Connections
 * made afterwards pass again.
 */
interface Link {
  readonly port: number;
  cut(): void;
  close(): void;
}

async function startLink(to: number): Promise<Link> {
  let live = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(to, '127.0.0.1');
    const pair = new Set([client, upstream]);
    client.on('data', (d) => pair.has(client) && upstream.write(d));
    upstream.on('data', (d) => pair.has(upstream) && client.write(d));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    live.add(client).add(upstream);
    // cut: the pair forwards nothing more (the Set is emptied), and is never closed
    server.once('cut', () => pair.clear());
  });
  server.setMaxListeners(0);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      server.emit('cut');
      live = new Set();
    },
    close: () => server.close(),
  };
}

beforeAll(async () => {
  redis = await startRedisServer(PORT);
  link = await startLink(PORT);
  t = await startTestApi({ redisUrl: `redis://127.0.0.1:${link.port}` });
});
afterAll(async () => {
  redis?.kill('SIGCONT');
  redis?.kill('SIGKILL');
  link?.close();
  await t?.close();
});

/** What health says of Redis, once it says `want` (or after 10 s). */
async function redisInHealth(want: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  let seen = (await t.get('/v1/health')).body.services.redis;
  while (seen !== want && Date.now() < deadline) {
    await t.healthReadingExpired(); // asked again within its second, health repeats its reading
    seen = (await t.get('/v1/health')).body.services.redis;
  }
  return seen;
}

describe('a Redis that hangs', () => {
  it('leaves requests answered within two seconds (not the 15 s deadline), and health saying so', async () => {
    expect((await t.get('/v1/rates/live?pairs=BTCNGN', t.keys.builder)).status).toBe(200);
    const fresh = await t.key('builder'); // in no cache yet: looked up in the database
    redis.kill('SIGSTOP');
    try {
      for (const [path, key] of [['/v1/rates/live?pairs=BTCNGN', t.keys.builder], ['/v1/rates/live?pairs=BTCNGN', fresh], ['/v1/board', undefined]] as const) {
        const started = Date.now();
        const res = await t.get(path, key);
        expect(res.status, path).toBe(200);
        expect(Date.now() - started, path).toBeLessThan(2_000);
      }
      const health = await t.get('/v1/health');
      expect(health.body.services.redis).toBe('error');
    } finally {
      redis.kill('SIGCONT');
    }
  });

  it('costs its timeout now and then, not on every request, and is used again once it answers', async () => {
    const live = '/v1/rates/live?pairs=BTCNGN';
    const enterprises = [t.keys.enterprise, await t.key('enterprise'), await t.key('enterprise'), await t.key('enterprise')];
    const probe = new Redis(`redis://127.0.0.1:${PORT}`);
    const minuteCounts = async () => {
      const keys = await probe.keys(`${t.namespace}:minute:*`);
      return keys.length ? (await probe.mget(keys)).reduce((n, v) => n + Number(v), 0) : 0;
    };
    try {
      expect(await redisInHealth('ok')).toBe('ok');
      redis.kill('SIGSTOP');
      try {
        // A professional key counts a minute and a month: two commands of 250 ms each per request
        // while every command waits for its timeout, 10 s for these 20.
        const started = Date.now();
        for (let i = 0; i < 20; i++) expect((await t.get(live, t.keys.professional)).status).toBe(200);
        // four customers, each within its share of requests in flight (lib/tiers.ts: Enterprise 8)
        const together = await Promise.all(Array.from({ length: 30 }, (_, i) => t.get(live, enterprises[i % 4])));
        expect(together.map((r) => r.status)).toEqual(Array(30).fill(200));
        expect(Date.now() - started).toBeLessThan(3_000);
      } finally {
        redis.kill('SIGCONT');
      }
      await t.healthReadingExpired(); // health's reading from before the hang has gone
      expect(await redisInHealth('ok')).toBe('ok');
      // counted in Redis again: a new key's requests (nothing of it to write back) reach it one by one
      const fresh = await t.key('professional');
      const before = await minuteCounts();
      for (let i = 0; i < 3; i++) expect((await t.get(live, fresh)).status).toBe(200);
      expect(await minuteCounts()).toBe(before + 3);
    } finally {
      probe.disconnect();
    }
  });

  it('is used again after a failover that leaves the old connection dead and open', async () => {
    const live = '/v1/rates/live?pairs=BTCNGN';
    expect(await redisInHealth('ok')).toBe('ok');
    link.cut();
    const started = Date.now();
    for (let i = 0; i < 10; i++) expect((await t.get(live, t.keys.professional)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    // the client must not wait for the dead connection to close (TCP can take many minutes): a new
    // one reaches Redis
    await t.healthReadingExpired();
    expect(await redisInHealth('ok')).toBe('ok');
  });

  it('keeps its connection when a reply is only read late (a busy event loop, not a hung Redis)', async () => {
    // straight to the server (this process's link would be as busy as the loop it forwards for)
    const redis = connectRedis(`redis://127.0.0.1:${PORT}`, testLog);
    await new Promise((r) => redis.once('ready', r));
    let closed = 0;
    const onClose = () => closed++;
    redis.on('close', onClose);
    try {
      const ping = redis.ping();
      const until = Date.now() + 400;
      while (Date.now() < until); // busy past the command's 250 ms while its reply arrives
      await expect(ping).rejects.toThrow('Command timed out');
      // nothing must happen: a connection found hung is dropped on the turn after its timeout, so
      // 200 ms without a close is well past the moment it would have been
      await new Promise((r) => setTimeout(r, 200));
      expect(closed).toBe(0);
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it('hears revocations made by other processes again after a failover', async () => {
    // another API process: its own connections to Redis (named, to find them in CLIENT LIST), its own cache of keys
    const elsewhereRedis = connectRedis(`redis://127.0.0.1:${link.port}?connectionName=elsewhere`, testLog);
    // its subscribed connection pings on a timer (every 5 s) to notice a hang: faked, moved below
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const elsewhere = new KeyStore(t.db.sql, elsewhereRedis, Date.now, t.api.deps.keys.scope);
    const probe = new Redis(`redis://127.0.0.1:${PORT}`); // straight to the server, past the link
    // the ids of the other's subscribed connections, as the server sees them
    const subscribedElsewhere = async () =>
      ((await probe.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string)
        .split('\n')
        .filter((c) => / name=elsewhere /.test(c) && / sub=1 /.test(c))
        .map((c) => /^id=(\d+) /.exec(c)![1]!);
    let subscribed: string[] = [];
    try {
      const key = await t.key('builder');
      expect(await elsewhere.authenticate(key)).toMatchObject({ tier: 'builder' }); // cached there now
      await until('the other process subscribed', async () => (subscribed = await subscribedElsewhere()).length === 1);
      link.cut();
      // this process's connection finds the failover with its next command and reconnects
      expect((await t.get('/v1/rates/live?pairs=BTCNGN', key)).status).toBe(200);
      await t.healthReadingExpired();
      expect(await redisInHealth('ok')).toBe('ok');
      // the other's subscribed connection sends nothing: it must find out too, by its next ping,
      // and subscribe again on a new connection
      vi.advanceTimersByTime(5_000);
      await until('the other process subscribed again', async () => (await subscribedElsewhere()).some((id) => !subscribed.includes(id)), 10_000);
      const [row] = await t.db.sql<{ id: number }[]>`SELECT id::int FROM api_keys WHERE key_prefix = ${key.slice(0, 13)}`;
      await t.api.deps.keys.revoke(row!.id);
      // announced: dropped from the other's cache at once, not after its 60 s
      await expect.poll(() => elsewhere.authenticate(key), { timeout: 2_000 }).toBeNull();
    } finally {
      vi.useRealTimers();
      probe.disconnect();
      await elsewhere.close();
      elsewhereRedis.disconnect();
    }
  }, 30_000);
});
