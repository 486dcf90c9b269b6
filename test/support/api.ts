// A running API over HTTP on a fresh database, with market data in it and a key per tier: the
// service's own process and API part (lib/process.ts, api/process.ts), as the tests and the
// benchmarks run it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../lib/config.js';
import { withoutStatementTimeout, type Database } from '../../lib/db/connect.js';
import type { TradeNotices } from '../../lib/db/notices.js';
import type { ReadRouter } from '../../lib/db/replicas.js';
import type { Logger } from '../../lib/log.js';
import type { Lookup } from '../../lib/webhooks/addresses.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { publishing } from '../../pipeline/records.js';
import { startApiPart, type ApiPart } from '../../api/process.js';
import { READING_MS as HEALTH_READING_MS } from '../../api/routes/health.js';
import type { RunningApi } from '../../api/server.js';
import type { ServiceMetrics } from '../../lib/metrics.js';
import { openProcess } from '../../lib/process.js';
import { publishDueFixings, settle } from '../../pipeline/publish.js';
import { settlementAt } from '../../pipeline/settle.js';
import type { Tier } from '../../lib/tiers.js';
import { insertFxRates, insertTrades, type TradeRow } from '../../pipeline/store.js';
import { openTestDatabase, testLog } from './db.js';
import { generateFx, generateTrades } from './market.js';

export interface TestApi {
  readonly api: RunningApi;
  readonly db: Database;
  readonly config: Config;
  readonly keys: Record<Tier, string>;
  readonly trades: TradeRow[];
  /** the time the harness settled and certified by, as a cycle at that moment would */
  readonly settledAt: Date;
  readonly start: Date;
  readonly redis: Redis | null;
  /** The prefix of this API's Redis keys (its deployment's: the label given and its database's digest). */
  readonly namespace: string;
  /** The API's metrics, recorded as the service records them with METRICS_PORT set. */
  readonly metrics: ServiceMetrics;
  /** The process's trade notices, which its live snapshot hears: a writer in this process announces on them. */
  readonly notices: TradeNotices;
  /** A new key of that tier, with its own rate-limit budget. */
  key(tier: Tier): Promise<string>;
  get(path: string, key?: string | null, headers?: Record<string, string>): Promise<HttpResult>;
  /**
   * Resolves once health's last reading (of the database and Redis) has expired, so its next
   * answer reads them anew. Health takes a reading at most once a second by the clock
   * (api/routes/health.ts): this waits out what is left of that second since the last health
   * answer `get` received.
   */
  healthReadingExpired(): Promise<void>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  close(): Promise<void>;
}

export interface HttpResult {
  readonly status: number;
  readonly headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
}

export const LISTINGS = {
  BTCNGN: ['luno', 'quidax'],
  ETHNGN: ['luno'],
  USDTNGN: ['luno', 'quidax'],
  BTCZAR: ['luno', 'valr', 'binance'],
  BTCUSDT: ['binance'],
  ETHUSDT: ['binance'],
} as const;

export async function request(base: string, method: string, urlPath: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<HttpResult> {
  const res = await fetch(`${base}${urlPath}`, { method, headers: init.headers, body: init.body });
  if (res.ok && res.headers.get('content-type')?.startsWith('text/event-stream')) {
    // a stream never ends: its status and headers are the answer here (stream tests read it themselves)
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, body: undefined };
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: the test will say so */
  }
  return { status: res.status, headers: res.headers, body };
}

export interface TestApiOptions {
  /** hours of history ending now (default 6) */
  readonly hours?: number;
  readonly withRedis?: boolean;
  /** another Redis than 127.0.0.1:6379 (e.g. one that is down) */
  readonly redisUrl?: string;
  readonly db?: Database;
  readonly namespace?: string;
  readonly env?: Record<string, string>;
  /** the limiter's and key cache's clock */
  readonly now?: () => number;
  /** publish the fixings the seeded market makes due (their hours settled), as the pipeline would */
  readonly fixings?: boolean;
  /** the service's logger (default: the tests', silent unless TEST_LOG_LEVEL says otherwise) */
  readonly log?: Logger;
  /** a failure the process cannot run on (lib/process.ts onFatal): what the service would stop for */
  readonly onFatal?: (reason: Error) => void;
  /** how webhook URLs' hosts resolve at registration (default: the system's resolver) */
  readonly webhookLookup?: Lookup;
  /** read replicas (lib/db/replicas.ts), opened and closed by the test (default: every read on the primary) */
  readonly read?: ReadRouter;
}

/** Trades up to now (so live rates are fresh), FX, venue listings, aggregates refreshed. */
export async function seedMarket(db: Database, hours: number): Promise<{ trades: TradeRow[]; start: Date }> {
  const now = Date.now();
  const start = new Date(Math.floor((now - hours * 3_600_000) / 3_600_000) * 3_600_000);
  const hoursOfData = (now - 30_000 - start.getTime()) / 3_600_000;
  const { BTCUSDT, ETHUSDT, ...local } = LISTINGS;
  // the USDT legs trade in every 5-minute bucket, as Binance's do: a synthetic price is there for
  // every candle (the local books are sparse: some buckets without a trade)
  const trades = [
    ...generateTrades({ seed: 11, start, hours: hoursOfData, listings: local, tradesPerHour: 24 }),
    ...generateTrades({ seed: 12, start, hours: hoursOfData, listings: { BTCUSDT, ETHUSDT }, tradesPerHour: 180 }),
  ].sort((a, b) => a.time.getTime() - b.time.getTime());
  const stored = await insertTrades(db.sql, trades);
  await insertFxRates(db.sql, generateFx(start, hours + 1));
  await withoutStatementTimeout(db.sql, (conn) => refreshAggregates(conn)); // as the pipeline refreshes
  for (const [pair, venues] of Object.entries(LISTINGS)) {
    for (const venue of venues) {
      await db.sql`INSERT INTO venue_markets (exchange, pair, symbol) VALUES (${venue}, ${pair}, ${pair}) ON CONFLICT DO NOTHING`;
      const last = trades.filter((t) => t.pair === pair && t.exchange === venue).at(-1)?.time ?? null;
      await db.sql`
        INSERT INTO venue_health (exchange, pair, last_attempt_at, last_success_at, last_trade_at, consecutive_failures)
        VALUES (${venue}, ${pair}, now(), now(), ${last}, 0) ON CONFLICT DO NOTHING`;
    }
  }
  await db.sql`
    INSERT INTO ingest_cycles (kind, market, started_at, finished_at, rows_by_source)
    VALUES ('trades', 'real', now(), now(), '{"luno": 10, "quidax": 4}'), ('fx', 'real', now(), now(), '{"coinbase": 5}')`;
  return { trades, start };
}

