// A trade the simulated market offers reaches an SSE client of the API as soon as the venue's stream
// delivers it, with the REST cycle asleep (CYCLE_SECONDS=300), so nothing but the stream, the
// writer's notice and the snapshot's rebuild can have carried it. On a TimescaleDB server
// (TEST_DATABASE_URL) the pipeline and the API are two services with their own connections, and the
// API hears of the trade by the database's NOTIFY; on the embedded database one service runs both.
// Health and status say which venues stream and which are on REST alone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../bin/service.js';
import { loadConfig } from '../../lib/config.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { openStream } from '../api/sse-client.js';
import { freshDatabaseUrl, testLog } from '../support/db.js';
import { until } from '../support/wait.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
let sim: SimMarket;
let dir: string;
let drop: (() => Promise<void>) | null = null;
const services: Service[] = [];
let api: Service;

beforeAll(async () => {
  sim = await startSimMarket({ seed: 5, historyStart: Date.now() - 20 * 60_000, streams: { pollMs: 20 } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-push-'));
  const env: Record<string, string> = {
    MARKET: 'simulated',
    SIM_URL: sim.url,
    STREAMS: '1',
    CYCLE_SECONDS: '300',
    PORT: '0',
    HOST: '127.0.0.1',
    AFRATES_VAR_DIR: dir,
    LOG_LEVEL: 'silent',
  };
  if (onServer) {
    const fresh = await freshDatabaseUrl();
    drop = fresh.drop;
    services.push(await startService(loadConfig({ ...env, DATABASE_URL: fresh.url, ROLE: 'pipeline' }), testLog));
    api = await startService(loadConfig({ ...env, DATABASE_URL: fresh.url, ROLE: 'api' }), testLog);
    services.push(api);
  } else {
    api = await startService(loadConfig({ ...env, AFRATES_DATA_DIR: path.join(dir, 'db') }), testLog);
    services.push(api);
  }
}, 180_000);

afterAll(async () => {
  for (const s of services.reverse()) await s.stop().catch(() => {});
  await drop?.();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const base = () => api.api!.url;

describe(`a streamed trade pushed to SSE clients${onServer ? ' of an API-only process' : ''}`, () => {
  it('health and status name each venue with its transport: Binance and VALR stream, Luno (no key) and Quidax on REST', async () => {
    await until('binance and valr streams open in health', async () => {
      const venues = (await (await fetch(`${base()}/v1/health`)).json()).venues as Array<{ exchange: string; transport: string; stream: { state: string } | null }> | undefined;
      const of = (id: string) => venues?.find((v) => v.exchange === id);
      return of('binance')?.stream?.state === 'open' && of('valr')?.stream?.state === 'open';
    }, 60_000, 200);
    const health = await (await fetch(`${base()}/v1/health`)).json();
    const byVenue = Object.fromEntries((health.venues as Array<{ exchange: string; transport: string }>).map((v) => [v.exchange, v.transport]));
    expect(byVenue).toMatchObject({ binance: 'stream', valr: 'stream', luno: 'rest', quidax: 'rest' });
    const key = (await api.api!.deps.keys.issue({ tier: 'free', customerName: 'status reader' })).apiKey;
    const status = await (await fetch(`${base()}/v1/status`, { headers: { 'X-API-Key': key } })).json();
    expect(Object.fromEntries((status.venues as Array<{ exchange: string; transport: string }>).map((v) => [v.exchange, v.transport]))).toEqual(byVenue);
  }, 90_000); // its wait for the streams (60 s) and the requests after it

  it("reaches an open /v1/rates/stream while the REST cycle sleeps", async () => {
    const key = (await api.api!.deps.keys.issue({ tier: 'enterprise', customerName: 'push reader' })).apiKey;
    const stream = await openStream(`${base()}/v1/rates/stream?pairs=BTCZAR&include_sources=true`, { 'X-API-Key': key });
    try {
      expect(stream.status).toBe(200);
      const connectedAt = Date.now();
      // the next BTCZAR trade VALR makes from now on: only its stream brings it within the REST cycle's 300 s
      let offered: { time: number } | undefined;
      await until('VALR trades BTCZAR', () => (offered = sim.served('valr', 'BTCZAR').find((t) => t.time > connectedAt)) !== undefined, 60_000, 10);
      const tradeTime = new Date(offered!.time).toISOString();
      let pushedAt = 0;
      for (;;) {
        const event = await stream.next(30_000);
        expect(event, 'a push carrying the trade').not.toBeNull();
        if (event!.event !== 'rates') continue;
        const valr = JSON.parse(event!.data).data.BTCZAR?.sources?.find((s: { exchange: string }) => s.exchange === 'valr');
        if (valr && Date.parse(valr.time) >= Date.parse(tradeTime)) {
          pushedAt = Date.now();
          break;
        }
      }
      // what a customer saw: the trade's time to the push that carried it (bench/ holds the latency figure)
      testLog.info({ latencyMs: pushedAt - offered!.time }, 'streamed trade pushed');
      const stored = await api.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades WHERE exchange = 'valr' AND pair = 'BTCZAR' AND time = ${new Date(offered!.time)}`;
      expect(stored[0]!.n).toBe(1);
    } finally {
      stream.close();
    }
    // its own waits (the market's next VALR trade, up to 60 s; then each push, up to 30 s) bound
    // it, not the suite's default: on a slow, busy machine the trade alone can take most of a minute
  }, 180_000);
});
