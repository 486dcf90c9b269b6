// The venues' trade streams against the simulated market, on a clock the test moves: each venue's
// stream subscribes, receives and stores what the market offers (with REST failing, so nothing else
// could have), keeps itself alive, is cut, silenced or skips a message and reconnects, and after
// every reconnect REST fills what passed meanwhile; every trade stored once however many transports
// brought it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { tradeNotices } from '../../lib/db/notices.js';
import { Pipeline } from '../../pipeline/runner.js';
import { venues } from '../../pipeline/venues/index.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { openTestDatabase, testLog } from '../support/db.js';
import { until } from '../support/wait.js';

const MIN = 60_000;
const T0 = Date.parse('2026-11-20T10:00:00Z');
const LOOKBACK_MS = 15 * MIN;

let clock = T0;
const now = () => clock;
let sim: SimMarket;
let db: Database;
const running: Pipeline[] = [];

beforeAll(async () => {
  // short keep-alive limits, so a test sees them cut in seconds
  sim = await startSimMarket({ seed: 31, now, historyStart: T0 - 30 * MIN, streams: { pollMs: 10, valrIdleMs: 1_500, lunoAuthTimeoutMs: 2_000, lunoKeepAliveMs: 300 } });
  db = await openTestDatabase();
});

afterAll(async () => {
  await db?.close();
  await sim?.stop();
});

afterEach(async () => {
  sim.setFault('binance', null);
  sim.setFault('valr', null);
  sim.setFault('luno', null);
  await Promise.all(running.splice(0).map((p) => p.stop()));
});

/** When each venue was first collected: the first run reaches LOOKBACK_MS back, later ones resume from its watermark. */
const firstStart = new Map<string, number>();

/** A pipeline of one venue whose REST cycle sleeps (300 s) after its first run; the file's market and database unless others are given. */
function pipeline(venue: string, env: Record<string, string> = {}, on: { market: SimMarket; database: Database } = { market: sim, database: db }): Pipeline {
  if (!firstStart.has(venue)) firstStart.set(venue, clock);
  const p = new Pipeline({
    config: loadConfig({ MARKET: 'simulated', SIM_URL: on.market.url, CYCLE_SECONDS: '300', FX_CYCLE_SECONDS: '86400', ...env }),
    log: testLog,
    sql: on.database.sql,
    venues: venues.filter((v) => v.id === venue),
    unpaced: true,
    now,
    initialLookbackMs: LOOKBACK_MS,
    requestTimeoutMs: 1_000,
    retryDelaysMs: [5],
    notices: tradeNotices(on.database.sql, on.database.kind),
    streamTimings: { silenceMs: 1_000, keepAliveMs: 300 },
  });
  running.push(p);
  return p;
}

interface Stored {
  pair: string;
  trade_id: string;
  time: Date;
  price: string;
  amount: string;
}

async function stored(venue: string): Promise<Stored[]> {
  return db.sql<Stored[]>`SELECT pair, trade_id, time, price::text, amount::text FROM trades WHERE exchange = ${venue} ORDER BY pair, time, trade_id`;
}

/** Every trade the market offered up to now, from where the first collection starts, as the venue's REST answer gives it. */
function offered(venue: string) {
  const from = firstStart.get(venue)! - LOOKBACK_MS;
  return (sim.listings()[venue] ?? []).flatMap((pair) => sim.served(venue, pair).filter((t) => t.time >= from).map((t) => ({ ...t, pair })));
}

/** Whether every trade offered up to now is stored, each once, as offered. */
async function allStoredOnce(venue: string): Promise<boolean> {
  const rows = await stored(venue);
  const keys = rows.map((r) => `${r.pair}|${r.trade_id}`);
  if (new Set(keys).size !== keys.length) throw new Error(`${venue}: a trade stored twice`);
  const byKey = new Map(rows.map((r) => [`${r.pair}|${r.trade_id}`, r]));
  return offered(venue).every((t) => {
    const row = byKey.get(`${t.pair}|${t.id}`);
    return row !== undefined && row.time.getTime() === t.time && Number(row.price) === t.price && Number(row.amount) === t.amount;
  });
}

async function streamOpen(p: Pipeline, venue: string): Promise<void> {
  await until(`${venue}'s stream open`, () => p.streams.get(venue)?.report().state === 'open', 30_000);
}

