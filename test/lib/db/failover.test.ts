// The service follows the database (issue 33, item 2): a DATABASE_URL of several hosts is served by
// the one that accepts writes, and after a failover (the standby promoted, the old primary gone)
// the same pool writes again within 30 s; a server that stops answering without closing its
// connections (every packet dropped) is noticed and the pool's connections replaced within 30 s,
// over TLS too. Both go through openDatabase, which every process (API, pipeline, webhooks) opens
// its database with. A read replica that goes silent under a read has the primary answer it. The silent server is a proxy that stops passing bytes (test/support/tcp-proxy.ts);
// the failover runs on a primary and standby the test makes itself (TEST_PG_BIN: the directory of
// initdb, pg_ctl and pg_basebackup), never on TEST_DATABASE_URL's, which other test files share.
import postgres from 'postgres';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, postgresHosts } from '../../../lib/config.js';
import { openDatabase, type Database } from '../../../lib/db/connect.js';
import { ReadRouter } from '../../../lib/db/replicas.js';
import { within } from '../../../lib/within.js';
import { freshDatabaseUrl, openTestDatabase } from '../../support/db.js';
import { onReplica, onServers } from '../../support/replica.js';
import { pgBin, startPgPair, type PgPair } from '../../support/pg-pair.js';
import { startProxy, type SilentableProxy } from '../../support/tcp-proxy.js';
import { until } from '../../support/wait.js';

describe('DATABASE_URL of several hosts', () => {
  it('is read as libpq writes it, one URL per host with the same user, database and parameters', () => {
    const url = 'postgres://afrates:pw@db1:5433,db2,[::1]:5434/afrates?sslmode=require';
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    expect(postgresHosts(url)).toEqual(['postgres://afrates:pw@db1:5433/afrates?sslmode=require', 'postgres://afrates:pw@db2/afrates?sslmode=require', 'postgres://afrates:pw@[::1]:5434/afrates?sslmode=require']);
    expect(postgresHosts('postgres://afrates@db/afrates')).toEqual(['postgres://afrates@db/afrates']);
  });

  it('refuses an empty host and a bad port, naming which', () => {
    const refused = (url: string) => {
      try {
        loadConfig({ DATABASE_URL: url });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused('postgres://u@db1:5433,,db2/a')).toMatch(/^DATABASE_URL \(host 2\): is empty/);
    expect(refused('postgres://u@db1:5433,db2:x/a')).toMatch(/^DATABASE_URL \(host 2\): is not a URL/);
  });
});

type Line = { msg: string; where?: string; reason?: string };
const logged = () => {
  const lines: Line[] = [];
  return { lines, log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) };
};

const serverUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!serverUrl)('a database server that goes silent (needs TEST_DATABASE_URL: a server, not the embedded database)', () => {
  let fresh: { url: string; drop(): Promise<void> };
  let tls = false;
  beforeAll(async () => {
    fresh = await freshDatabaseUrl();
    const admin = postgres(fresh.url, { max: 1, onnotice: () => {} });
    tls = (await admin<{ ssl: string }[]>`SHOW ssl`)[0]!.ssl === 'on';
    await admin.end();
  });
  afterAll(() => fresh?.drop());

  for (const mode of ['plain', 'TLS'] as const) {
    it(`(${mode}) fails what ran on its connections and serves again (queries and LISTEN) on new ones within 30 s, with the same pool`, async (ctx) => {
      if (mode === 'TLS' && !tls) ctx.skip(); // the server has ssl off
      const target = new URL(fresh.url);
      const proxy: SilentableProxy = await startProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const url = new URL(fresh.url);
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      if (mode === 'TLS') url.searchParams.set('sslmode', 'require');
      const { lines, log } = logged();
      let db: Database | undefined;
      try {
        db = await openDatabase(loadConfig({ DATABASE_URL: url.href }), log, { migrate: false });
        const sql = db.sql;
        if (mode === 'TLS') expect((await sql<{ ssl: boolean }[]>`SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()`)[0]!.ssl).toBe(true);
        // a LISTEN (the live snapshot hears stored trades so): heard again on the new connections
        const heard: string[] = [];
        await sql.listen('afrates_failover', (payload) => heard.push(payload));
        expect((await sql<{ one: number }[]>`SELECT 1 AS one`)[0]!.one).toBe(1); // a connection open
        // a query under way when every packet starts being dropped: no answer, no reset, ever
        const running = sql`SELECT pg_sleep(0.5) AS slept`.then(
          () => 'answered',
          (err: { code?: string }) => err.code ?? 'failed',
        );
        proxy.silence();
        const silentAt = Date.now();
        expect(await within(30_000, running)).toBe('CONNECTION_DESTROYED');
        expect(Date.now() - silentAt).toBeLessThan(30_000);
        // the path comes back for new connections; the pool (the same object) serves on new ones
        proxy.heal();
        await until('the same pool answers again', async () => (await sql<{ one: number }[]>`SELECT 1 AS one`.catch(() => [] as { one: number }[]))[0]?.one === 1, 30_000);
        expect(Date.now() - silentAt).toBeLessThan(30_000);
        const notifier = postgres(fresh.url, { max: 1, onnotice: () => {} });
        await until('the LISTEN hears again', async () => {
          await notifier`SELECT pg_notify('afrates_failover', 'after')`;
          return heard.includes('after');
        });
        await notifier.end();
        expect(lines).toContainEqual(expect.objectContaining({ msg: 'database: connections replaced; queries running on them fail', where: `127.0.0.1:${proxy.port}${target.pathname}` }));
      } finally {
        await db?.close();
        await proxy.close();
      }
    });
  }
});

