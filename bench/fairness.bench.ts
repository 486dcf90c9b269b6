// One customer's flood beside another customer's ordinary use: 200 concurrent 10,000-candle pages
// on one Enterprise key (each client waiting Retry-After when refused, as the contract asks), while
// a second customer asks for small pages one after another. The figure is the second customer's
// p99 under the flood over its p99 alone, limit 2.0; each customer's share of the process
// (lib/tiers.ts `concurrent`, api/limits/concurrency.ts) bounds the flood's pages in flight.
// Each customer is a process of its own (as another machine would be): the flood's clients and
// the second customer's share the cores with the server, not its event loop.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createLogger } from '../lib/log.js';
import { TIER_RULES } from '../lib/tiers.js';
import { pageSlots } from '../api/limits/concurrency.js';
import { seedMonth, startTestApi } from '../test/support/api.js';
import { ask, check, childRole, forkChild, header, limitRow, machine, percentile, round, runBench, table } from './support.js';

const FLOOD = 200;
const PAGE_ROWS = 10_000;
/** The second customer's requests, one after another, alone and then under the flood. */
const LIGHT_REQUESTS = 1_000;
/** ...or as many as fit in this long (under the flood each may wait out the 15 s deadline). */
const LIGHT_MAX_MS = 90_000;
const LIMIT_RATIO = 2.0;
const GZIP = { 'Accept-Encoding': 'gzip' };

interface Reply {
  readonly status: number;
  readonly retryAfter: number;
}

function get(agent: http.Agent, url: URL, key: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { 'X-API-Key': key, ...GZIP } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: Number(res.headers['retry-after'] ?? 0) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * The second customer's latencies, ms, of `n` requests one after another, and how many ended in
 * the deadline's 503 (their time counts: the customer waited it out).
 */
async function lightRun(agent: http.Agent, url: URL, key: string, n: number): Promise<{ ms: number[]; late: number }> {
  const ms: number[] = [];
  let late = 0;
  const until = performance.now() + LIGHT_MAX_MS;
  for (let i = 0; i < n && performance.now() < until; i++) {
    const t0 = performance.now();
    const r = await get(agent, url, key);
    ms.push(performance.now() - t0);
    check(r.status === 200 || r.status === 503, `the second customer's request answered ${r.status}`);
    if (r.status === 503) late++;
  }
  return { ms, late };
}

async function main(): Promise<void> {
  const m = machine();
  header("fairness: one customer's 200 concurrent 10,000-candle pages beside another customer's small pages", [
    `the server in this process, each customer in a process of its own, on ${m.cpus} cores; ${process.env.BENCH_DATABASE_URL ? 'a TimescaleDB server (BENCH_DATABASE_URL) on the same machine, a pool of 10' : 'the embedded TimescaleDB (one connection) in a worker thread'}`,
    `flood: one Enterprise key, ${FLOOD} clients each asking for a ${PAGE_ROWS.toLocaleString('en-US')}-candle 5m page (gzip) again and again, waiting Retry-After when refused (share: ${TIER_RULES.enterprise.concurrent} slots, a page ${pageSlots(PAGE_ROWS)} of them)`,
    `second customer: another Enterprise customer's key, ${LIGHT_REQUESTS} requests for 24 1h candles one after another (or ${LIGHT_MAX_MS / 1000} s), alone, then under the flood`,
  ]);
  const t = await startTestApi({ hours: 2, log: createLogger('silent') });
  const quiet = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const children: ChildProcess[] = [];
  try {
    // two past months of 5-minute candles: a 10,000-candle page from the first one's start
    const now = new Date();
    const monthOf = (back: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)).toISOString().slice(0, 7);
    const first = await seedMonth(t.db, monthOf(3), 30);
    await seedMonth(t.db, monthOf(2), 30);
    const day = (d: Date) => d.toISOString().slice(0, 10);
    const pageUrl = new URL(`${t.api.url}/v1/rates/historical?pair=BTCNGN&interval=5m&limit=${PAGE_ROWS}&start=${day(first.from)}&end=${day(new Date(first.from.getTime() + 40 * 86_400_000))}`);
    const lightUrl = new URL(`${t.api.url}/v1/rates/historical?pair=BTCNGN&interval=1h&limit=24&start=${day(first.from)}&end=${day(first.from)}`);
    const heavy = t.keys.enterprise;
    const light = await t.key('enterprise'); // another customer, whose minute (10,000) the runs fit in
    check((await get(quiet, pageUrl, heavy)).status === 200, 'the 10,000-candle page is not served');
    quiet.destroy();

    const lightClient = forkChild(import.meta.filename, 'light', [lightUrl.href, light]);
    const floodClients = forkChild(import.meta.filename, 'flood', [pageUrl.href, heavy]);
    children.push(lightClient, floodClients);
    await ask(lightClient, { type: 'run', n: 20 }, 'ran'); // warm-up
    const { ms: alone } = await ask<LightResult>(lightClient, { type: 'run', n: LIGHT_REQUESTS }, 'ran');

    await ask(floodClients, { type: 'start' }, 'started'); // every client has asked
    const floodStart = performance.now();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const { ms: loaded, late: lightLate } = await ask<LightResult>(lightClient, { type: 'run', n: LIGHT_REQUESTS }, 'ran');
    loop.disable();
    const floodSeconds = (performance.now() - floodStart) / 1000;
    const { served, refused, late } = await ask<FloodResult>(floodClients, { type: 'stop' }, 'stopped');

    const p99Alone = percentile(alone, 99);
    const p99Loaded = percentile(loaded, 99);
    console.log('');
    console.log(
      table([
        ['figure', 'value', 'limit', 'ratio'],
        ["second customer's p99 alone, ms", round(p99Alone, 1), '-', spread(alone)],
        ["second customer's p99 under the flood, ms", round(p99Loaded, 1), '-', spread(loaded)],
        limitRow('  under the flood / alone (p99)', p99Loaded / p99Alone, LIMIT_RATIO),
        ["second customer's requests ended in 503 under the flood", lightLate, '-', `of ${loaded.length}`],
        ['event loop: longest stall under the flood, ms', round(loop.max / 1e6, 1), '-', `p99 ${round(loop.percentile(99) / 1e6, 1)} ms`],
        ['flood pages served / 429 / 503 while measured', `${served} / ${refused} / ${late}`, '-', `${round(floodSeconds, 1)} s`],
      ]),
    );
    console.log('');
    console.log(
      JSON.stringify({
        bench: 'fairness',
        at: new Date().toISOString(),
        machine: m,
        flood_clients: FLOOD,
        share: TIER_RULES.enterprise.concurrent,
        p99_alone_ms: round(p99Alone, 2),
        p99_flood_ms: round(p99Loaded, 2),
        p99_ratio: round(p99Loaded / p99Alone, 2),
        second_customer_503: lightLate,
        flood_served: served,
        flood_refused: refused,
        flood_503: late,
        limits: { p99_ratio: LIMIT_RATIO },
      }),
    );
  } finally {
    quiet.destroy();
    for (const c of children) c.kill();
    await t.close();
  }
}