/**
 * A whole UTC month (`YYYY-MM`) of BTCNGN trades (luno, quidax) and the BTCUSDT leg (binance) its
 * synthetic price reads, with FX, aggregates refreshed: `tradesPerHour` per venue.
 */
export async function seedMonth(db: Database, month: string, tradesPerHour: number): Promise<{ from: Date; to: Date; trades: number }> {
  const from = new Date(`${month}-01T00:00:00Z`);
  const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  const hours = (to.getTime() - from.getTime()) / 3_600_000;
  const trades = generateTrades({ seed: 29, start: from, hours, listings: { BTCNGN: ['luno', 'quidax'], BTCUSDT: ['binance'] }, tradesPerHour });
  await insertTrades(db.sql, trades);
  await insertFxRates(db.sql, generateFx(from, hours + 1));
  await withoutStatementTimeout(db.sql, (conn) => refreshAggregates(conn)); // as the pipeline refreshes
  return { from, to, trades: trades.length };
}

export async function startTestApi(opts: TestApiOptions = {}): Promise<TestApi> {
  const db = opts.db ?? (await openTestDatabase());
  // a second instance on the same database finds the market already there
  const { trades, start } = opts.db ? { trades: [], start: new Date() } : await seedMarket(db, opts.hours ?? 6);
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-api-'));
  const redisUrl = opts.redisUrl ?? (opts.withRedis ? 'redis://127.0.0.1:6379' : undefined);
  // the service's settings, with its listener on a free loopback port and METRICS_PORT set: every
  // test and the api bench pay for the metrics as such a service does (nothing listens for them here)
  const config = loadConfig({ AFRATES_VAR_DIR: varDir, LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', ...(redisUrl ? { REDIS_URL: redisUrl } : {}), ...opts.env });
  // the service's process and API part (lib/process.ts, api/process.ts), on this database
  const proc = await openProcess(config, opts.log ?? testLog, { database: db, onFatal: opts.onFatal });
  let part: ApiPart;
  const settledAt = new Date();
  try {
    if (!opts.db) {
      // what the pipeline does after a cycle: settle (by the lag: no venue has reported where it
      // stands) and certify the settled buckets, signed with this server's keys
      const { certifier } = publishing({ config, log: proc.log, sql: db.sql, signer: proc.signer });
      const now = settledAt;
      await settle(db.sql, await settlementAt(db.sql, now, config.settleAfterSeconds), certifier, now);
      if (opts.fixings) await publishDueFixings(db.sql, certifier, new Date());
    }
    part = await startApiPart(proc, { namespace: opts.namespace ?? `t${crypto.randomBytes(4).toString('hex')}`, now: opts.now, webhookLookup: opts.webhookLookup, read: opts.read });
  } catch (err) {
    await proc.stop().catch(() => {});
    if (!opts.db) await db.close().catch(() => {});
    fs.rmSync(varDir, { recursive: true, force: true });
    throw err;
  }
  const { api } = part;
  const { deps } = api;
  const keys = {} as Record<Tier, string>;
  let healthAnsweredAt = 0;
  for (const tier of ['free', 'builder', 'professional', 'enterprise'] as const) {
    keys[tier] = (await deps.keys.issue({ tier, customerName: `${tier} customer`, email: `${tier}+${crypto.randomBytes(4).toString('hex')}@example.test` })).apiKey;
  }
  return {
    api,
    db,
    config,
    keys,
    trades,
    start,
    settledAt,
    redis: deps.redis,
    namespace: deps.keys.scope!.prefix,
    metrics: proc.metrics!,
    notices: proc.notices,
    key: async (tier) => (await deps.keys.issue({ tier, customerName: `${tier} customer` })).apiKey,
    async get(p, key, headers = {}) {
      const res = await request(api.url, 'GET', p, { headers: { ...(key ? { 'X-API-Key': key } : {}), ...headers } });
      if (p.startsWith('/v1/health')) healthAnsweredAt = Date.now(); // its reading was taken at or before this
      return res;
    },
    async healthReadingExpired() {
      const expired = healthAnsweredAt + HEALTH_READING_MS + 1;
      while (Date.now() < expired) await new Promise((r) => setTimeout(r, expired - Date.now()));
    },
    post: (p, body, headers = {}) =>
      request(api.url, 'POST', p, { headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    async close() {
      // every step, even when one before it fails (a test that ended the pool): no database left behind
      try {
        await proc.stop();
      } finally {
        try {
          if (!opts.db) await db.close();
        } finally {
          fs.rmSync(varDir, { recursive: true, force: true });
        }
      }
    },
  };
}