describe.skipIf(!onServers)('a read replica that goes silent (needs TEST_DATABASE_URL and TEST_DATABASE_READ_URL: a primary and its streaming replica)', () => {
  it('a read running on it is answered by the primary within seconds, and the replica is reported down', async () => {
    const db = await openTestDatabase();
    const replica = new URL(onReplica(db.url));
    const proxy = await startProxy({ host: replica.hostname, port: Number(replica.port || 5432) });
    replica.hostname = '127.0.0.1';
    replica.port = String(proxy.port);
    const router = new ReadRouter(db.sql, [replica.href], { log: pino({ level: 'silent' }), maxLagSeconds: 10, statementTimeoutMs: 10_000 });
    try {
      await router.start();
      await until('the replica serves reads', async () => {
        await router.run((sql) => sql`SELECT 1`);
        return router.states()[0]!.reads > 0;
      });
      const reads = router.states()[0]!.reads;
      const primaryReads = router.primaryReads;
      // a read on the replica when every packet to it starts being dropped
      const read = router.run((sql) => sql<{ standby: boolean }[]>`SELECT pg_is_in_recovery() AS standby, pg_sleep(0.5)`);
      proxy.silence();
      const silentAt = Date.now();
      const [row] = await within(30_000, read);
      expect(Date.now() - silentAt).toBeLessThan(30_000);
      expect(row!.standby).toBe(false); // the primary answered it
      expect(router.primaryReads).toBe(primaryReads + 1);
      expect(router.states()[0]).toMatchObject({ state: 'down', reads });
    } finally {
      await router.close();
      await proxy.close();
      await db.close();
    }
  });
});

describe.skipIf(!pgBin)('a failover (needs TEST_PG_BIN: the directory of initdb, pg_ctl and pg_basebackup, for a primary and standby of its own)', () => {
  let pair: PgPair;
  beforeAll(async () => {
    pair = await startPgPair();
  }, 120_000);
  afterAll(() => pair?.close());

  it('writes to the host that accepts writes, whichever is named first, and again within 30 s of the old primary going, on the promoted standby, without a new pool', async () => {
    // the standby named first: a connection to it would fail every write (read-only transaction)
    const { ports } = pair;
    const url = `postgres://postgres@127.0.0.1:${ports.standby},127.0.0.1:${ports.primary}/postgres`;
    const { lines, log } = logged();
    const db = await openDatabase(loadConfig({ DATABASE_URL: url }), log, { migrate: false });
    try {
      const sql = db.sql;
      await sql`CREATE TABLE written (n int PRIMARY KEY)`;
      await sql`INSERT INTO written VALUES (1)`;
      const standby = postgres(pair.url('standby'), { max: 1, onnotice: () => {} });
      await until('the standby has the first row', async () => (await standby<{ n: number }[]>`SELECT count(*)::int AS n FROM written`.catch(() => [{ n: 0 }]))[0]!.n === 1);
      await standby.end();
      // the primary gone (as a crash), the standby promoted
      await pair.crash('primary');
      const goneAt = Date.now();
      await pair.promote();
      let n = 1;
      await until(
        'the same pool writes again',
        async () => {
          try {
            await sql`INSERT INTO written VALUES (${n + 1})`;
            n++;
            return true;
          } catch {
            return false;
          }
        },
        30_000,
        100,
      );
      expect(Date.now() - goneAt).toBeLessThan(30_000);
      // it wrote to the promoted standby, which has both rows
      const promoted = postgres(pair.url('standby'), { max: 1, onnotice: () => {} });
      expect((await promoted<{ n: number }[]>`SELECT count(*)::int AS n FROM written`)[0]!.n).toBe(2);
      await promoted.end();
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'database: following the server that accepts writes; queries on the old one fail', where: `127.0.0.1:${ports.standby}/postgres` }));
    } finally {
      await db.close();
    }
  });
});