/** The rest of a run's latencies beside its p99. */
const spread = (ms: number[]) => `p50 ${round(percentile(ms, 50), 1)}, p90 ${round(percentile(ms, 90), 1)}, max ${round(Math.max(...ms), 1)} ms`;

interface LightResult {
  readonly type: 'ran';
  readonly ms: number[];
  readonly late: number;
}

interface FloodResult {
  readonly type: 'stopped';
  readonly served: number;
  readonly refused: number;
  readonly late: number;
}

/** Child: the second customer, `n` requests one after another each time it is asked. */
function lightCustomer(url: URL, key: string): void {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  process.on('message', (m: { type: string; n: number }) => {
    if (m.type !== 'run') return;
    void lightRun(agent, url, key, m.n).then((r) => process.send!({ type: 'ran', ...r } satisfies LightResult));
  });
}

/** Child: the flooding customer's FLOOD clients, from `start` until `stop`. */
function floodingCustomer(url: URL, key: string): void {
  const agent = new http.Agent({ keepAlive: true, maxSockets: FLOOD });
  let running = true;
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let served = 0;
  let refused = 0;
  let late = 0;
  let started = 0;
  const client = async () => {
    while (running) {
      started++;
      const r = await get(agent, url, key);
      if (r.status === 200) served++;
      else {
        // 429 past the share or the minute; 503 at the deadline (the flood's own pages queued behind each other)
        check(r.status === 429 || r.status === 503, `a flood page answered ${r.status}`);
        if (r.status === 429) refused++;
        else late++;
        // as told, or until the run ends (a refusal may say up to a minute)
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, Math.max(1, r.retryAfter) * 1000))), stopped]);
        clearTimeout(timer);
      }
    }
  };
  let flood: Promise<void>[] = [];
  process.on('message', async (m: { type: string }) => {
    if (m.type === 'start') {
      flood = Array.from({ length: FLOOD }, client);
      while (started < FLOOD) await new Promise((resolve) => setImmediate(resolve));
      process.send!({ type: 'started' });
    } else if (m.type === 'stop') {
      running = false;
      stop();
      await Promise.all(flood);
      process.send!({ type: 'stopped', served, refused, late } satisfies FloodResult);
    }
  });
}

const role = childRole();
if (role === 'light') lightCustomer(new URL(process.argv.at(-2)!), process.argv.at(-1)!);
else if (role === 'flood') floodingCustomer(new URL(process.argv.at(-2)!), process.argv.at(-1)!);
else runBench(main);