/** Moves the clock in steps, so trades reach the stream over time as on a venue. */
async function advance(ms: number, steps = 10): Promise<void> {
  for (let i = 0; i < steps; i++) {
    clock += ms / steps;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['binance', 'valr'])('%s stream', (venue) => {
  it('receives and stores every trade the market offers while REST fails, each once, as REST would have', async () => {
    const p = pipeline(venue);
    p.start();
    await streamOpen(p, venue);
    // from here only the stream can deliver
    sim.setFault(venue, { kind: 'server_error' });
    const before = (await stored(venue)).length;
    await advance(8 * MIN);
    await until(`${venue}: every offered trade stored`, () => allStoredOnce(venue));
    expect((await stored(venue)).length).toBeGreaterThan(before);
    expect(p.streams.get(venue)!.stored).toBeGreaterThan(0);
    // REST back: what it brings again is stored no second time
    sim.setFault(venue, null);
    await p.runTradeCycle();
    expect(await allStoredOnce(venue)).toBe(true);
  });

  it('reconnects after a cut connection, and REST fills what passed while it was down', async () => {
    const p = pipeline(venue);
    p.start();
    await streamOpen(p, venue);
    sim.setFault(venue, { kind: 'stream_drop', times: 1 });
    await advance(5 * MIN, 2); // traded while no connection was open
    await until(`${venue}: reconnected`, () => p.streams.get(venue)!.report().reconnects >= 1 && p.streams.get(venue)!.report().state === 'open');
    await until(`${venue}: the gap filled`, () => allStoredOnce(venue));
  });

  it('takes a connection gone silent without closing for dead, and reconnects', async () => {
    const p = pipeline(venue);
    p.start();
    await streamOpen(p, venue);
    sim.setFault(venue, { kind: 'stream_silent', times: 1 });
    await until(`${venue}: the silent connection replaced`, () => p.streams.get(venue)!.report().reconnects >= 1 && p.streams.get(venue)!.report().state === 'open');
    await advance(3 * MIN);
    await until(`${venue}: every offered trade stored`, () => allStoredOnce(venue));
  });
});

describe('VALR keep-alive', () => {
  it('keeps its connection past the venue idle cut by sending PING', async () => {
    const p = pipeline('valr');
    p.start();
    await streamOpen(p, 'valr');
    const openedAt = Date.now();
    // the simulated VALR closes a connection that says nothing for 1.5 s
    await until('three idle limits passed', () => Date.now() - openedAt > 4_500, 10_000, 100);
    expect(p.streams.get('valr')!.report()).toMatchObject({ state: 'open', reconnects: 0 });
  });
});

describe('Luno stream', () => {
  it('does not run without a Luno API key: Luno stays on REST', async () => {
    const p = pipeline('luno');
    p.start();
    await until('luno collected once', async () => (await stored('luno')).length > 0);
    expect(p.streams.has('luno')).toBe(false);
  });

  it('with a key: each trade update wakes a REST collection, so trades arrive with the venue time while the REST cycle sleeps', async () => {
    const p = pipeline('luno', { LUNO_API_KEY_ID: 'id', LUNO_API_KEY_SECRET: 'secret' });
    p.start();
    await streamOpen(p, 'luno');
    await advance(6 * MIN);
    await until('luno: every offered trade stored', () => allStoredOnce('luno'));
  });

  it('reconnects on a sequence gap', async () => {
    const p = pipeline('luno', { LUNO_API_KEY_ID: 'id', LUNO_API_KEY_SECRET: 'secret' });
    p.start();
    await streamOpen(p, 'luno');
    sim.setFault('luno', { kind: 'stream_gap', times: 1 });
    await advance(6 * MIN);
    await until('luno: reconnected after the gap', () => p.streams.get('luno')!.report().reconnects >= 1);
    await until('luno: every offered trade stored', () => allStoredOnce('luno'));
  });
});

describe("the venues' planned cuts", () => {
  // Binance cuts a connection at 24 hours and VALR a keyless one at 15 minutes: here in a second
  let cutting: SimMarket;
  let cutDb: Database;
  beforeAll(async () => {
    cutting = await startSimMarket({ seed: 32, now, historyStart: T0 - 30 * MIN, streams: { pollMs: 10, binanceLifetimeMs: 1_000, valrKeylessLifetimeMs: 1_000 } });
    cutDb = await openTestDatabase();
  });
  afterAll(async () => {
    await cutDb?.close();
    await cutting?.stop();
  });

  it.each(['binance', 'valr'])('%s: a connection the venue ends is opened again, and nothing offered meanwhile is lost', async (venue) => {
    const p = pipeline(venue, {}, { market: cutting, database: cutDb });
    const from = clock - LOOKBACK_MS;
    p.start();
    await until(`${venue}: cut by the venue twice and open again`, () => p.streams.get(venue)!.report().reconnects >= 2 && p.streams.get(venue)!.report().state === 'open');
    await advance(4 * MIN);
    const offeredHere = (cutting.listings()[venue] ?? []).flatMap((pair) => cutting.served(venue, pair).filter((t) => t.time >= from).map((t) => `${pair}|${t.id}`));
    await until(`${venue}: every offered trade stored once`, async () => {
      const rows = await cutDb.sql<{ key: string }[]>`SELECT pair || '|' || trade_id AS key FROM trades WHERE exchange = ${venue}`;
      const keys = rows.map((r) => r.key);
      if (new Set(keys).size !== keys.length) throw new Error('a trade stored twice');
      const have = new Set(keys);
      return offeredHere.every((k) => have.has(k));
    });
  });
});
