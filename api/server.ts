// Builds the API's dependencies and serves it over HTTP.
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Sql } from '../lib/db/connect.js';
import { ReadRouter } from '../lib/db/replicas.js';
import type { Logger } from '../lib/log.js';
import type { Lookup } from '../lib/webhooks/addresses.js';
import { createSecretBox, type SecretBox } from '../lib/webhooks/secrets.js';
import { createApp } from './app.js';
import { createSigner, registerSigningKey, type CertificateSigner } from '../lib/signer.js';
import type { AppDeps, PairInfo } from './context.js';
import { KeyStore } from './keys/store.js';
import { RateLimiter } from './limits/limiter.js';
import { LiveSnapshot } from '../lib/live/snapshot.js';
import { LiveJsonCache } from './live/cache.js';
import { ANSWER_HEADERS } from './middleware/headers.js';
import type { RequestObserver } from '../lib/metrics.js';
import { RequestMetrics } from './middleware/metrics.js';
import { connectRedis, scopeOf } from './redis.js';
import { EventStreams } from './sse.js';
import { publicPairs } from '../lib/live/queries.js';
import { restatementsAfter } from './queries/fixings.js';

export interface RunningApi {
  readonly url: string;
  readonly deps: AppDeps;
  close(): Promise<void>;
}

/** How long answers in flight get at shutdown before every connection is closed. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * opts.secret: the deployment's secret as the caller read it (api/process.ts watches it: lib/db/deployment.ts).
 * opts.read: the read replicas (lib/db/replicas.ts openReadRouter), opened and closed by the caller;
 * without it every read runs on `sql`. The live snapshot is built here, with the replicas as its
 * fence.
 */
export async function buildDeps(config: Config, log: Logger, sql: Sql, opts: { secret: string | undefined; read?: ReadRouter; signer?: CertificateSigner; webhookSecrets?: SecretBox; redis?: Redis | null; namespace?: string; now?: () => number; webhookLookup?: Lookup; observer?: RequestObserver; starting?: boolean; databaseAnswers?: (timeoutMs: number) => Promise<boolean> }): Promise<AppDeps> {
  const redis = opts.redis !== undefined ? opts.redis : config.redisUrl ? connectRedis(config.redisUrl, log) : null;
  const scope = scopeOf(opts.secret, opts.namespace); // this deployment's part of Redis
  const pairs: PairInfo[] = await publicPairs(sql);
  const read = opts.read ?? ReadRouter.primaryOnly(sql);
  // the snapshot reads the primary: replicas serve only what it has seen (its fence)
  // the streams push restatements as each rebuild finds them
  const snapshot = new LiveSnapshot(sql, log, { fence: read.hasReplicas ? read : undefined, restatementsAfter });
  const signer = opts.signer ?? createSigner({ hmacSecret: config.certSecret, ed25519PrivateKeyPem: config.certEd25519Key, keyDir: path.join(config.varDir, 'keys') });
  await registerSigningKey(sql, signer); // it signs live audit trails: listed before the first
  return {
    config,
    log,
    sql,
    read,
    redis,
    keys: new KeyStore(sql, redis, opts.now, scope),
    limiter: new RateLimiter(sql, redis, log, opts.now, scope.prefix),
    snapshot,
    metrics: new RequestMetrics(sql, log),
    streams: new EventStreams(snapshot, log),
    observer: opts.observer,
    signer,
    webhookSecrets: opts.webhookSecrets ?? createSecretBox({ keyHex: config.webhookSecretKey, keyDir: path.join(config.varDir, 'keys') }),
    liveJson: new LiveJsonCache(snapshot, signer),
    startedAt: new Date(),
    startup: { starting: opts.starting ?? false },
    databaseAnswers: opts.databaseAnswers,
    pairs: new Map(pairs.map((p) => [p.pair, p])),
    webhookLookup: opts.webhookLookup,
  };
}

/**
 * The answer to a request Node's HTTP parser refuses (a bad URL or header, headers too large, a
 * bad Content-Length, an unknown method, broken framing of a body, a client too slow to send it):
 * the contract's error shape, at once, then the connection is closed.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request was not received in time.']
        : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? [400, 'Bad Request', 'The request body is not valid HTTP: a chunk extension is too long.']
          : err.code === 'HPE_INVALID_EOF_STATE'
            ? [400, 'Bad Request', 'The request ended before all of it was sent.']
            : [400, 'Bad Request', 'The request is not valid HTTP (its line, headers, length, transfer coding or body framing).'];
  const body = JSON.stringify({ error: status === 408 ? 'request_timeout' : 'validation_error', message, status });
  const headers = { ...ANSWER_HEADERS, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' };
  const response = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
  if (response && !response.req.complete) {
    // The failure is in the body of the request the app holds (a bad chunk size or extension, a
    // bare LF, a transfer coding that is not chunked, a body cut short): that body will never come,
    // so the request is answered now through its own response, not when the app's wait for it
    // runs out. The connection then closes, which ends the app's read of the body.
    if (!response.headersSent) response.writeHead(status, headers).end(body);
    else if (!response.writableFinished) response.once('finish', () => socket.destroy()).once('close', () => socket.destroy());
    else socket.destroy();
    return;
  }
  if (err.code === 'HPE_INVALID_EOF_STATE') {
    // the client ended in the middle of a further request: the one in hand keeps its answer
    if (response && !response.writableFinished) response.once('finish', () => socket.destroy());
    else socket.destroy();
    return;
  }
  // a malformed request, perhaps behind one the app is still answering: that answer goes first
  const send = () =>
    socket.writable
      ? socket.end(`HTTP/1.1 ${status} ${reason}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`)
      : socket.destroy();
  if (response && !response.writableFinished) response.once('finish', send).once('close', () => socket.destroy());
  else send();
}

export async function startApi(deps: AppDeps, host = deps.config.host, port = deps.config.port): Promise<RunningApi> {
  const app = createApp(deps);
  const server = http.createServer(
    {
      // a client gets 10 s for its headers and 30 s for the whole request, checked every second
      // (Node's default check runs every 30 s, which would let slow clients hold on for up to 85 s)
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      connectionsCheckingInterval: 1_000,
      // longer than a load balancer's idle timeout (lib/config.ts): never close under a proxy's reuse
      keepAliveTimeout: deps.config.keepAliveSeconds * 1000,
      // a request without Host is refused by the envelope, in the error shape (with two Hosts)
      requireHostHeader: false,
      // the strict parser whatever NODE_OPTIONS says (--insecure-http-parser): loose framing is
      // how a request is smuggled past a proxy that reads it differently
      insecureHTTPParser: false,
    },
    app.callback(),
  );
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  deps.limiter.startFlushing();
  deps.metrics.startFlushing();
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
        deps.streams.closeAll(); // open event streams would hold the server open forever
        // A keep-alive connection busy at this moment stays open once answered (up to
        // KEEP_ALIVE_SECONDS, or for good while a load balancer keeps using it): the answers in
        // flight get a few seconds, then every connection is closed.
        const onResponse = (_req: http.IncomingMessage, res: http.ServerResponse) => res.once('finish', () => server.closeIdleConnections());
        server.on('request', onResponse);
        setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
      });
      await deps.limiter.close();
      await deps.metrics.close();
      await deps.keys.close();
      deps.snapshot.stop();
      if (deps.redis) deps.redis.disconnect();
    },
  };
}
