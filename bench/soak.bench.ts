// Memory under steady load: RSS of the whole process (API, and the embedded database in its worker
// thread: PGlite's WASM memory is part of this process's RSS) before and after SOAK_MINUTES of a
// steady mixed load, against the 20 % growth limit. Issue 7 measured 741 MB -> 1,193 MB in ten
// minutes of `make demo` at 50 requests/s, not released when idle.
//
// Load: an open loop at SOAK_RATE requests/s (default 50) over node:http with a keep-alive Agent,
// cycling through live rates and markets (memory), historical pages (5m and 1h), premium, EOD,
// pairs and status (database); plus what the pipeline adds: every 15 s new trades are inserted,
// the aggregates refreshed and the live snapshot rebuilt. One enterprise key (10,000 requests a
// minute) serves it all. Requests still in flight past MAX_IN_FLIGHT are counted as skipped.
//
// Growth is measured from the end of a warm-up (a tenth of the run, at most 60 s: JIT, WASM and
// connection buffers settle) to the end; an idle sample 30 s later shows what is given back.
//
// Run: SOAK_MINUTES=2 node_modules/.bin/tsx bench/soak.bench.ts   (default 10 minutes; `make bench`)
import http from 'node:http';
import { refreshAggregates } from '../lib/db/refresh.js';
import type { EmbeddedStats } from '../lib/db/embedded/index.js';
import { insertTrades } from '../pipeline/store.js';
import { LISTINGS, startTestApi } from '../test/support/api.js';
import { generateTrades } from '../test/support/market.js';
import { check, fmt, header, percentile, round, runBench, table } from './support.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const RATE = Number(process.env.SOAK_RATE ?? 50);
const GROWTH_LIMIT = 0.2;
const SAMPLE_MS = 10_000;
const INGEST_MS = 15_000;
const IDLE_MS = 30_000;
const MAX_IN_FLIGHT = 64;
const HISTORY_HOURS = 30; // yesterday's EOD exists, pages span two days
const MB = 2 ** 20;

check(Number.isFinite(MINUTES) && MINUTES > 0, `SOAK_MINUTES must be a positive number, not ${process.env.SOAK_MINUTES}`);
check(Number.isFinite(RATE) && RATE > 0, `SOAK_RATE must be a positive number, not ${process.env.SOAK_RATE}`);

interface Sample {
  readonly t: number;
  readonly label: string;
  readonly rss: number;
  readonly heapUsed: number;
  readonly arrayBuffers: number;
  readonly wasm: number | null;
  readonly workerHeap: number | null;
  readonly requests: number;
}

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/** The mix, one entry per request slot: memory routes and database routes, as a client app calls them. */
function routes(): string[] {
  const [y, d] = [day(-1), day(0)];
  return [
    '/v1/rates/live?pairs=BTCNGN,ETHNGN,BTCZAR',
    `/v1/rates/historical?pair=BTCNGN&start=${y}&end=${d}&interval=5m&limit=500`,
    '/v1/rates/markets',
    '/v1/premium?pair=BTCNGN',
    '/v1/rates/live?pairs=USDTNGN',
    `/v1/rates/historical?pair=BTCZAR&start=${y}&end=${d}&interval=1h`,
    `/v1/rates/eod?pair=BTCNGN&date=${y}`,
    '/v1/pairs',
    `/v1/rates/historical?pair=ETHNGN&start=${d}&end=${d}&interval=5m&limit=100`,
    '/v1/status',
  ];
}

