// Issue 31 item 4: nothing published depends on the transport. One simulated market (the same
// seed, the same clock, the same signing keys) is played three times, each into a fresh database:
// its trades brought by REST only, by the venue streams only (REST failing meanwhile), and by both
// racing. Candles (every interval, and per venue), certificates, bundles, fixings, settled values,
// restatements, late-trade counts, the transparency log and its signed heads are then compared as
// text: they must be byte for byte the same. The window holds the ZAR pairs' local fixing (16:00
// Johannesburg, 14:00 UTC) and ends just after a bucket edge, so the last partly collected bucket
// settles by the lag; the trades after it then arrive late, by the stream in the stream runs
// (held back by the simulator's stream_burst) and by REST in the REST run: the late trades are
// counted and restated the same way whichever transport brought them.
//
// Columns left out, each written by the database's own clock (DEFAULT now(), wall time), never
// by the pipeline's clock, so two runs cannot agree on them: certificates.issued_at (the
// certificate's own issued_at is in its body, which is compared), bundles.stored_at,
// fixings.published_at (likewise in the body), settled_values.settled_at, restatements.restated_at,
// transparency_entries.appended_at, pair_settlement.updated_at, trades.ingested_at,
// late_trades.noticed_at. late_trades is a row per write (a REST page, a stream flush), so what
// is compared is what GET /v1/status reports of it: per venue and pair the trades counted and the
// oldest.
//
// Both transports are driven by hand at the same clock in every run: the streams are opened
// without the REST, publish and FX loops of start() (whose first ticks run at no fixed moment of
// the test clock), and REST collects at the same instants (a venue's wake, as Luno's stream uses
// it: a REST collection without a publish). In the stream-only run the REST cycle that ends the
// window (and the one after the late trades) finds everything already stored: it stores nothing
// (asserted) but moves the venues' collected_through as REST alone does (pipeline/venue-session.ts:
// the watermark is REST's), so settlement comes at the same moment in every run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { createSigner } from '../../lib/signer.js';
import { softwareIdentity } from '../../lib/software.js';
import { publishingPipeline } from '../../pipeline/process.js';
import type { Pipeline } from '../../pipeline/runner.js';
import { venues } from '../../pipeline/venues/index.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { openTestDatabase, testLog } from '../support/db.js';
import { until } from '../support/wait.js';

const MIN = 60_000;
const SEED = 31;
const STREAMED = ['binance', 'valr'] as const;
const LAG_SECONDS = 600;
/** 13:15 UTC: the first collection reaches back before the ZAR local fixing window's start (13:00; the fixing at 14:00). */
const T0 = Date.UTC(2026, 10, 20, 13, 15);
/**
 * The window's end, 40 s into the 14:10 bucket: REST's collected_through (W - 5 s) settles through
 * 14:10, the fixing (14:00) with it; the 14:10 bucket settles later by the lag with its first 40 s
 * of trades (XRPZAR: one), the rest of it late: with this seed they move XRPZAR's 5-minute value by
 * 0.22 %, past the restatement threshold (0.2 %).
 */
const W = T0 + 55 * MIN + 40_000;
/** Past the lag: buckets through bucket(P - lag) settle, those after W with trades still to come. */
const P = W + LAG_SECONDS * 1000 + 10 * MIN;
const REST_EVERY = 10 * MIN;
/** The first collection reaches this far back: past the fixing window's start, so the fixing is due (pipeline/fixings.ts starts fixings with the data). */
const LOOKBACK_MS = 20 * MIN;
/**
 * The software identity, read once for the three runs: it is the checkout's HEAD, which others
 * commit to meanwhile (the bundles name it, so two runs a commit apart differ in every bundle).
 */
const SOFTWARE = softwareIdentity();

type Mode = 'rest' | 'stream' | 'both';

let clock = T0;
const now = () => clock;
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-transport-'));
afterAll(() => fs.rmSync(keyDir, { recursive: true, force: true }));

/** certifyingSimPipeline (test/support/pipeline.ts) over the streamed venues alone. */
function streamedVenuesPipeline(sim: SimMarket, db: Database, streams: boolean): Pipeline {
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, AFRATES_VAR_DIR: keyDir, PUBLIC_URL: 'https://afrates.test', AFRATES_GIT_COMMIT: SOFTWARE.commit, SETTLE_AFTER_SECONDS: String(LAG_SECONDS), STREAMS: streams ? '1' : '0' });
  const signer = createSigner({ keyDir: path.join(keyDir, 'keys') });
  return publishingPipeline(
    { config, log: testLog, sql: db.sql, signer },
    { venues: venues.filter((v) => (STREAMED as readonly string[]).includes(v.id)), unpaced: true, now, initialLookbackMs: LOOKBACK_MS, requestTimeoutMs: 1_000, retryDelaysMs: [5] },
  );
}

