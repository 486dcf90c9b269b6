// Builds the API's dependencies and serves it over HTTP.
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Sql } from '../lib/db/connect.js';
import type { Logger } from '../lib/log.js';
import { createApp } from './app.js';
import { createSigner, type CertificateSigner } from './certificates/signer.js';
import type { AppDeps, PairInfo } from './context.js';
import { KeyStore } from './keys/store.js';
import { RateLimiter } from './limits/limiter.js';
import { LiveSnapshot } from './live/snapshot.js';
import { RequestMetrics } from './middleware/metrics.js';

export interface RunningApi {
  readonly url: string;
  readonly deps: AppDeps;
  close(): Promise<void>;
}

export function connectRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: false, lazyConnect: false });
  redis.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
  return redis;
}

export async function buildDeps(config: Config, log: Logger, sql: Sql, opts: { snapshot?: LiveSnapshot; signer?: CertificateSigner; redis?: Redis | null; namespace?: string; now?: () => number } = {}): Promise<AppDeps> {
  const redis = opts.redis !== undefined ? opts.redis : config.redisUrl ? connectRedis(config.redisUrl, log) : null;
  const pairs = await sql<PairInfo[]>`SELECT pair, base, quote FROM pairs WHERE visibility = 'public' ORDER BY pair`;
  const snapshot = opts.snapshot ?? new LiveSnapshot(sql, log);
  return {
    config,
    log,
    sql,
    redis,
    keys: new KeyStore(sql, redis, opts.now, opts.namespace),
    limiter: new RateLimiter(sql, redis, log, opts.now, opts.namespace),
    snapshot,
    metrics: new RequestMetrics(),
    signer: opts.signer ?? createSigner({ hmacSecret: config.certSecret, ed25519PrivateKeyPem: config.certEd25519Key, keyDir: path.join(config.varDir, 'keys') }),
    startedAt: new Date(),
    pairs: new Map(pairs.map((p) => [p.pair, p])),
  };
}

export async function startApi(deps: AppDeps, host = deps.config.host, port = deps.config.port): Promise<RunningApi> {
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  deps.limiter.startFlushing();
  const { port: actual } = server.address() as AddressInfo;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${actual}`;
  deps.log.info({ url }, 'API listening');
  return {
    url,
    deps,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await deps.limiter.close();
      deps.snapshot.stop();
      if (deps.redis) deps.redis.disconnect();
    },
  };
}