function get(agent: http.Agent, base: URL, path: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path, agent, headers: { 'X-API-Key': key, 'Accept-Encoding': 'gzip' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  header('soak: memory under steady mixed load (embedded database)', [
    `${MINUTES} min at ${RATE} requests/s, mixed routes; trades inserted and aggregates refreshed every ${INGEST_MS / 1000} s`,
    `growth = RSS at the end / RSS after the warm-up - 1; limit ${GROWTH_LIMIT * 100} %`,
  ]);
  const t = await startTestApi({ hours: HISTORY_HOURS });
  const embedded = t.db.embedded;
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  const base = new URL(t.api.url);
  const key = t.keys.enterprise;
  const paths = routes();
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let sent = 0;
  let skipped = 0;
  let errors = 0;
  const failures: string[] = [];
  const failed = (what: string) => (err: unknown) => {
    errors++;
    if (failures.length < 5) failures.push(`${what}: ${(err as Error).message}`);
  };
  let inFlight = 0;
  const samples: Sample[] = [];
  const t0 = performance.now();

  const sample = async (label: string): Promise<Sample> => {
    const m = process.memoryUsage();
    // an old worker that does not answer must not hang the benchmark
    const stats: EmbeddedStats | null = embedded ? await Promise.race([embedded.stats(), new Promise<null>((r) => setTimeout(() => r(null), 2_000))]) : null;
    const s: Sample = {
      t: (performance.now() - t0) / 1000,
      label,
      rss: m.rss,
      heapUsed: m.heapUsed,
      arrayBuffers: m.arrayBuffers,
      wasm: stats?.wasmHeapBytes ?? null,
      workerHeap: stats?.workerHeapUsedBytes ?? null,
      requests: sent,
    };
    samples.push(s);
    return s;
  };

  try {
    await sample('start');
    const durationMs = MINUTES * 60_000;
    const warmupMs = Math.min(60_000, durationMs / 10);
    let tradeSeed = 100;
    const ingest = async () => {
      const now = Date.now();
      const trades = generateTrades({ seed: tradeSeed++, start: new Date(now - INGEST_MS), hours: INGEST_MS / 3_600_000, listings: LISTINGS, tradesPerHour: 240 });
      await insertTrades(t.db.sql, trades);
      await refreshAggregates(t.db.sql);
      await t.api.deps.snapshot.refresh();
    };
    let ingesting = Promise.resolve();
    const ingestTimer = setInterval(() => {
      ingesting = ingesting.then(ingest).catch(failed('ingest cycle'));
    }, INGEST_MS);
    const interval = 1000 / RATE;
    const loadEnd = performance.now() + durationMs;
    let warm: Sample | null = null;
    let nextSample = performance.now() + SAMPLE_MS;
    let next = performance.now();
    while (performance.now() < loadEnd) {
      const now = performance.now();
      if (!warm && now - t0 >= warmupMs) warm = await sample('warm');
      if (now >= nextSample) {
        const s = await sample('load');
        nextSample += SAMPLE_MS;
        if (Math.round(s.t) % 60 < SAMPLE_MS / 1000) {
          console.log(`  ${fmt(Math.round(s.t))} s: rss ${fmt(s.rss / MB)} MB, wasm ${s.wasm === null ? '-' : fmt(s.wasm / MB)} MB, ${fmt(sent)} requests`);
        }
      }
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++;
      } else {
        const path = paths[sent % paths.length]!;
        sent++;
        inFlight++;
        const started = performance.now();
        get(agent, base, path, key).then(
          (status) => {
            inFlight--;
            latencies.push(performance.now() - started);
            if (status !== 200) statuses[`${status} ${path}`] = (statuses[`${status} ${path}`] ?? 0) + 1;
          },
          (err) => {
            inFlight--;
            failed(`GET ${path}`)(err);
          },
        );
      }
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    clearInterval(ingestTimer);
    while (inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    await ingesting;
    const end = await sample('end');
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = await sample('idle');
    const from = warm ?? samples[0]!;

    console.log('');
    console.log(
      table([
        ['at s', 'sample', 'rss MB', 'main heap MB', 'array buffers MB', 'wasm MB', 'worker heap MB', 'requests'],
        ...samples
          .filter((s, i) => s.label !== 'load' || i % 6 === 0)
          .map((s) => [
            Math.round(s.t),
            s.label,
            round(s.rss / MB, 0),
            round(s.heapUsed / MB, 1),
            round(s.arrayBuffers / MB, 1),
            s.wasm === null ? '-' : round(s.wasm / MB, 0),
            s.workerHeap === null ? '-' : round(s.workerHeap / MB, 1),
            s.requests,
          ]),
      ]),
    );
    const growth = end.rss / from.rss - 1;
    const seconds = (end.t - from.t) || 1;
    const nonOk = Object.values(statuses).reduce((a, b) => a + b, 0);
    console.log('');
    console.log(`requests: ${fmt(sent)} sent (${fmt(sent / ((end.t - samples[0]!.t) || 1))}/s), ${fmt(skipped)} skipped (${MAX_IN_FLIGHT} in flight), p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms`);
    console.log(`RSS: ${fmt(from.rss / MB)} MB after warm-up -> ${fmt(end.rss / MB)} MB at the end (${fmt(growth * 100)} % in ${fmt(seconds / 60)} min; limit ${GROWTH_LIMIT * 100} %: ${growth <= GROWTH_LIMIT ? 'within' : 'OVER'}), ${fmt(idle.rss / MB)} MB after ${IDLE_MS / 1000} s idle`);
    console.log('');
    console.log(
      JSON.stringify({
        soak: {
          minutes: MINUTES,
          rate: RATE,
          requests: sent,
          skipped,
          non200: nonOk,
          errors,
          p50_ms: round(percentile(latencies, 50)),
          p99_ms: round(percentile(latencies, 99)),
          rss_warm_mb: round(from.rss / MB, 1),
          rss_end_mb: round(end.rss / MB, 1),
          rss_idle_mb: round(idle.rss / MB, 1),
          rss_max_mb: round(Math.max(...samples.map((s) => s.rss)) / MB, 1),
          growth: round(growth, 3),
          limit: GROWTH_LIMIT,
          wasm_warm_mb: from.wasm === null ? null : round(from.wasm / MB, 1),
          wasm_end_mb: end.wasm === null ? null : round(end.wasm / MB, 1),
        },
      }),
    );
    check(nonOk === 0, `non-200 answers: ${JSON.stringify(statuses)}`);
    check(errors === 0, `${errors} requests or ingest cycles failed: ${failures.join('; ')}`);
    check(growth <= GROWTH_LIMIT, `RSS grew ${round(growth * 100, 1)} % under load, over the ${GROWTH_LIMIT * 100} % limit`);
  } finally {
    agent.destroy();
    await t.close();
  }
}

runBench(main);
