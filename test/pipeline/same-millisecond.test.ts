// One taker order that sweeps several price levels is several trades with the same timestamp, and
// VALR's trade ids are UUIDs, in no order. Paging is by time (the next page starts at the newest
// trade's millisecond again), so every trade of such a group must be stored whichever ids a page
// held, and a group larger than a page must not be stepped over.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { collect } from '../../pipeline/collect.js';
import { venueById, venues } from '../../pipeline/venues/index.js';
import { openTestDatabase, testLog } from '../support/db.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-same-ms-'));
const file = path.join(dir, 'market.jsonl');
const now = Date.now();
const ids: Record<string, string[]> = { BTCZAR: [], ETHZAR: [] };
let sim: SimMarket;
let db: Database;

function writeReplay() {
  const lines: string[] = [];
  const start = now - 30 * 60_000;
  for (const [pair, level, offset] of [['BTCZAR', 1_600_000, 0], ['ETHZAR', 60_000, 3]] as const) {
    const trade = (time: number, price: number) => {
      const id = crypto.randomUUID();
      ids[pair]!.push(id);
      lines.push(JSON.stringify({ venue: 'valr', pair, time: new Date(time + offset).toISOString(), id, price, amount: 0.01, side: 'buy' }));
    };
    // 95 trades a few seconds apart, then a sweep of 30 trades in one millisecond across the
    // 100-trade page boundary, then a few more; then a sweep of 130, more than a page
    for (let i = 0; i < 95; i++) trade(start + i * 5_000, level + i);
    const sweep = start + 95 * 5_000;
    for (let i = 0; i < 30; i++) trade(sweep, level + 100 + i * 10);
    for (let i = 1; i <= 5; i++) trade(sweep + i * 5_000, level + 500 + i);
    const big = sweep + 60_000;
    for (let i = 0; i < 130; i++) trade(big, level + 600 + i);
    for (let i = 1; i <= 3; i++) trade(big + i * 5_000, level + 800 + i);
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

beforeAll(async () => {
  writeReplay();
  sim = await startSimMarket({ replay: file });
  db = await openTestDatabase();
});

afterAll(async () => {
  await sim?.stop();
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const storedIds = async (pair: string) =>
  (await db.sql<{ trade_id: string }[]>`SELECT trade_id FROM trades WHERE exchange = 'valr' AND pair = ${pair}`).map((t) => t.trade_id).sort();

describe('trades that share a millisecond across a page boundary', () => {
  it('are all stored by the next process when one dies after the page that ends inside them', async () => {
    const venue = venueById('valr')!;
    const target = (simUrl: string) => ({ venue, exchange: venue.create({ simUrl }), symbol: 'ETH/ZAR', pair: 'ETHZAR' });
    let calls = 0;
    const dying = async <T>(work: () => Promise<T>): Promise<T> => {
      if (++calls > 1) throw new Error('killed');
      return work();
    };
    await expect(collect(db.sql, target(sim.url), dying, { startAt: now - 3_600_000 })).rejects.toThrow('killed');
    const first = await storedIds('ETHZAR');
    // the first page: 95 trades and the whole sweep (a page runs to the end of its last millisecond)
    expect(first).toHaveLength(125);
    // a fresh process: the watermark and the ids stored at its millisecond come from the database
    const result = await collect(db.sql, target(sim.url), (work) => work(), { startAt: now - 3_600_000 });
    expect(result.inserted).toBe(5 + 130 + 3);
    expect(await storedIds('ETHZAR')).toEqual([...ids.ETHZAR!].sort());
  });

  it('are all stored, once each, by one cycle and by the next', async () => {
    const config = loadConfig({ MARKET: 'simulated', SIM_URL: sim.url, AFRATES_VAR_DIR: dir });
    const pipeline = new Pipeline({ config, log: testLog, sql: db.sql, venues, unpaced: true, initialLookbackMs: 3_600_000 });
    try {
      const first = await pipeline.runTradeCycle();
      expect(first.errors).toEqual([]);
      await pipeline.runTradeCycle();
    } finally {
      await pipeline.stop();
    }
    expect(await storedIds('BTCZAR')).toEqual([...ids.BTCZAR!].sort());
  });
});
