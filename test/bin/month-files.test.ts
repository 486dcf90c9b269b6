// Month files as the service makes them (bin/service.ts): after a cycle, the process that runs the
// pipeline makes the export files of complete months that have none, a few a run, so that a
// month's first request finds its file kept (X-Export-Cache: hit) and the same bytes as a file
// made on request.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { startService, type Service } from '../../bin/service.js';
import { INTERVAL_NAMES } from '../../lib/intervals.js';
import { seedMonth } from '../support/api.js';
import { testLog } from '../support/db.js';

const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-month-files-'));
let sim: SimMarket;
let service: Service;
/** Two months before this one: complete, and settled once the pair is settled up to now. */
const month = (() => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1)).toISOString().slice(0, 7);
})();

beforeAll(async () => {
  sim = await startSimMarket({ seed: 7, historyStart: Date.now() - 30 * 60_000 });
  const config = loadConfig({ AFRATES_VAR_DIR: varDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', MARKET: 'simulated', SIM_URL: sim.url, LOG_LEVEL: 'silent' });
  service = await startService(config, testLog, { collect: false });
  // a cycle settles the pair up to now first; the month's trades then arrive as late ones (a
  // backfill), which settle nothing anew
  await service.pipeline!.runTradeCycle();
  await seedMonth(service.db, month, 2);
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await sim?.stop();
  fs.rmSync(varDir, { recursive: true, force: true });
});

describe('the service', () => {
  it("makes complete months' files after a cycle, before anyone asks, and a request then finds them kept", async () => {
    const sql = service.db.sql;
    expect((await sql`SELECT count(*)::int AS n FROM month_files`)[0]!.n).toBe(0);
    await service.pipeline!.runTradeCycle();
    // made on its own after each cycle, 6 files a run, the newest complete month first (last month,
    // no candles), then `month`: a file per interval and format each
    const kept = async () => (await sql`SELECT count(*)::int AS n FROM month_files`)[0]!.n;
    await expect.poll(kept, { timeout: 60_000 }).toBe(6);
    const all = 2 * INTERVAL_NAMES.length * 2;
    for (let made = 6; made < all; ) {
      await service.pipeline!.runTradeCycle();
      made = Math.min(all, made + 6);
      await expect.poll(kept, { timeout: 60_000 }).toBe(made);
    }
    await expect.poll(async () => (await sql<{ month: string }[]>`SELECT DISTINCT to_char(month, 'YYYY-MM') AS month FROM month_files`).map((r) => r.month), { timeout: 60_000 }).toContain(month);

    const key = (await service.api!.deps.keys.issue({ tier: 'builder', customerName: 'Month Files' })).apiKey;
    const get = async () => {
      const res = await fetch(`${service.api!.url}/v1/exports/candles?pair=BTCNGN&month=${month}&interval=1h&format=csv`, { headers: { 'X-API-Key': key } });
      return { status: res.status, cache: res.headers.get('x-export-cache'), bytes: Buffer.from(await res.arrayBuffer()) };
    };
    const hit = await get();
    expect(hit.status).toBe(200);
    expect(hit.cache).toBe('hit');
    await sql`DELETE FROM month_files`;
    const made = await get();
    expect(made.cache).toBe('miss');
    expect(made.bytes.equals(hit.bytes)).toBe(true);
  });
});
