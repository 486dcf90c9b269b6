// A migration that rebuilds the 5-minute aggregate (and the hourly and daily ones on it) on a
// server while clients page history over HTTP: every page answered is whole and the same as before
// the migration, or a 503 with Retry-After; never a 200 with candles missing. A change to settled
// candles is refused without consent, and with it each is served as a restatement. (On the embedded
// database one process owns the database and migrates before it serves: migrate.test.ts shows
// what is served up to the swap there.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, SQL_DIR } from '../../../lib/db/migrate.js';
import { refreshAggregates } from '../../../lib/db/refresh.js';
import { startTestApi, type HttpResult, type TestApi } from '../../support/api.js';
import { testLog } from '../../support/db.js';

const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
/** What a candle publishes (not what depends on the clock, as `settled` does). */
const published = (res: HttpResult) =>
  (res.body.data as Record<string, unknown>[]).map((c) => [c.time, c.open, c.high, c.low, c.close, c.vwap, c.total_volume].join(' '));

describe.skipIf(!process.env.TEST_DATABASE_URL)('changing the aggregates of a database the API serves (needs TEST_DATABASE_URL: on the embedded database one process migrates before it serves)', () => {
  let t: TestApi;
  let sqlDir: string;

  beforeAll(async () => {
    t = await startTestApi({ hours: 24 });
    sqlDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-sql-'));
    fs.cpSync(SQL_DIR, sqlDir, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    if (sqlDir) fs.rmSync(sqlDir, { recursive: true, force: true });
  });

  it('answers every page whole and unchanged, or 503 with Retry-After, never part of one', async () => {
    const pages = ['5m', '15m', '1h', '1d'].flatMap((interval) =>
      ['BTCNGN', 'BTCZAR'].map((pair) => `/v1/rates/historical?pair=${pair}&start=${day(-2)}&end=${day(1)}&interval=${interval}&limit=1000`),
    );
    const key = t.keys.enterprise;
    const before: HttpResult[] = [];
    for (const p of pages) before.push(await t.get(p, key));
    for (const [i, res] of before.entries()) {
      expect(res.status, pages[i]).toBe(200);
      expect(res.body.data.length, pages[i]).toBeGreaterThan(0);
    }
    expect(before[0]!.body.data.length, 'a day of 5-minute candles').toBeGreaterThan(200);

    // the engineer's change: 5-minute candles carry their buy volume (nothing published changes)
    const file = path.join(sqlDir, 'aggregates', '20_candles_5m.sql');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('count(*)             AS trades,', "count(*)             AS trades,\n       sum(amount) FILTER (WHERE side = 'buy') AS buy_volume,"));

    let migrating = true;
    const wrong: string[] = [];
    let whole = 0;
    let unavailable = 0;
    const reader = async () => {
      const own = await t.key('enterprise'); // each reader its own customer's share
      while (migrating) {
        for (const [i, p] of pages.entries()) {
          let res: HttpResult;
          try {
            res = await t.get(p, own);
          } catch (err) {
            wrong.push(`${p}: ${(err as Error).message} (${String((err as { cause?: unknown }).cause)})`);
            continue;
          }
          if (res.status === 503 && Number(res.headers.get('retry-after')) > 0) unavailable++;
          else if (res.status === 200 && published(res).join('\n') === published(before[i]!).join('\n')) whole++;
          else wrong.push(`${p}: ${res.status}, ${res.body?.data?.length ?? JSON.stringify(res.body)} candles of ${before[i]!.body.data.length}`);
        }
      }
    };
    const readers = Array.from({ length: 4 }, reader);
    const { applied } = await migrate(new URL(t.db.url).toString(), testLog, sqlDir).finally(() => (migrating = false));
    await Promise.all(readers);

    expect(applied).toEqual(expect.arrayContaining(['aggregates/20_candles_5m.sql', 'aggregates/30_candles_1h.sql', 'aggregates/40_candles_1d.sql']));
    expect(wrong).toEqual([]);
    expect(whole, 'the readers read while the migration ran').toBeGreaterThan(pages.length * 4);
    testLog.info({ whole, unavailable }, 'pages read during the rebuild');
    // and after it, and after the pipeline's next refresh pass: the same pages
    for (const [i, p] of pages.entries()) expect(published(await t.get(p, key))).toEqual(published(before[i]!));
    await refreshAggregates(t.db.sql);
    for (const [i, p] of pages.entries()) expect(published(await t.get(p, key))).toEqual(published(before[i]!));
  }, 180_000);

  it('refuses a formula change to settled candles without consent; with it, GET /v1/restatements shows each changed candle with its reason', async () => {
    const page = `/v1/rates/historical?pair=BTCNGN&start=${day(-2)}&end=${day(1)}&interval=1h&limit=1000`;
    const before = await t.get(page, t.keys.enterprise);
    const file = path.join(sqlDir, 'aggregates', '30_candles_1h.sql');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('sum(pv)                     AS pv,', 'avg(pv / volume) * sum(volume) AS pv,'));
    await expect(migrate(t.db.url, testLog, sqlDir)).rejects.toThrow(/refused: this change alters settled, published candles: candles_1h: \d+ settled candles change/);
    expect(published(await t.get(page, t.keys.enterprise))).toEqual(published(before));
    expect((await t.get('/v1/restatements?pair=BTCNGN', t.keys.free)).body.count).toBe(0);

    await migrate(t.db.url, testLog, sqlDir, { restate: 'hourly VWAP as the mean of 5-minute VWAPs' });
    const after = await t.get(page, t.keys.enterprise);
    const [settled] = await t.db.sql<{ through: Date }[]>`SELECT settled_through AS through FROM pair_settlement WHERE pair = 'BTCNGN'`;
    const was = new Map((before.body.data as { time: string; vwap: number }[]).map((c) => [c.time, c.vwap]));
    const moved = (after.body.data as { time: string; vwap: number }[]).filter((c) => Date.parse(c.time) + 3_600_000 <= settled!.through.getTime() && was.get(c.time) !== c.vwap);
    expect(moved.length).toBeGreaterThan(0);
    const res = await t.get('/v1/restatements?pair=BTCNGN&limit=1000', t.keys.free);
    expect(res.status).toBe(200);
    const restated = res.body.restatements as { subject: string; time: string; restated: string; reason: { late_trades: unknown[]; aggregate_change?: { reason: string; files: string[] } } }[];
    // every settled hour whose published VWAP moved is restated, with the reason and the file
    for (const c of moved) expect(restated.some((r) => r.subject === 'candle_1h' && r.time === c.time), c.time).toBe(true);
    for (const r of restated) {
      expect(r.reason.aggregate_change?.reason).toBe('hourly VWAP as the mean of 5-minute VWAPs');
      expect(r.reason.aggregate_change?.files).toEqual(['aggregates/30_candles_1h.sql']);
      expect(r.reason.late_trades).toEqual([]);
    }
  }, 180_000);
});
