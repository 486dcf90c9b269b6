// The operator's view of /metrics: the service (as `make run` starts it, on the simulated market)
// with METRICS_PORT and METRICS_TOKEN set runs a cycle and answers a few requests; a scrape over
// HTTP then shows every count moved by what happened, requests counted under their route's
// template (never a path a client sent), the cycle's figures by venue agreeing with what the
// database holds, and the endpoint refusing a scrape without the token and absent from the public
// port. The Grafana dashboard reads only metrics the scrape exposes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceMetrics } from '../../lib/metrics.js';
import { startService, type Service } from '../../bin/service.js';
import { ConfigError, loadConfig } from '../../lib/config.js';
import { venues } from '../../pipeline/venues/index.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { request } from '../support/api.js';
import { freshDatabaseUrl, testLog } from '../support/db.js';
import { startReceiver, type Receiver } from '../support/webhooks.js';
import { until } from '../support/wait.js';

const root = path.resolve(import.meta.dirname, '../..');
const TOKEN = 'metrics-test-token-0123456789abcdef';

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

interface Scrape {
  readonly samples: readonly Sample[];
  /** metric family -> type, from the # TYPE lines */
  readonly types: ReadonlyMap<string, string>;
}

const unescape = (v: string) => v.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));

/** Prometheus' text format (0.0.4): # TYPE lines and samples; # HELP and blank lines skipped. */
function parse(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    const pattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    let read = 0;
    for (let l = pattern.exec(body); l; l = pattern.exec(body)) {
      labels[l[1]!] = unescape(l[2]!);
      read = pattern.lastIndex;
    }
    if (read !== body.length) throw new Error(`labels not read to the end: ${line}`);
    const raw = m[3]!;
    samples.push({ name: m[1]!, labels, value: raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw) });
  }
  return { samples, types };
}

/** The samples of `name` whose labels include `labels`. */
function find(s: Scrape, name: string, labels: Record<string, string> = {}): Sample[] {
  return s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
}

/** The one sample of `name` with exactly these labels' values (0 when absent: a counter not yet moved). */
function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = find(s, name, labels).filter((x) => Object.keys(x.labels).filter((k) => k !== 'le').length === Object.keys(labels).filter((k) => k !== 'le').length);
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0]?.value ?? 0;
}

