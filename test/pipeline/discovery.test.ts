// A market missing from one answer of a venue's market list (maintenance, a partial answer, a
// rename) when the daily discovery runs. Taken at its word, the pair was dropped: not collected
// for a day, and left out of settlement, with no error anywhere. Quidax serves only its latest
// trades, so that day was lost for good. Real ccxt against the simulated market, behind a proxy
// that drops USDT/NGN from one /markets answer.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { venueById } from '../../pipeline/venues/index.js';
import { openTestDatabase, testLog } from '../support/db.js';

const MIN = 60_000;
let clock = Date.UTC(2026, 10, 20, 9, 0, 0);
let sim: SimMarket;
let proxy: Server;
let proxyUrl: string;
let dropFromMarkets = 0;
let db: Database;

beforeAll(async () => {
  sim = await startSimMarket({ seed: 5, now: () => clock, historyStart: clock - 10 * MIN });
  proxy = createServer(async (req, res) => {
    const upstream = await fetch(`${sim.url}${req.url}`);
    let text = await upstream.text();
    if (req.url?.startsWith('/quidax/api/v1/markets') && dropFromMarkets > 0) {
      dropFromMarkets--;
      const body = JSON.parse(text) as { data: { id: string }[] };
      body.data = body.data.filter((m) => m.id !== 'usdtngn');
      text = JSON.stringify(body);
    }
    res.writeHead(upstream.status, { 'Content-Type': 'application/json', Date: upstream.headers.get('date') ?? '' });
    res.end(text);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  db = await openTestDatabase();
});
afterAll(async () => {
  proxy?.close();
  await sim?.stop();
  await db?.close();
});

const stored = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades WHERE exchange = 'quidax' AND pair = 'USDTNGN'`)[0]!.n;

describe('a market missing from one discovery', () => {
  it('is kept, reported, looked for again within minutes, and loses no trade', async () => {
    const p = new Pipeline({ config: loadConfig({ MARKET: 'simulated', SIM_URL: proxyUrl }), log: testLog, sql: db.sql, venues: [venueById('quidax')!], unpaced: true, now: () => clock, initialLookbackMs: 5 * MIN, retryDelaysMs: [5], requestTimeoutMs: 2_000 });
    try {
      await p.runTradeCycle();
      // a day on, the daily discovery meets the one answer without USDT/NGN
      clock += 24 * 60 * MIN + MIN;
      dropFromMarkets = 1;
      await p.runTradeCycle();
      const afterBlip = clock;
      const before = await stored();
      const errors: string[] = [];
      for (let i = 0; i < 10; i++) {
        clock += MIN; // the service's cadence
        errors.push(...(await p.runTradeCycle()).errors.map((e) => `${e.pair}: ${e.error}`));
      }
      // still listed meanwhile: settlement keeps waiting for this venue on the pair
      const listed = await db.sql<{ pair: string }[]>`SELECT pair FROM venue_markets WHERE exchange = 'quidax' AND pair = 'USDTNGN'`;
      expect(listed).toHaveLength(1);
      // while the market was missing, its pair failed visibly (BadSymbol), not silently
      expect(errors.some((e) => e.startsWith('USDTNGN: BadSymbol'))).toBe(true);
      // every trade served since the discovery is stored
      const served = sim.served('quidax', 'USDTNGN').filter((t) => t.time > afterBlip).map((t) => t.id);
      expect(served.length).toBeGreaterThan(0);
      const ids = new Set((await db.sql<{ trade_id: string }[]>`SELECT trade_id FROM trades WHERE exchange = 'quidax' AND pair = 'USDTNGN'`).map((r) => r.trade_id));
      expect(served.filter((id) => !ids.has(id))).toEqual([]);
      expect(await stored()).toBeGreaterThan(before);
    } finally {
      await p.stop();
    }
  });

  it('is dropped once it has been missing for an hour (a delisting)', async () => {
    const p = new Pipeline({ config: loadConfig({ MARKET: 'simulated', SIM_URL: proxyUrl }), log: testLog, sql: db.sql, venues: [venueById('quidax')!], unpaced: true, now: () => clock, initialLookbackMs: 5 * MIN, retryDelaysMs: [5], requestTimeoutMs: 2_000 });
    const listed = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM venue_markets WHERE exchange = 'quidax' AND pair = 'USDTNGN'`)[0]!.n;
    try {
      await p.runTradeCycle();
      expect(await listed()).toBe(1);
      clock += 24 * 60 * MIN + MIN;
      dropFromMarkets = 1_000; // gone from every answer from now on
      await p.runTradeCycle();
      for (let minutes = 5; minutes <= 55; minutes += 5) {
        clock += 5 * MIN;
        await p.runTradeCycle();
      }
      expect(await listed()).toBe(1); // 56 minutes missing: still kept
      clock += 10 * MIN;
      await p.runTradeCycle();
      expect(await listed()).toBe(0);
    } finally {
      dropFromMarkets = 0;
      await p.stop();
    }
  });
});

describe("Luno's KES book", () => {
  it('is found in its market list and collected like any other: BTCKES gets exchange trades', async () => {
    const p = new Pipeline({ config: loadConfig({ MARKET: 'simulated', SIM_URL: sim.url }), log: testLog, sql: db.sql, venues: [venueById('luno')!], unpaced: true, now: () => clock, initialLookbackMs: 5 * MIN, retryDelaysMs: [5], requestTimeoutMs: 2_000 });
    try {
      const from = clock - 5 * MIN;
      const cycle = await p.runTradeCycle();
      expect(cycle.errors).toEqual([]);
      const listed = await db.sql<{ pair: string; symbol: string }[]>`SELECT pair, symbol FROM venue_markets WHERE exchange = 'luno' AND pair LIKE '%KES'`;
      expect(listed.map((r) => `${r.pair} ${r.symbol}`)).toEqual(['BTCKES BTC/KES']);
      const served = sim.served('luno', 'BTCKES').filter((t) => t.time >= from).map((t) => t.id).sort();
      expect(served.length).toBeGreaterThan(0);
      const stored = await db.sql<{ trade_id: string }[]>`SELECT trade_id FROM trades WHERE exchange = 'luno' AND pair = 'BTCKES' ORDER BY trade_id`;
      expect(stored.map((r) => r.trade_id).sort()).toEqual(served);
    } finally {
      await p.stop();
    }
  });
});
