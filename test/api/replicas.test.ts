// Read replicas on a real primary and streaming replica (TEST_DATABASE_URL and
// TEST_DATABASE_READ_URL; skipped without them, and the stopped-replica case also needs
// TEST_REPLICA_STOP and TEST_REPLICA_START): published data is read from the replica; a replica
// that has not replayed the newest cycle, or lags more than the set seconds, is passed over until
// it catches up; a stopped replica is skipped with one log line while every request is answered,
// and health says so; and nothing a customer reads goes backwards.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { ReadRouter } from '../../lib/db/replicas.js';
import { insertTrades, type TradeRow } from '../../pipeline/store.js';
import { candleChunks } from '../../api/queries/candles.js';
import { seedMarket, startTestApi, type TestApi } from '../support/api.js';
import { openTestDatabase } from '../support/db.js';
import { canStopReplica, delayReplay, onReplica, onServers, pauseReplay, resumeReplay, startReplica, stopReplica, undelayReplay, untilReplayed } from '../support/replica.js';
import { until } from '../support/wait.js';

const PAIR = 'BTCNGN';
const FIVE_MINUTES = 300_000;

interface Line {
  level: number;
  msg: string;
  replica?: string;
}
const lines: Line[] = [];
const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
const said = (from: number, prefix: string) => lines.slice(from).filter((l) => l.msg.startsWith(prefix));

let db: Database;
let t: TestApi;
let read: ReadRouter;
let primaryPort: number;
let replicaPort: number;
let stopped = false;

/** Which server answers the router's next read. */
const servedBy = async (router: ReadRouter = read) => (await router.run((sql) => sql<{ port: number }[]>`SELECT inet_server_port() AS port`))[0]!.port;
const untilServedByReplica = (what: string, router: ReadRouter = read) => until(what, async () => (await servedBy(router)) === replicaPort);

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The newest 5-minute candle of GET /v1/rates/historical (yesterday and today, one page). */
async function newestCandle(): Promise<{ time: string; close: number }> {
  const r = await t.get(`/v1/rates/historical?pair=${PAIR}&interval=5m&start=${day(Date.now() - 86_400_000)}&end=${day(Date.now())}&limit=10000`, t.keys.enterprise);
  expect(r.status).toBe(200);
  expect(r.body.meta.has_more).toBe(false);
  return r.body.data.at(-1);
}

/** The time of the newest trade behind GET /v1/rates/live's rate. */
async function liveTime(): Promise<number> {
  const r = await t.get(`/v1/rates/live?pairs=${PAIR}`, t.keys.enterprise);
  expect(r.status).toBe(200);
  return Math.max(...(r.body.data[PAIR].sources as { time: string }[]).map((s) => Date.parse(s.time)));
}

let tick = 0;
let lastAt = 0;
let level = 0;
/** New trades on the primary (both venues of the pair, one price): not yet published. */
async function trade(): Promise<{ at: number; price: number }> {
  tick++;
  const at = Math.max(Date.now() - 500, lastAt + 10);
  lastAt = at;
  const price = level + tick;
  const rows: TradeRow[] = ['luno', 'quidax'].map((exchange, i) => ({ time: new Date(at - 1 + i), exchange, pair: PAIR, tradeId: `replica-${tick}`, price: price.toFixed(2), amount: '0.05', side: 'buy' }));
  await insertTrades(db.sql, rows);
  return { at, price };
}

/** What the pipeline does at the end of a cycle: aggregates refreshed, the cycle recorded, the live snapshot rebuilt. */
async function publish(): Promise<void> {
  await refreshAggregates(db.sql);
  await db.sql`INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source) VALUES ('trades', 'real', now(), now(), '{"luno": 1, "quidax": 1}')`;
  await t.api.deps.snapshot.refresh();
}

