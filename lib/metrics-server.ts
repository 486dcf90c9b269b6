// The metrics listener: GET /metrics in Prometheus' text format, on a port of its own (METRICS_PORT),
// never on the API's public port. It binds loopback unless METRICS_HOST says otherwise (a scraper in
// another container or on another host), and with METRICS_TOKEN set it answers only a request
// carrying `Authorization: Bearer <token>` (docs/decisions.md, "Metrics on a listener of their own").
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './log.js';

export interface MetricsSource {
  readonly contentType: string;
  /** The exposition, made at each scrape. */
  render(): Promise<string>;
}

export interface MetricsListenerOptions {
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
}

export interface MetricsHandle {
  readonly url: string;
  close(): Promise<void>;
}

const digest = (text: string) => crypto.createHash('sha256').update(text).digest();

export async function startMetricsServer(source: MetricsSource, opts: MetricsListenerOptions, log: Logger): Promise<MetricsHandle> {
  const expected = opts.token === undefined ? null : digest(`Bearer ${opts.token}`);
  const server = http.createServer((req, res) => {
    const send = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
      res.end(text);
    };
    // compared as digests: the same length whatever was sent, in constant time
    if (expected && !crypto.timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      return send(401, 'unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname !== '/metrics') return send(404, 'not found: the metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    source.render().then(
      (text) => send(200, req.method === 'HEAD' ? '' : text, { 'Content-Type': source.contentType }),
      (err: unknown) => {
        log.error({ err }, 'metrics not rendered');
        send(500, 'the metrics could not be rendered; the service log says why\n');
      },
    );
  });
  server.keepAliveTimeout = 65_000; // Prometheus keeps its connection between scrapes
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`METRICS_PORT ${opts.port} is taken on ${opts.host}: pick another`) : err),
    );
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const url = `http://${shown}:${port}/metrics`;
  // says whether a token guards the listener, under a name the log's redaction leaves alone (a
  // field named `token` is always censored, so `false` would read "[redacted]" as if one were set)
  log.info({ url, host: opts.host, auth: expected ? 'bearer token (METRICS_TOKEN)' : 'none' }, 'metrics listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
