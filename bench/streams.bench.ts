// Venue trade streams and the pushes they feed (issue 31, item 5): three parts, each selectable by
// name (`tsx bench/streams.bench.ts sse binance`; all three by default, as `make bench` runs it).
//
// sse: trade-to-SSE latency with 1,000 clients. The test API (test/support/api.ts, 2 hours of
// market: the service's API part, its live snapshot hearing the process's trade notices); 1,000
// open GET /v1/rates/stream?pairs=BTCNGN,ETHNGN,USDTNGN held by a child process (so parsing 1,000
// streams does not share the server's event loop), 125 Enterprise keys of their own accounts, 8
// streams each (under every per-key, per-account and concurrency cap). Then ROUNDS trades, one every ~1.5 s: one luno BTCNGN trade timed now (its
// price luno's last), written through the pipeline's writer (storeTrades with the notices, as a
// stream's flush writes); each client notes when the first event whose luno source time is that
// trade's reaches it. Latency: that moment minus the moment storeTrades was called (one clock: the
// same machine). Limit: p99 under 1 s.
//
// demo: the demo's setup on a real clock: the simulated market (startSimMarket, an hour of history)
// and startService with MARKET=simulated, SIM_URL, STREAMS=1 (Luno's stream with a key, which the
// simulator takes), embedded database in a temporary data directory, pipeline collecting. Once every
// venue stream is open, one SSE client on /v1/rates/stream for every public pair luno or valr lists
// records each push; for SECONDS every trade the market made on those venues (sim.served) is
// matched to the first push whose source for that venue and pair carries its time or a later one.
// Latency: that push's arrival minus the trade's time. Limit: p90 under 2 s. (Binance's streamed
// legs are USDT pairs, not public: they move synthetic prices and are not matched here.)
//
// binance: the cost of the Binance stream at volume: a child process serves Binance's combined
// aggTrade stream on 127.0.0.1 at a fixed rate over the four USDT legs; the pipeline's own
// VenueStreamRunner (binance, its session's markets discovered from the simulator) parses and
// stores them (storeTrades, notices) into the database (embedded: its worker thread is in this
// process's CPU; a server's backends are not). CPU (process.cpuUsage) and RSS measured idle
// (connected, no trades), then at LOAD_RATE trades a second: CPU per 1,000 trades/s is the load's
// CPU over the idle's, scaled; the same at real Binance volume (SIM_VOLUME=real: ~1.66 million a
// day, 19.2 a second). No limit; reported.
//
// Run: node_modules/.bin/tsx bench/streams.bench.ts [sse] [demo] [binance]
//   BENCH_DATABASE_URL=postgres://...   sse and binance on a TimescaleDB server (a database created and dropped)
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { loadConfig } from '../lib/config.js';
import { tradeNotices } from '../lib/db/notices.js';
import { timestamp } from '../lib/format.js';
import { createLogger } from '../lib/log.js';
import { ask, check, childRole, fmt, forkChild, header, limitRow, percentile, round, runBench, table } from './support.js';

const FILE = import.meta.filename;
const nowMs = () => performance.timeOrigin + performance.now();

interface RatesEvent {
  readonly data: Record<string, { sources: { exchange: string; time: string }[] }>;
}

/** Each `rates` event of an SSE response, parsed, with the time its chunk arrived. */
function onRatesEvents(res: http.IncomingMessage, onEvent: (body: RatesEvent, at: number) => void): void {
  let buf = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    const at = nowMs();
    buf += chunk;
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      if (block.includes('event: rates')) onEvent(JSON.parse(block.slice(block.indexOf('data: ') + 6)) as RatesEvent, at);
    }
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const LIMITS = { sseP99Ms: 1_000, demoP90Ms: 2_000 };
const SSE_CLIENTS = Number(process.env.SSE_CLIENTS ?? 1_000);
const STREAMS_PER_KEY = 8;
const ROUNDS = Number(process.env.SSE_ROUNDS ?? 20);
const ROUND_MS = 1_500;
const DEMO_SECONDS = Number(process.env.DEMO_SECONDS ?? 60);
const LOAD_RATE = Number(process.env.LOAD_RATE ?? 1_000);
const LOAD_SECONDS = 20;
const IDLE_SECONDS = 8;
const REAL_BINANCE_PER_SECOND = 1_660_000 / 86_400;