/** One REST collection of every pair: no publish. */
const restCollect = (p: Pipeline) => p.collectTrades();

async function tradeCount(db: Database): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades`;
  return row!.n;
}

/** Whether every trade the market offered from the first collection's start through `to` is stored, each once. */
async function allStored(sim: SimMarket, db: Database, to: number): Promise<boolean> {
  const rows = await db.sql<{ exchange: string; pair: string; trade_id: string }[]>`SELECT exchange, pair, trade_id FROM trades`;
  const keys = new Set(rows.map((r) => `${r.exchange}|${r.pair}|${r.trade_id}`));
  if (keys.size !== rows.length) throw new Error('a trade stored twice');
  const from = T0 - LOOKBACK_MS;
  return STREAMED.every((venue) =>
    (sim.listings()[venue] ?? []).every((pair) => sim.served(venue, pair).filter((t) => t.time >= from && t.time <= to).every((t) => keys.has(`${venue}|${pair}|${t.id}`))),
  );
}

/** Moves the clock in steps, so the streams send each trade as the market makes it. */
async function advance(to: number, p: Pipeline | null): Promise<void> {
  let nextRest = clock + REST_EVERY;
  while (clock < to) {
    clock = Math.min(to, clock + 30_000);
    await new Promise((r) => setTimeout(r, 15));
    if (p && clock >= nextRest && clock < to) {
      nextRest += REST_EVERY;
      await restCollect(p);
    }
  }
}

/** Everything published, and the trades behind it, as text. */
async function published(db: Database) {
  const rows = async (q: PromiseLike<readonly unknown[]>) => (await q).map((r) => JSON.stringify(r));
  const { sql } = db;
  return {
    trades: await rows(sql`SELECT exchange, pair, trade_id, time, price::text, amount::text, side FROM trades ORDER BY exchange, pair, time, trade_id`),
    candles: await rows(sql`
      SELECT interval, bucket, pair, open::text, high::text, low::text, close::text, pv::text, volume::text, trades, vwap::text, first_trade_at, last_trade_at
      FROM candles ORDER BY interval, pair, bucket`),
    candlesByExchange: await rows(sql`SELECT * FROM candles_5m_by_exchange ORDER BY 1, 2, 3`),
    settlement: await rows(sql`SELECT pair, settled_through FROM pair_settlement ORDER BY pair`),
    settledValues: await rows(sql`SELECT pair, interval, bucket, pv::text, volume::text, trades FROM settled_values ORDER BY pair, interval, bucket`),
    certificates: await rows(sql`SELECT pair, bucket, rate::text, body FROM certificates ORDER BY pair, bucket`),
    bundles: await rows(sql`SELECT id, sha256, bytes, parts FROM bundles ORDER BY id`),
    bundleParts: await rows(sql`SELECT id, part, encode(gzip, 'hex') AS gzip FROM bundle_parts ORDER BY id, part`),
    fixings: await rows(sql`SELECT id, pair, kind, date::text, time, rate::text, body FROM fixings ORDER BY id`),
    restatements: await rows(sql`SELECT id::text, pair, subject, time, ref, original::text, previous::text, restated::text, change_pct::text, reason FROM restatements ORDER BY id`),
    lateTrades: await rows(sql`SELECT exchange, pair, sum(trades)::int AS trades, min(oldest) AS oldest FROM late_trades GROUP BY exchange, pair ORDER BY exchange, pair`),
    logEntries: await rows(sql`SELECT leaf_index::text, entry_id, kind, entry, encode(leaf_hash, 'hex') AS leaf_hash FROM transparency_entries ORDER BY leaf_index`),
    logNodes: await rows(sql`SELECT level, idx::text, encode(hash, 'hex') AS hash FROM transparency_nodes ORDER BY level, idx`),
    logHeads: await rows(sql`SELECT tree_size::text, encode(root_hash, 'hex') AS root_hash, signed_at, signed_payload, signature, key_id, kept FROM transparency_heads ORDER BY id`),
  };
}

type Published = Awaited<ReturnType<typeof published>>;

interface Played {
  /** after the window's trades, published through the fixing */
  readonly window: Published;
  /** after the late trades */
  readonly late: Published;
  /** what the REST cycles that end each phase stored */
  readonly restStored: { window: number; late: number };
  readonly streamStored: number;
}

async function play(mode: Mode): Promise<Played> {
  clock = T0;
  const sim = await startSimMarket({ seed: SEED, now, historyStart: T0 - 30 * MIN, streams: { pollMs: 10 } });
  const db = await openTestDatabase();
  const p = streamedVenuesPipeline(sim, db, mode !== 'rest');
  try {
    await p.runFxCycle();
    await p.runTradeCycle(); // the history, by REST in every run
    if (mode === 'stream') for (const v of STREAMED) sim.setFault(v, { kind: 'server_error' });
    if (mode !== 'rest') {
      p.startStreams();
      await until('streams open', () => STREAMED.every((v) => p.streams.get(v)?.report().state === 'open'));
      // the clock stands still until the subscriptions are in (VALR's is a message after the open):
      // a feed starts at the clock its first subscriber comes, what passed before is REST's (failing in the stream run)
      await new Promise((r) => setTimeout(r, 500));
    }

    // the window: REST wakes every 10 minutes (none in the stream-only run, where REST fails), the streams as trades are made
    await advance(W, mode === 'stream' ? null : p);
    if (mode !== 'rest') await until('every trade of the window stored', () => allStored(sim, db, W));
    if (mode === 'stream') for (const v of STREAMED) sim.setFault(v, null);
    const beforeWindowCycle = await tradeCount(db);
    await p.runTradeCycle(); // settles through 14:10 (the fixing at 14:00 with it)
    const restWindow = (await tradeCount(db)) - beforeWindowCycle;
    expect(await allStored(sim, db, W)).toBe(true);

    // late trades: the streams hold them back (stream_burst) while the lag settles their buckets
    if (mode !== 'rest') for (const v of STREAMED) sim.setFault(v, { kind: 'stream_burst' });
    await advance(P, null);
    await p.publish();
    const window = await published(db);
    if (mode !== 'rest') {
      for (const v of STREAMED) sim.setFault(v, null); // the held trades, all at once
      await until('every held trade stored', () => allStored(sim, db, P), 30_000);
    }
    const beforeLateCycle = await tradeCount(db);
    await p.runTradeCycle(); // REST: brings them in the REST run, finds them stored in the others
    const restLate = (await tradeCount(db)) - beforeLateCycle;
    expect(await allStored(sim, db, P)).toBe(true);
    const late = await published(db);
    const streamStored = [...p.streams.values()].reduce((n, s) => n + s.stored, 0);
    return { window, late, restStored: { window: restWindow, late: restLate }, streamStored };
  } finally {
    await p.stop();
    await sim.stop();
    await db.close();
  }
}

/** The first differing row of each part, for a readable failure. */
function differences(a: Record<string, string[]>, b: Record<string, string[]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(a)) {
    const x = a[k]!;
    const y = b[k]!;
    if (x.length !== y.length) out[k] = { rows: [x.length, y.length] };
    const i = x.findIndex((r, j) => r !== y[j]);
    if (i >= 0) out[k] = { ...(out[k] as object), at: i, a: x[i], b: y[i] };
  }
  return out;
}

describe('the same market by stream, by REST, or both', () => {
  const runs = new Map<Mode, Played>();

  it('publishes the same bytes whichever transport brought the trades, late ones counted and restated alike', async () => {
    for (const mode of ['rest', 'stream', 'both'] as const) runs.set(mode, await play(mode));
    const rest = runs.get('rest')!;
    const stream = runs.get('stream')!;
    const both = runs.get('both')!;

    // each run is what it says: REST alone stored the REST run's window, the stream alone the stream run's
    expect(rest.streamStored).toBe(0);
    expect(rest.restStored.window).toBeGreaterThan(0);
    expect(rest.restStored.late).toBeGreaterThan(0);
    expect(stream.restStored).toEqual({ window: 0, late: 0 });
    expect(stream.streamStored).toBeGreaterThan(1000);
    expect(both.streamStored).toBeGreaterThan(0);

    // there is something to compare: certificates, a fixing with a rate, late trades, a restatement
    const w = rest.window;
    expect(w.certificates.length).toBeGreaterThan(20);
    expect(w.bundles.length).toBeGreaterThan(20);
    expect(w.fixings.some((f) => JSON.parse(f).rate !== null)).toBe(true);
    expect(w.logHeads.length).toBeGreaterThan(0);
    expect(rest.late.lateTrades.length).toBeGreaterThan(0);
    expect(rest.late.restatements.some((r) => JSON.parse(r).subject === 'candle_5m')).toBe(true);

    for (const [name, run] of [['stream', stream], ['both', both]] as const) {
      expect(differences(rest.window, run.window), `${name} vs rest, after the window`).toEqual({});
      expect(differences(rest.late, run.late), `${name} vs rest, after the late trades`).toEqual({});
      expect(run.window).toEqual(rest.window);
      expect(run.late).toEqual(rest.late);
    }
  }, 300_000);
});
