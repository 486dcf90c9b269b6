// The read router without a replica server (runs everywhere): WAL positions compare as the server
// orders them, DATABASE_READ_URL is read and refused as an operator would need, and a replica
// nobody answers at (refusing connections, or accepting them and staying silent) is skipped with
// one log line while every read is answered by the primary.
// test/api/replicas.test.ts runs it on a real primary and streaming replica.
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../lib/config.js';
import type { Database } from '../../../lib/db/connect.js';
import { openReadRouter, ReadRouter, recordEnd, walPosition } from '../../../lib/db/replicas.js';
import { openTestDatabase } from '../../support/db.js';
import { within } from '../../../lib/within.js';
import { startProxy } from '../../support/tcp-proxy.js';
import { until } from '../../support/wait.js';

describe('WAL positions', () => {
  it('compare as the server orders them: the high 32 bits first, then the low', () => {
    const ordered = ['0/0', '0/3F597B8', '0/FFFFFFFF', '1/0', '1/1', '16/B374D848', 'FFFFFFFF/FFFFFFFF'];
    const positions = ordered.map(walPosition);
    expect([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(positions);
    expect(walPosition('16/B374D848')).toBe(0x16b374d848n);
  });

  it('refuses what is not one', () => {
    for (const bad of ['', '0', '0/', '/1', 'x/1', '1/2/3', '123456789/0']) expect(() => walPosition(bad)).toThrow(/not a WAL position/);
  });

  it("as a fence, stand where the last record ended: an insert position just past a page's header is the page's start", () => {
    // 8 KB pages, 16 MB segments: 0/3000000 starts a segment (long header, 40 bytes)
    expect(recordEnd('0/3000028', 40, 8192)).toBe('0/3000000');
    expect(recordEnd('0/3002018', 0x2018, 8192)).toBe('0/3002000'); // a later page (short header, 24 bytes)
    expect(recordEnd('1/2018', 0x2018, 8192)).toBe('1/2000'); // across the low word's carry
    expect(recordEnd('0/3002060', 0x2060, 8192)).toBe('0/3002060'); // mid-page: as inserted
    expect(recordEnd('16/B374D848', 0x74d848, 8192)).toBe('16/B374D848');
  });
});

describe('DATABASE_READ_URL', () => {
  const primary = 'postgres://afrates:pw@db:5432/afrates';

  it('takes one or more replica URLs, comma-separated, and a lag limit (10 s unless set)', () => {
    expect(loadConfig({ DATABASE_URL: primary })).toMatchObject({ databaseReadUrls: [], readMaxLagSeconds: 10 });
    const config = loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: ' postgres://afrates:pw@r1:5432/afrates, postgresql://afrates:pw@r2/afrates', DATABASE_READ_MAX_LAG_SECONDS: '30' });
    expect(config.databaseReadUrls).toEqual(['postgres://afrates:pw@r1:5432/afrates', 'postgresql://afrates:pw@r2/afrates']);
    expect(config.readMaxLagSeconds).toBe(30);
  });

  it('refuses replicas without DATABASE_URL, a URL that is not postgres, an empty entry, and a lag limit out of range', () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({ DATABASE_READ_URL: 'postgres://r1/afrates' })).toMatch(/^DATABASE_READ_URL: needs DATABASE_URL/);
    expect(refused({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://r1/a,http://r2/a' })).toMatch(/^DATABASE_READ_URL \(URL 2\): must start with postgres:/);
    expect(refused({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://r1/a,,postgres://r2/a' })).toMatch(/^DATABASE_READ_URL \(URL 2\): is empty/);
    expect(refused({ DATABASE_URL: primary, DATABASE_READ_MAX_LAG_SECONDS: '0' })).toMatch(/^DATABASE_READ_MAX_LAG_SECONDS: must be an integer from 1 to 3600/);
  });
});

describe('a replica nobody answers at', () => {
  let db: Database;
  let closedPort: number;
  beforeAll(async () => {
    db = await openTestDatabase();
    // a port that was just free: connections to it are refused
    const server = net.createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    closedPort = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
  });
  afterAll(() => db?.close());

  it('is skipped with one log line while the primary answers every read, and is reported down', async () => {
    const lines: { msg: string; replica?: string; where?: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const router = new ReadRouter(db.sql, [`postgres://afrates:secret@127.0.0.1:${closedPort}/afrates`], { log, maxLagSeconds: 10, statementTimeoutMs: 10_000, probeEveryMs: 50 });
    await router.start();
    try {
      expect(router.hasReplicas).toBe(true);
      expect(router.states()).toEqual([{ name: 'replica1', state: 'down', lagSeconds: null, reads: 0 }]);
      for (let i = 0; i < 20; i++) {
        const [row] = await router.run((sql) => sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pairs`);
        expect(row!.n).toBeGreaterThan(0);
      }
      expect(router.primaryReads).toBe(20);
      // probes go on failing: still the one line, which names where (never the password)
      const rounds = router.probeRounds;
      await until('five more probe rounds', () => router.probeRounds >= rounds + 5);
      expect(lines.filter((l) => l.msg.startsWith('read replica'))).toEqual([
        expect.objectContaining({ msg: 'read replica down: its reads go to the primary until it answers again', replica: 'replica1', where: `127.0.0.1:${closedPort}/afrates` }),
      ]);
      expect(JSON.stringify(lines)).not.toContain('secret');
    } finally {
      await router.close();
    }
  });

  it('that accepts connections and never answers, is reported down within a probe timeout: the API starts, and the primary answers its reads', async () => {
    // probe rounds then take longer than the probe interval (each waits out the probe timeout)
    const silent = await startProxy({ host: '127.0.0.1', port: closedPort });
    silent.silence();
    const router = new ReadRouter(db.sql, [`postgres://afrates@127.0.0.1:${silent.port}/afrates`], { log: pino({ level: 'silent' }), maxLagSeconds: 10, statementTimeoutMs: 10_000, probeEveryMs: 50 });
    try {
      await within(20_000, router.start());
      expect(router.states()).toEqual([{ name: 'replica1', state: 'down', lagSeconds: null, reads: 0 }]);
      const [row] = await router.run((sql) => sql<{ one: number }[]>`SELECT 1 AS one`);
      expect(row!.one).toBe(1);
      expect(router.primaryReads).toBe(1);
    } finally {
      await router.close();
      await silent.close();
    }
  });

  it('without replicas (no DATABASE_READ_URL), reads run on the primary and nothing is probed', async () => {
    const router = await openReadRouter(db.sql, loadConfig({}), pino({ level: 'silent' }));
    expect(router.hasReplicas).toBe(false);
    expect(router.states()).toEqual([]);
    const [row] = await router.run((sql) => sql<{ one: number }[]>`SELECT 1 AS one`);
    expect(row!.one).toBe(1);
    expect(router.probeRounds).toBe(0);
    await router.close();
  });
});