beforeAll(async () => {
  if (!onServers) return;
  db = await openTestDatabase();
  await seedMarket(db, 6);
  await untilReplayed(db.sql); // the database, its schema and its rows reach the replica by streaming
  primaryPort = Number(new URL(db.url).port);
  replicaPort = Number(new URL(onReplica(db.url)).port);
  read = new ReadRouter(db.sql, [onReplica(db.url)], { log, maxLagSeconds: 3600, statementTimeoutMs: 10_000, probeEveryMs: 100 });
  await read.start();
  t = await startTestApi({ db, read, log });
  level = Math.round(t.api.deps.snapshot.get(PAIR)!.rate);
});

afterAll(async () => {
  if (!onServers) return;
  // never leave the replica paused, delayed or stopped, whatever failed
  if (stopped) await startReplica().catch(() => {});
  await resumeReplay().catch(() => {});
  await undelayReplay().catch(() => {});
  await t?.close();
  await read?.close();
  await db?.close();
});

describe.runIf(onServers)('read replicas (a real primary and streaming replica)', () => {
  it('reads published data from the replica, and passes it over while it has not replayed the newest cycle', async () => {
    await untilServedByReplica('the replica serves reads');
    expect(primaryPort).not.toBe(replicaPort);
    expect(read.states()[0]!.state).toBe('ok');
    const before = await newestCandle();
    await pauseReplay();
    let newest: { at: number; price: number };
    try {
      // stored on the primary, not yet published: the replica, frozen, still serves the pages
      newest = await trade();
      expect(await servedBy()).toBe(replicaPort);
      expect(await newestCandle()).toEqual(before);
      // published: the live rate has it, the replica has not replayed it, so the primary serves
      await publish();
      expect(await liveTime()).toBe(newest.at);
      const page = await newestCandle();
      expect(page.close).toBe(newest.price);
      expect(page.time).toBe(new Date(Math.floor(newest.at / FIVE_MINUTES) * FIVE_MINUTES).toISOString().replace('.000Z', '+00:00'));
      expect(await servedBy()).toBe(primaryPort);
      await until('health says the replica lags', async () => (await t.get('/v1/health')).body.database_replicas?.[0]?.state === 'lagging');
      const health = (await t.get('/v1/health')).body;
      expect(health.services.database).toBe('ok');
      expect(health.database_replicas).toEqual([{ name: 'replica1', state: 'lagging', lag_seconds: expect.any(Number) }]);
    } finally {
      await resumeReplay();
    }
    // caught up: the replica serves again, the newest cycle included
    await untilServedByReplica('the replica serves reads again');
    const served = read.states()[0]!.reads;
    expect((await newestCandle()).close).toBe(newest.price);
    expect(read.states()[0]!.reads).toBe(served + 1);
    expect((await t.get('/v1/health')).body.database_replicas).toEqual([{ name: 'replica1', state: 'ok', lag_seconds: expect.any(Number) }]);
  });

  it('serves the CSV page and the month file from the replica too, as the JSON page', async () => {
    await untilServedByReplica('the replica serves reads');
    const served = read.states()[0]!.reads;
    const csv = await t.get(`/v1/rates/historical?pair=${PAIR}&interval=5m&start=${day(Date.now() - 86_400_000)}&end=${day(Date.now())}&format=csv`, t.keys.enterprise);
    expect(csv.status).toBe(200);
    expect(read.states()[0]!.reads).toBe(served + 1);
    const file = await t.get(`/v1/exports/candles?pair=${PAIR}&interval=1h&month=${day(Date.now()).slice(0, 7)}`, t.keys.enterprise);
    expect(file.status).toBe(200);
    expect(read.states()[0]!.reads).toBe(served + 2);
  });

  it('passes over a replica lagging more than the set seconds, with one log line, until it catches up', async () => {
    const strict = new ReadRouter(db.sql, [onReplica(db.url)], { log, maxLagSeconds: 1, statementTimeoutMs: 10_000, probeEveryMs: 100 });
    try {
      await strict.start();
      await untilServedByReplica('the replica serves reads', strict);
      const from = lines.length;
      await pauseReplay();
      try {
        // a commit it receives and does not replay: its replay lag grows from here
        await db.sql`CREATE TABLE IF NOT EXISTS lag_marker (at timestamptz)`;
        await db.sql`INSERT INTO lag_marker VALUES (now())`;
        await until('the lag passes 1 s', () => strict.states()[0]!.state === 'lagging');
        expect(strict.states()[0]!.lagSeconds).toBeGreaterThan(1);
        expect(await servedBy(strict)).toBe(primaryPort);
        expect(said(from, 'read replica lagging')).toHaveLength(1);
      } finally {
        await resumeReplay();
      }
      await untilServedByReplica('the replica caught up', strict);
      expect(strict.states()[0]!.state).toBe('ok');
      expect(said(from, 'read replica lagging')).toHaveLength(1);
      expect(said(from, 'read replica caught up')).toHaveLength(1);
    } finally {
      await strict.close();
    }
  });

  it('never shows a page older than the live rate, nor anything older than before, across cycles while the replica lags and catches up', async () => {
    await untilServedByReplica('the replica serves reads');
    const replicaReads = read.states()[0]!.reads;
    const primaryReads = read.primaryReads;
    let seen = { candle: '', live: 0, price: 0 };
    /** One customer's reads, live and historical in both orders: each as new as the live rate, and never older than the one before. */
    const customerReads = async () => {
      for (const order of ['live first', 'historical first']) {
        const live1 = order === 'live first' ? await liveTime() : 0;
        const candle = await newestCandle();
        const live = order === 'live first' ? live1 : await liveTime();
        expect(Date.parse(candle.time)).toBeGreaterThanOrEqual(Math.floor(live / FIVE_MINUTES) * FIVE_MINUTES);
        expect(candle.time >= seen.candle).toBe(true);
        expect(live).toBeGreaterThanOrEqual(seen.live);
        // the newest trade is the newest published one (its price): never an earlier one
        expect(candle.close).toBeGreaterThanOrEqual(seen.price);
        seen = { candle: candle.time, live, price: candle.close };
      }
    };
    for (let cycle = 1; cycle <= 9; cycle++) {
      if (cycle === 3) await pauseReplay();
      if (cycle === 6) await resumeReplay(); // catching up while the cycles go on
      const { price } = await trade();
      await customerReads(); // before the cycle: the new trade is not published yet
      await publish();
      await customerReads();
      expect(seen.price).toBe(price);
    }
    await resumeReplay();
    // the replica served some of those reads, the primary the others (while it had not replayed the cycle)
    expect(read.states()[0]!.reads).toBeGreaterThan(replicaReads);
    expect(read.primaryReads).toBeGreaterThan(primaryReads);
  });

  it('never follows a read the primary answered with an older one from the replica (replay delayed 2 s)', async () => {
    await untilServedByReplica('the replica serves reads');
    await delayReplay(2);
    try {
      await publish(); // the replica reaches this cycle 2 s after it
      // a trade stored half a second after the cycle: the replica holds the cycle without it for that long
      await new Promise((resolve) => setTimeout(resolve, 500));
      const stored = await trade();
      const replicaReads = read.states()[0]!.reads;
      // the primary answers first (the replica has not replayed the cycle), with the new trade
      expect((await newestCandle()).close).toBe(stored.price);
      expect(read.states()[0]!.reads).toBe(replicaReads);
      // and every read after it has it, until (and after) the replica serves again. Read every
      // 2.5 s, longer than the replay delay: each read the primary answers moves the fence to the
      // primary's newest position, which other writers to the server (the suite's other files)
      // move on all the time, so a replica 2 s behind passes the fence only when no read in the
      // last 2 s went to the primary
      await until(
        'the replica serves reads again',
        async () => {
          expect((await newestCandle()).close).toBe(stored.price);
          return read.states()[0]!.reads >= replicaReads + 3;
        },
        40_000,
        2_500,
      );
    } finally {
      await undelayReplay();
    }
  }, 60_000);

  it.runIf(canStopReplica)('skips a stopped replica with one log line, answers every request meanwhile, says so in health, and takes it back only once it has what the primary showed', async () => {
    // a router of its own besides: it has served from the replica alone (no fence but where the
    // replica stood), so only the primary's position when the replica returns keeps it from
    // serving a replica without what the primary answered meanwhile
    const own = new ReadRouter(db.sql, [onReplica(db.url)], { log: pino({ level: 'silent' }), maxLagSeconds: 3600, statementTimeoutMs: 10_000, probeEveryMs: 100 });
    const ownNewestClose = async () => {
      const to = new Date(Date.now() + FIVE_MINUTES);
      const chunks = await own.run((sql) => candleChunks(sql, { pair: PAIR, interval: '5m', from: new Date(Date.now() - 86_400_000), to, after: null, limit: 10_000 }));
      let close: string | undefined;
      for await (const rows of chunks) close = rows.at(-1)!.close;
      return Number(close);
    };
    await own.start();
    await untilServedByReplica('the replica serves reads');
    await untilServedByReplica('the replica serves reads (its own router)', own);
    const from = lines.length;
    const statuses: number[] = [];
    let loading = true;
    // a customer reading pages all along: from the replica, then (it stopping) from the primary (a
    // customer of its own: each of the checks' 10,000-candle pages takes half its customer's share)
    const reader = await t.key('enterprise');
    const load = (async () => {
      while (loading) statuses.push((await t.get(`/v1/rates/historical?pair=${PAIR}&interval=1h&start=${day(Date.now())}&end=${day(Date.now())}`, reader)).status);
    })();
    let stored: { at: number; price: number };
    try {
      await until('some reads before the stop', () => statuses.length >= 5);
      // once back, the replica replays each commit 8 s late: it returns without what was stored meanwhile
      await delayReplay(8);
      stopped = true;
      await stopReplica();
      await until('the replica is down', () => read.states()[0]!.state === 'down');
      const health = (await t.get('/v1/health')).body;
      expect(health.services.database).toBe('ok');
      expect(health.status).toBe('ok');
      expect(health.database_replicas).toEqual([{ name: 'replica1', state: 'down', lag_seconds: null }]);
      const atDown = statuses.length;
      await until('reads go on while it is down', () => statuses.length >= atDown + 20);
      expect(await servedBy()).toBe(primaryPort);
      // stored while it is down, and read from the primary
      stored = await trade();
      expect((await newestCandle()).close).toBe(stored.price);
      expect(await ownNewestClose()).toBe(stored.price);
      await startReplica();
      stopped = false;
      // back, replaying (its lag known: it would serve), but without that trade: the primary keeps serving
      await until('the replica answers again', () => read.states()[0]!.state !== 'down' && own.states()[0]!.lagSeconds !== null);
      for (let i = 0; i < 10; i++) {
        expect(await ownNewestClose()).toBe(stored.price);
        expect((await newestCandle()).close).toBe(stored.price);
      }
      expect(await servedBy(own)).toBe(primaryPort);
    } finally {
      loading = false;
      await load;
      // a replica a failure left down is started first, so the failure is what the run reports
      if (stopped) {
        await startReplica();
        stopped = false;
      }
      await undelayReplay();
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    await untilServedByReplica('the replica serves reads again');
    await untilServedByReplica('the replica serves reads again (its own router)', own);
    expect((await newestCandle()).close).toBe(stored.price);
    expect(await ownNewestClose()).toBe(stored.price);
    await own.close();
    expect(said(from, 'read replica down')).toHaveLength(1);
    expect(said(from, 'read replica answers')).toHaveLength(1);
    expect((await t.get('/v1/health')).body.database_replicas[0].state).toBe('ok');
  });
});