type Row = readonly (string | number)[];
const figures: Row[] = [['figure', 'value', 'limit', 'ratio']];
const json: Record<string, unknown> = { bench: 'streams', at: new Date().toISOString() };

const forkRole = (role: string, args: string[] = []) => forkChild(FILE, role, args);

// ---------------------------------------------------------------------------------------------
// child: the SSE clients

/** Splits an event stream into events, and hands each `rates` event's luno BTCNGN source time on. */
async function sseClients(): Promise<void> {
  // per connection: luno's BTCNGN source time (its text) -> when an event first carried it
  const perConn: Map<string, number>[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let events = 0;
  process.on('message', async (m: { type: string; url: string; path: string; keys: string[]; perKey: number; n: number }) => {
    if (m.type === 'open') {
      const opened: Promise<void>[] = [];
      for (let i = 0; i < m.n; i++) {
        const seen = new Map<string, number>();
        perConn.push(seen);
        opened.push(
          new Promise<void>((resolve) => {
            const u = new URL(m.url);
            const req = http.get({ host: u.hostname, port: u.port, path: m.path, agent: false, headers: { 'X-API-Key': m.keys[Math.floor(i / m.perKey)]!, Accept: 'text/event-stream' } }, (res) => {
              statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
              resolve();
              onRatesEvents(res, (body, at) => {
                events++;
                const t = body.data.BTCNGN?.sources.find((s) => s.exchange === 'luno')?.time;
                if (t && !seen.has(t)) seen.set(t, at);
              });
              res.on('error', () => errors++);
            });
            req.on('error', () => {
              errors++;
              resolve();
            });
          }),
        );
        if (i % 50 === 49) await sleep(20); // a few at a time: the server's accept queue is not the figure
      }
      await Promise.all(opened);
      process.send!({ type: 'opened', statuses, errors });
    } else if (m.type === 'report') {
      process.send!({ type: 'report', seen: perConn.map((s) => Object.fromEntries(s)), errors, events });
    }
  });
}

async function partSse(): Promise<void> {
  const { startTestApi } = await import('../test/support/api.js');
  const { storeTrades } = await import('../pipeline/collect.js');
  const onServer = Boolean(process.env.BENCH_DATABASE_URL);
  const t = await startTestApi({ hours: 2 });
  const child = forkRole('sse-clients');
  try {
    const { notices } = t; // the ones its live snapshot hears, as the service's does
    const keyCount = Math.ceil(SSE_CLIENTS / STREAMS_PER_KEY);
    const keys: string[] = [];
    for (let i = 0; i < keyCount; i++) keys.push((await t.api.deps.keys.issue({ tier: 'enterprise', customerName: `sse bench ${i}` })).apiKey);
    const o0 = performance.now();
    const opened = await ask<{ statuses: Record<string, number>; errors: number }>(
      child,
      { type: 'open', url: t.api.url, path: '/v1/rates/stream?pairs=BTCNGN,ETHNGN,USDTNGN', keys, perKey: STREAMS_PER_KEY, n: SSE_CLIENTS },
      'opened',
    );
    console.log(`  sse: ${SSE_CLIENTS} streams opened in ${fmt((performance.now() - o0) / 1000)} s (${keyCount} enterprise keys, ${STREAMS_PER_KEY} each): statuses ${JSON.stringify(opened.statuses)}, errors ${opened.errors}; server holds ${t.api.deps.streams.size}`);
    check(opened.statuses['200'] === SSE_CLIENTS && opened.errors === 0, `not every stream opened: ${JSON.stringify(opened)}`);
    await sleep(1_000);

    const [last] = await t.db.sql<{ price: string }[]>`SELECT price::text FROM trades WHERE exchange = 'luno' AND pair = 'BTCNGN' ORDER BY time DESC LIMIT 1`;
    // server side: when the snapshot's rebuild after each write ended (its 'refreshed')
    // and when the streams' pushes were built and written (the microtasks its listener queued, then this process's next turn)
    let refreshedAt: number[] = [];
    let fannedAt: number[] = [];
    t.api.deps.snapshot.events.on('refreshed', () => {
      refreshedAt.push(nowMs());
      setImmediate(() => fannedAt.push(nowMs()));
    });
    const rounds: { text: string; writeAt: number; storedAt: number; refreshedAt: number; fannedAt: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await sleep(ROUND_MS + Math.random() * 250);
      refreshedAt = [];
      fannedAt = [];
      const time = new Date(Date.now());
      const writeAt = nowMs();
      const stored = await storeTrades(t.db.sql, [{ time, exchange: 'luno', pair: 'BTCNGN', tradeId: `bench-sse-${Date.now()}-${i}`, price: last!.price, amount: '0.001', side: 'buy' }], { notices, copy: false });
      const storedAt = nowMs();
      check(stored.inserted === 1, `round ${i}: stored ${stored.inserted}`);
      rounds.push({ text: timestamp(time), writeAt, storedAt, refreshedAt: NaN, fannedAt: NaN });
      const r = rounds.at(-1)!;
      void sleep(ROUND_MS).then(() => {
        r.refreshedAt = refreshedAt.find((x) => x >= storedAt) ?? NaN;
        r.fannedAt = fannedAt.find((x) => x >= r.refreshedAt) ?? NaN;
      });
    }
    await sleep(3_000);
    const report = await ask<{ seen: Record<string, number>[]; errors: number; events: number }>(child, { type: 'report' }, 'report');
    const latencies: number[] = [];
    let missing = 0;
    for (const r of rounds) {
      for (const conn of report.seen) {
        const at = conn[r.text];
        if (at === undefined) missing++;
        else latencies.push(at - r.writeAt);
      }
    }
    const write = rounds.map((r) => r.storedAt - r.writeAt);
    const rebuilt = rounds.map((r) => r.refreshedAt - r.writeAt).filter(Number.isFinite);
    const fanned = rounds.map((r) => r.fannedAt - r.writeAt).filter(Number.isFinite);
    const firstClient = rounds.map((r) => Math.min(...report.seen.map((c) => c[r.text] ?? Infinity)) - r.writeAt);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    console.log(`  sse: ${ROUNDS} trades x ${SSE_CLIENTS} clients = ${fmt(latencies.length)} deliveries, ${missing} missing; ${fmt(report.events)} rates events received, ${report.errors} errors`);
    console.log(`  where the time goes (median of rounds): storeTrades + notice ${fmt(percentile(write, 50))} ms; snapshot rebuilt (its 'refreshed') ${fmt(percentile(rebuilt, 50))} ms after the write; ${fmt(SSE_CLIENTS)} events built and written ${fmt(percentile(fanned, 50))} ms; first client ${fmt(percentile(firstClient, 50))} ms; p50 of all ${fmt(p50)} ms, max ${fmt(Math.max(...latencies))} ms`);
    check(missing === 0 && report.errors === 0, `${missing} deliveries missing, ${report.errors} errors`);
    const db = onServer ? 'server' : 'embedded';
    figures.push([`trade to SSE, ${fmt(SSE_CLIENTS)} clients, p50 ms (${db})`, p50, '-', '-']);
    figures.push(limitRow(`trade to SSE, ${fmt(SSE_CLIENTS)} clients, p99 ms (${db})`, p99, LIMITS.sseP99Ms));
    json.sse = { database: db, clients: SSE_CLIENTS, rounds: ROUNDS, p50_ms: round(p50), p99_ms: round(p99), max_ms: round(Math.max(...latencies)), write_ms: round(percentile(write, 50)), rebuilt_ms: round(percentile(rebuilt, 50)), fanned_ms: round(percentile(fanned, 50)), first_client_ms: round(percentile(firstClient, 50)) };
  } finally {
    child.kill();
    await t.close();
  }
}

// ---------------------------------------------------------------------------------------------
// demo: the service and the simulated market on a real clock

async function partDemo(): Promise<void> {
  const { startSimMarket } = await import('../sim/index.js');
  const { startService } = await import('../bin/service.js');
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-bench-streams-'));
  const sim = await startSimMarket({ seed: 1, historyStart: Date.now() - 3_600_000, retainMs: 3 * 3_600_000 });
  const config = loadConfig({
    MARKET: 'simulated',
    SIM_URL: sim.url,
    STREAMS: '1',
    AFRATES_VAR_DIR: varDir,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'warn',
    LUNO_API_KEY_ID: 'benchkey',
    LUNO_API_KEY_SECRET: 'benchsecret',
  });
  const log = createLogger('warn', { market: 'simulated' }, path.join(varDir, 'service.log'));
  const s0 = performance.now();
  const service = await startService(config, log);
  let req: http.ClientRequest | null = null;
  try {
    const pipeline = service.pipeline!;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const reports = pipeline.streamReports();
      if (reports.length >= 3 && reports.every((r) => r.state === 'open')) break;
      await sleep(500);
    }
    const reports = pipeline.streamReports();
    console.log(`  demo: service up, streams ${reports.map((r) => `${r.exchange} ${r.state}`).join(', ')} after ${fmt((performance.now() - s0) / 1000)} s`);
    check(reports.length >= 2 && reports.every((r) => r.state === 'open'), 'venue streams not open');
    const listings = sim.listings();
    const [pub] = await service.db.sql<{ pairs: string[] }[]>`SELECT array_agg(pair) AS pairs FROM public_pairs`;
    const venuesMatched = ['luno', 'valr'];
    const pairs = [...new Set(venuesMatched.flatMap((v) => listings[v] ?? []))].filter((p) => pub!.pairs.includes(p));
    const key = (await service.api!.deps.keys.issue({ tier: 'enterprise', customerName: 'streams bench demo' })).apiKey;
    const pushes: { at: number; sources: Map<string, number> }[] = [];
    await new Promise<void>((resolve, reject) => {
      const u = new URL(service.api!.url);
      req = http.get({ host: u.hostname, port: u.port, path: `/v1/rates/stream?pairs=${pairs.join(',')}`, agent: false, headers: { 'X-API-Key': key } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        resolve();
        onRatesEvents(res, (body, at) => {
          const sources = new Map<string, number>();
          for (const [pair, rate] of Object.entries(body.data)) for (const src of rate.sources) sources.set(`${pair}|${src.exchange}`, Date.parse(src.time));
          pushes.push({ at, sources });
        });
      });
      req.on('error', reject);
    });
    await sleep(5_000);
    const from = Date.now();
    await sleep(DEMO_SECONDS * 1_000);
    const to = Date.now() - 3_000; // the last trades' pushes have had 3 s to come
    await sleep(500);
    const latencies: Record<string, number[]> = {};
    let unseen = 0;
    let matched = 0;
    for (const venue of venuesMatched) {
      latencies[venue] = [];
      for (const pair of pairs) {
        if (!(listings[venue] ?? []).includes(pair)) continue;
        for (const trade of sim.served(venue, pair)) {
          if (trade.time < from || trade.time > to) continue;
          const push = pushes.find((p) => p.at >= trade.time && (p.sources.get(`${pair}|${venue}`) ?? -Infinity) >= trade.time);
          if (!push) unseen++;
          else {
            matched++;
            latencies[venue]!.push(push.at - trade.time);
          }
        }
      }
    }
    const all = Object.values(latencies).flat();
    const p50 = percentile(all, 50);
    const p90 = percentile(all, 90);
    console.log(`  demo: ${DEMO_SECONDS} s, ${pushes.length} pushes on ${pairs.length} pairs (${pairs.join(',')}); ${matched} trades matched, ${unseen} never carried (left out or overtaken)`);
    for (const [venue, l] of Object.entries(latencies)) console.log(`    ${venue}: ${l.length} trades, p50 ${fmt(percentile(l, 50))} ms, p90 ${fmt(percentile(l, 90))} ms, max ${fmt(Math.max(...l))} ms`);
    check(all.length >= 10, `only ${all.length} trades matched`);
    figures.push(['venue trade to first push, demo, p50 ms', p50, '-', '-']);
    figures.push(limitRow('venue trade to first push, demo, p90 ms', p90, LIMITS.demoP90Ms));
    json.demo = {
      seconds: DEMO_SECONDS,
      pushes: pushes.length,
      trades: matched,
      unseen,
      p50_ms: round(p50),
      p90_ms: round(p90),
      by_venue: Object.fromEntries(Object.entries(latencies).map(([v, l]) => [v, { trades: l.length, p50_ms: round(percentile(l, 50)), p90_ms: round(percentile(l, 90)) }])),
    };
  } finally {
    (req as http.ClientRequest | null)?.destroy();
    await service.stop();
    await sim.stop();
    fs.rmSync(varDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// child: Binance's combined aggTrade stream at a fixed rate

async function aggTradeServer(): Promise<void> {
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  let rate = 0;
  let sent = 0;
  let id = 1_000_000;
  const clients = new Set<{ ws: WebSocket; symbols: string[] }>();
  wss.on('connection', (ws, req) => {
    const streams = new URL(req.url ?? '/', 'http://x').searchParams.get('streams') ?? '';
    const symbols = streams.split('/').map((s) => s.split('@')[0]!.toUpperCase()).filter(Boolean);
    const c = { ws, symbols };
    clients.add(c);
    ws.on('close', () => clients.delete(c));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const TICK_MS = 10;
  let owed = 0;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    owed += (rate * (now - last)) / 1000;
    last = now;
    const n = Math.floor(owed);
    owed -= n;
    if (n === 0) return;
    for (const c of clients) {
      for (let i = 0; i < n; i++) {
        const symbol = c.symbols[id % c.symbols.length]!;
        const price = (symbol.startsWith('BTC') ? 90_000 : symbol.startsWith('ETH') ? 3_000 : symbol.startsWith('SOL') ? 150 : 2) * (1 + (Math.random() - 0.5) / 1000);
        const data = { e: 'aggTrade', E: Date.now(), s: symbol, a: id++, p: price.toFixed(2), q: (Math.random() / 10).toFixed(5), f: id, l: id, T: Date.now(), m: Math.random() < 0.5, M: true };
        c.ws.send(JSON.stringify({ stream: `${symbol.toLowerCase()}@aggTrade`, data }));
        sent++;
      }
    }
  }, TICK_MS);
  process.on('message', (m: { type: string; rate?: number }) => {
    if (m.type === 'rate') {
      rate = m.rate!;
      process.send!({ type: 'rate', sent });
    }
  });
  process.send!({ type: 'listening', port: (server.address() as AddressInfo).port });
}

async function partBinance(): Promise<void> {
  const { openTestDatabase, testLog } = await import('../test/support/db.js');
  const { startSimMarket } = await import('../sim/index.js');
  const { VenueSession } = await import('../pipeline/venue-session.js');
  const { VenueStreamRunner } = await import('../pipeline/streams/index.js');
  const { binanceStream } = await import('../pipeline/streams/binance.js');
  const { venues } = await import('../pipeline/venues/index.js');
  const { loadPairs } = await import('../pipeline/discover.js');
  const onServer = Boolean(process.env.BENCH_DATABASE_URL);
  const db = await openTestDatabase();
  const sim = await startSimMarket({ seed: 2, historyStart: Date.now() - 600_000 });
  const child = forkRole('aggtrade-server');
  let runner: InstanceType<typeof VenueStreamRunner> | null = null;
  try {
    const { port } = await new Promise<{ port: number }>((resolve) => child.once('message', (m) => resolve(m as { port: number })));
    const notices = tradeNotices(db.sql, db.kind);
    let announced = 0;
    await notices.listen(() => announced++);
    const session = new VenueSession({
      sql: db.sql,
      log: testLog,
      venue: venues.find((v) => v.id === 'binance')!,
      simUrl: sim.url,
      now: Date.now,
      retryDelaysMs: [200],
      requestTimeoutMs: 5_000,
      unpaced: true,
      initialLookbackMs: 60_000,
      copyTrades: db.kind === 'server',
      retentionDays: null,
      pairs: () => loadPairs(db.sql),
      settledThrough: () => null,
      stopped: () => false,
      notices,
    });
    await session.discover();
    const r = new VenueStreamRunner({ session, stream: binanceStream, log: testLog, simUrl: `http://127.0.0.1:${port}`, credentials: null, onReport: () => {} });
    runner = r;
    r.sync();
    const deadline = Date.now() + 20_000;
    while (r.report().state !== 'open' && Date.now() < deadline) await sleep(100);
    check(r.report().state === 'open', `binance stream ${r.report().state}`);
    const rss = () => process.memoryUsage().rss / 2 ** 20;
    // on a server, its backends for this database (the pool's connections): CPU from /proc, in ms
    const serverCpuMs = async (): Promise<number> => {
      if (db.kind !== 'server') return 0;
      const pids = await db.sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`;
      let ticks = 0;
      for (const { pid } of pids) {
        try {
          const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
          ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
        } catch {
          /* not readable here */
        }
      }
      return ticks * 10; // USER_HZ 100
    };
    const phase = async (rate: number, seconds: number) => {
      const start = await ask<{ sent: number }>(child, { type: 'rate', rate }, 'rate');
      const stored0 = r.stored;
      const server0 = await serverCpuMs();
      const cpu0 = process.cpuUsage();
      const rss0 = rss();
      const t0 = performance.now();
      const samples: number[] = [];
      const sampler = setInterval(() => samples.push(rss()), 250);
      await sleep(seconds * 1_000);
      clearInterval(sampler);
      const rssPeak = Math.max(rss0, ...samples);
      const rssLate = percentile(samples.slice(Math.floor(samples.length / 2)), 50); // the median of its second half
      const serverMs = (await serverCpuMs()) - server0;
      const cpu = process.cpuUsage(cpu0);
      const s = (performance.now() - t0) / 1000;
      const stored = r.stored - stored0;
      const end = await ask<{ sent: number }>(child, { type: 'rate', rate: 0 }, 'rate');
      return { rate, seconds: s, sent: end.sent - start.sent, stored, storedPerSecond: stored / s, cpuMsPerSecond: (cpu.user + cpu.system) / 1000 / s, rssStart: rss0, rssEnd: rss(), rssPeak, rssLate, serverCpuMsPerSecond: serverMs / s };
    };
    const idle = await phase(0, IDLE_SECONDS);
    const load = await phase(LOAD_RATE, LOAD_SECONDS);
    await sleep(2_000); // the last batches stored
    const after = rss();
    const [counted] = await db.sql<{ n: string }[]>`SELECT count(*)::text AS n FROM trades WHERE exchange = 'binance' AND trade_id::bigint >= 1000000`;
    const n = counted!.n;
    console.log(
      table([
        ['phase', 'target/s', 'seconds', 'sent', 'stored', 'stored/s', 'CPU ms/s', 'server CPU ms/s', 'RSS start MB', 'RSS 2nd half median MB', 'RSS peak MB'],
        ...[idle, load].map((p) => [p.rate === 0 ? 'idle (connected)' : 'load', p.rate, p.seconds, p.sent, p.stored, p.storedPerSecond, p.cpuMsPerSecond, p.serverCpuMsPerSecond, p.rssStart, p.rssLate, p.rssPeak]),
      ]),
    );
    console.log(`  binance: ${n} stream trades in the table, ${announced} notices; RSS 2 s after the load ${fmt(after)} MB`);
    check(Number(n) >= load.sent * 0.99, `stored ${n} of ${load.sent} sent`);
    const per1k = ((load.cpuMsPerSecond - idle.cpuMsPerSecond) / load.storedPerSecond) * 1000;
    // RSS: the median of the load's second half over the idle's (GC saws single samples either way)
    const idleRss = idle.rssLate;
    const rssPer1k = ((load.rssLate - idleRss) / load.storedPerSecond) * 1000;
    const serverPer1k = ((load.serverCpuMsPerSecond - idle.serverCpuMsPerSecond) / load.storedPerSecond) * 1000;
    const db_ = onServer ? 'this process; server' : 'embedded, its worker included';
    figures.push([`Binance stream CPU per 1,000 trades/s, % of a core (${db_})`, per1k / 10, '-', '-']);
    figures.push([`  at real Binance volume (${fmt(REAL_BINANCE_PER_SECOND)}/s), % of a core`, (per1k / 10) * (REAL_BINANCE_PER_SECOND / 1000), '-', '-']);
    if (onServer) figures.push([`  the server's backends for it, % of a core per 1,000 trades/s`, serverPer1k / 10, '-', '-']);
    figures.push([`Binance stream RSS at load over idle, per 1,000 trades/s, MB`, rssPer1k, '-', '-']);
    json.binance = { database: onServer ? 'server' : 'embedded', idle_cpu_ms_per_s: round(idle.cpuMsPerSecond), load_cpu_ms_per_s: round(load.cpuMsPerSecond), stored_per_s: round(load.storedPerSecond), cpu_pct_core_per_1k: round(per1k / 10), cpu_pct_core_real_volume: round((per1k / 10) * (REAL_BINANCE_PER_SECOND / 1000), 3), idle_rss_mb: round(idleRss), load_rss_mb: round(load.rssLate), load_rss_peak_mb: round(load.rssPeak), server_cpu_pct_core_per_1k: onServer ? round(serverPer1k / 10) : null, rss_per_1k_mb: round(rssPer1k) };
  } finally {
    await runner?.stop();
    child.kill();
    await sim.stop();
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------

const PARTS: Record<string, () => Promise<void>> = { sse: partSse, demo: partDemo, binance: partBinance };

async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = asked.filter((a) => !(a in PARTS));
  check(unknown.length === 0, `unknown part(s) ${unknown.join(', ')}: choose from ${Object.keys(PARTS).join(', ')}`);
  const parts = asked.length > 0 ? asked : Object.keys(PARTS);
  header('streams: trade-to-push latency and the cost of venue streams', [
    `parts: ${parts.join(', ')} (choose with arguments: ${Object.keys(PARTS).join(' ')})`,
    `sse: ${SSE_CLIENTS} clients in a child process, ${ROUNDS} trades ~${ROUND_MS / 1000} s apart; demo: ${DEMO_SECONDS} s on a real clock; binance: ${IDLE_SECONDS} s idle, ${LOAD_SECONDS} s at ${LOAD_RATE}/s`,
    process.env.BENCH_DATABASE_URL ? 'database: a TimescaleDB server (BENCH_DATABASE_URL) for sse and binance; demo embedded' : 'database: embedded TimescaleDB',
  ]);
  for (const p of parts) {
    console.log(`== ${p}`);
    await PARTS[p]!();
  }
  console.log('');
  console.log(table(figures));
  console.log('');
  console.log(JSON.stringify(json));
}

const role = childRole();
if (role === 'sse-clients') void sseClients();
else if (role === 'aggtrade-server') void aggTradeServer();
else runBench(main);