/** Every metric name a scrape exposes: its families, and a histogram's or summary's series even before an observation. */
function exposed(s: Scrape): Set<string> {
  const names = new Set(s.samples.map((x) => x.name));
  for (const [family, type] of s.types) {
    names.add(family);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(family + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(family + suffix);
  }
  return names;
}

describe('GET /metrics on the metrics listener', () => {
  let sim: SimMarket;
  let service: Service;
  let varDir: string;
  let dropDatabase: (() => Promise<void>) | undefined;
  let receiver: Receiver;

  const scrape = async (headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }) => {
    const res = await fetch(service.metrics!.url, { headers });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const metrics = async () => {
    const r = await scrape();
    expect(r.status, r.text).toBe(200);
    return parse(r.text);
  };
  const get = async (p: string, key?: string) => {
    const res = await fetch(`${service.api!.url}${p}`, { headers: key ? { 'X-API-Key': key } : {} });
    await res.arrayBuffer();
    return res.status;
  };

  beforeAll(async () => {
    sim = await startSimMarket({ seed: 26, historyStart: Date.now() - 30 * 60_000 });
    receiver = await startReceiver();
    varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-metrics-'));
    // the embedded database (on disk, as make run keeps it), or a server's with TEST_DATABASE_URL
    const server = process.env.TEST_DATABASE_URL ? await freshDatabaseUrl() : null;
    dropDatabase = server?.drop;
    const config = loadConfig({
      AFRATES_VAR_DIR: varDir,
      ...(server ? { DATABASE_URL: server.url } : {}),
      MARKET: 'simulated',
      SIM_URL: sim.url,
      HOST: '127.0.0.1',
      PORT: '0',
      ADMIN_PORT: '0',
      METRICS_PORT: '0',
      METRICS_TOKEN: TOKEN,
      WEBHOOKS_ALLOW_PRIVATE: '1', // the receiver is on loopback
    });
    service = await startService(config, testLog, { collect: false });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
    await sim?.stop();
    await dropDatabase?.();
    fs.rmSync(varDir, { recursive: true, force: true });
  });

  it('refuses a scrape without the token, and is not on the public port', async () => {
    expect(service.metrics!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(service.metrics!.url).port).not.toBe(new URL(service.api!.url).port);
    const refused: Record<string, string>[] = [{}, { Authorization: 'Bearer wrong-token-0123456789abcdef' }, { Authorization: TOKEN }];
    for (const headers of refused) {
      const r = await scrape(headers);
      expect(r.status).toBe(401);
      expect(r.text).not.toContain('afrates_');
    }
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
    // the API's port has no such path, with or without the token
    const pub = await fetch(`${service.api!.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(pub.status).toBe(404);
    expect(await pub.text()).not.toContain('afrates_http_requests_total');
  });

  it('counts a cycle by venue as the database records it, and requests under their route templates', async () => {
    const before = await metrics();
    expect(value(before, 'afrates_cycle_duration_seconds_count', { kind: 'publish' })).toBe(0);

    await service.pipeline!.runTradeCycle();
    const sql = service.db.sql;
    const trades = new Map((await sql<{ exchange: string; n: number }[]>`SELECT exchange, count(*)::int AS n FROM trades GROUP BY exchange`).map((r) => [r.exchange, r.n]));
    const certificates = (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM certificates`)[0]!.n;
    const late = (await sql<{ n: number }[]>`SELECT coalesce(sum(trades), 0)::int AS n FROM late_trades`)[0]!.n;
    const settled = await sql<{ pair: string; settled_through: Date }[]>`SELECT pair, settled_through FROM pair_settlement`;
    expect([...trades.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(certificates).toBeGreaterThan(0);
    expect(settled.length).toBeGreaterThan(0);

    // requests: live rates, an unknown path, a certificate by its parameters, and a free key past its minute
    const keys = service.api!.deps.keys;
    const enterprise = (await keys.issue({ tier: 'enterprise', customerName: 'metrics' })).apiKey;
    const free = (await keys.issue({ tier: 'free', customerName: 'metrics free' })).apiKey;
    for (let i = 0; i < 3; i++) expect(await get('/v1/rates/live?pairs=BTCNGN', enterprise)).toBe(200);
    expect(await get('/v1/no-such-thing/BTCNGN?x=1', enterprise)).toBe(404);
    const certStatus = await get('/v1/certificates/BTCNGN/2020-01-01T00:00:00Z', enterprise);
    expect([400, 404]).toContain(certStatus);
    const freeStatuses: number[] = [];
    // the free tier's 10 a minute: at most 25 tries, in case the minute turns during them
    while (freeStatuses.filter((s) => s === 429).length === 0 && freeStatuses.length < 25) freeStatuses.push(await get('/v1/pairs', free));
    const free200 = freeStatuses.filter((s) => s === 200).length;
    const free429 = freeStatuses.filter((s) => s === 429).length;
    expect(free429).toBe(1);

    const after = await metrics();
    const moved = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);

    // the cycle, by venue: runs, trades (every trade in this fresh database came from this cycle), failures, late trades
    expect(moved('afrates_cycle_duration_seconds_count', { kind: 'publish' })).toBe(1);
    expect(value(after, 'afrates_cycle_duration_seconds_sum', { kind: 'publish' })).toBeGreaterThan(0);
    expect(value(after, 'afrates_cycle_last_timestamp_seconds', { kind: 'publish' })).toBeGreaterThan(Date.now() / 1000 - 120);
    for (const venue of venues.map((v) => v.id)) {
      expect(moved('afrates_venue_run_duration_seconds_count', { venue }), venue).toBe(1);
      expect(moved('afrates_trades_inserted_total', { venue }), venue).toBe(trades.get(venue) ?? 0);
      expect(value(after, 'afrates_venue_failures_total', { venue }), venue).toBe(0);
      expect(find(after, 'afrates_late_trades_total', { venue }), venue).toHaveLength(1);
    }
    expect(find(after, 'afrates_late_trades_total').reduce((n, x) => n + x.value, 0)).toBe(late);
    expect(value(after, 'afrates_certificates_issued_total')).toBe(certificates);
    // settlement lag per pair: now - settled_through, as recorded
    for (const { pair, settled_through } of settled) {
      const lag = value(after, 'afrates_settlement_lag_seconds', { pair });
      const expected = (Date.now() - settled_through.getTime()) / 1000;
      expect(lag, pair).toBeGreaterThan(0);
      expect(Math.abs(lag - expected), pair).toBeLessThan(60);
    }

    // requests by route template, method and status; the latency histogram moved with them
    const live = { method: 'GET', route: '/v1/rates/live' };
    expect(moved('afrates_http_requests_total', { ...live, status: '200' })).toBe(3);
    expect(moved('afrates_http_request_duration_seconds_count', live)).toBe(3);
    expect(moved('afrates_http_request_duration_seconds_sum', live)).toBeGreaterThan(0);
    expect(moved('afrates_http_request_duration_seconds_bucket', { ...live, le: '+Inf' })).toBe(3);
    const buckets = find(after, 'afrates_http_request_duration_seconds_bucket', live).map((x) => x.value);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b)); // cumulative
    expect(moved('afrates_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBe(1);
    expect(moved('afrates_http_requests_total', { method: 'GET', route: '/v1/certificates/:pair/:timestamp', status: String(certStatus) })).toBe(1);
    expect(moved('afrates_http_requests_total', { method: 'GET', route: '/v1/pairs', status: '200' })).toBe(free200);
    expect(moved('afrates_http_requests_total', { method: 'GET', route: '/v1/pairs', status: '429' })).toBe(free429);
    expect(moved('afrates_http_rate_limited_total', { tier: 'free' })).toBe(free429);
    expect(value(after, 'afrates_http_rate_limited_total', { tier: 'enterprise' })).toBe(0);

    // no label holds what a client sent: routes are templates, web pages or the one unmatched name
    const routes = new Set(after.samples.map((x) => x.labels.route).filter((r): r is string => r !== undefined));
    for (const route of routes) {
      expect(route, route).toMatch(/^(\/[a-z0-9._:*-]*)+$|^\(unmatched\)$/);
      expect(route).not.toMatch(/BTCNGN|2020|no-such-thing|\?/);
    }
    for (const x of after.samples) for (const v of Object.values(x.labels)) expect(v).not.toMatch(/BTCNGN,|2020-01-01|no-such-thing|x=1/);

    // read at scrape time: the database, open streams, the webhook backlog; Node's own metrics
    expect(value(after, 'afrates_database_up', { kind: service.db.kind })).toBe(1);
    expect(value(after, 'afrates_database_connections_max')).toBe(service.db.kind === 'embedded' ? 1 : 10);
    expect(value(after, 'afrates_streams_open')).toBe(0);
    expect(value(after, 'afrates_webhook_deliveries_pending')).toBe(0);
    expect(value(after, 'afrates_webhook_endpoints', { state: 'enabled' })).toBe(0);
    expect(find(after, 'afrates_redis_up')).toHaveLength(0); // no REDIS_URL: nothing to report
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
      expect(find(after, name), name).toHaveLength(1);
    }
  }, 180_000);

  it('counts open event streams, and a stream refused over its cap as a 429 of its tier', async () => {
    const key = (await service.api!.deps.keys.issue({ tier: 'free', customerName: 'metrics stream' })).apiKey;
    const before = await metrics();
    const controller = new AbortController();
    const open = await fetch(`${service.api!.url}/v1/rates/stream?pairs=BTCNGN`, { headers: { 'X-API-Key': key }, signal: controller.signal });
    expect(open.status).toBe(200);
    try {
      expect(value(await metrics(), 'afrates_streams_open')).toBe(1);
      expect(await get('/v1/rates/stream?pairs=BTCNGN', key)).toBe(429); // the free tier's one stream is open
      const after = await metrics();
      expect(value(after, 'afrates_http_rate_limited_total', { tier: 'free' }) - value(before, 'afrates_http_rate_limited_total', { tier: 'free' })).toBe(1);
    } finally {
      controller.abort();
    }
  });

  it('counts webhook delivery attempts by outcome', async () => {
    const key = (await service.api!.deps.keys.issue({ tier: 'builder', customerName: 'metrics webhooks' })).apiKey;
    const post = (p: string, body?: unknown) =>
      request(service.api!.url, 'POST', p, { headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const before = await metrics();
    const made = await post('/v1/account/webhooks', { url: receiver.url, events: ['source.failing'] });
    expect(made.status).toBe(201);
    expect((await post(`/v1/account/webhooks/${made.body.endpoint.id}/test`)).status).toBe(202);
    await receiver.waitFor(1);
    // counted once the worker has the receiver's answer: wait for that, not for a time
    const delivered = async () => value(await metrics(), 'afrates_webhook_attempt_duration_seconds_count', { outcome: 'delivered' });
    await until('the delivery counted', async () => (await delivered()) > 0, 5_000, 50);
    const after = await metrics();
    expect(value(after, 'afrates_webhook_attempt_duration_seconds_count', { outcome: 'delivered' }) - value(before, 'afrates_webhook_attempt_duration_seconds_count', { outcome: 'delivered' })).toBe(1);
    expect(value(after, 'afrates_webhook_attempt_duration_seconds_count', { outcome: 'failed' })).toBe(0);
  });

  it('the Grafana dashboard reads only metrics the scrape exposes, and every panel has a query', async () => {
    const names = exposed(await metrics());
    // and what a process with REDIS_URL adds (this service runs without it)
    const withRedis = new ServiceMetrics({ defaults: false });
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    withRedis.watchApi({ streams: () => 0, redis });
    for (const name of exposed(parse(await withRedis.render()))) names.add(name);
    redis.disconnect();
    const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'docs/monitoring/grafana/dashboards/afrates.json'), 'utf8')) as {
      uid: string;
      title: string;
      panels: { title: string; type: string; targets?: { expr: string; refId: string }[] }[];
    };
    expect(dashboard.uid).toBeTruthy();
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(12);
    const used = new Set<string>();
    for (const panel of panels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const t of panel.targets!) {
        const metricsIn = t.expr.match(/\b(?:afrates|nodejs|process)_[a-z0-9_]+\b/g) ?? [];
        expect(metricsIn.length, `${panel.title}: ${t.expr}`).toBeGreaterThan(0);
        for (const m of metricsIn) {
          expect(names.has(m), `${panel.title}: ${m} is not exposed`).toBe(true);
          used.add(m);
        }
      }
    }
    // what the issue asks the dashboard to show
    for (const m of [
      'afrates_http_requests_total',
      'afrates_http_request_duration_seconds_bucket',
      'afrates_http_rate_limited_total',
      'afrates_cycle_duration_seconds_bucket',
      'afrates_trades_inserted_total',
      'afrates_venue_failures_total',
      'afrates_settlement_lag_seconds',
      'afrates_late_trades_total',
      'afrates_certificates_issued_total',
      'afrates_streams_open',
      'afrates_webhook_deliveries_pending',
      'nodejs_eventloop_lag_p99_seconds',
      'process_resident_memory_bytes',
    ]) {
      expect(used.has(m), m).toBe(true);
    }
  });
});

describe("Redis' state at scrape time", () => {
  it('is 1 while the connection is ready and 0 once it is closed', async () => {
    const metrics = new ServiceMetrics({ defaults: false });
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
    metrics.watchApi({ streams: () => 0, redis });
    expect(value(parse(await metrics.render()), 'afrates_redis_up')).toBe(0); // not connected yet
    await redis.connect();
    expect(value(parse(await metrics.render()), 'afrates_redis_up')).toBe(1);
    const ended = new Promise((resolve) => redis.once('end', resolve));
    await redis.quit();
    await ended;
    expect(value(parse(await metrics.render()), 'afrates_redis_up')).toBe(0);
  });
});

describe('the metrics settings', () => {
  it('are off without METRICS_PORT, loopback by default, and refuse a token too short to guard anything', () => {
    expect(loadConfig({}).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9464' })).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1', metricsToken: undefined });
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'has a space in it, 0123456789' })).toThrow(/METRICS_TOKEN/);
  });
});
