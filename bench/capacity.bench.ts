// Capacity: how many requests a second of a realistic mix one API process serves, and what the
// database server spends on them, with the primary alone and with a streaming replica taking the
// reads (docs/operations.md, "Capacity", quotes these figures).
//
//   BENCH_DATABASE_URL=postgres://.../postgres BENCH_DATABASE_READ_URL=postgres://.../postgres \
//     node_modules/.bin/tsx bench/capacity.bench.ts
//
// Both servers on this machine (the primary's replica); a database of its own is created on the
// primary (and reaches the replica by replication) and dropped at the end. Nothing else is
// measured: without both URLs it says so and exits 0.
//
// Phases, each CAPACITY_SECONDS (default 15) after a 3 s warm-up, closed loop (each worker sends
// its next request when the last is answered), keep-alive, gzip accepted:
//   one API process,   the primary alone:        16 workers
//   two API processes, the primary alone:        32 workers, alternating between the two
//   two API processes, reads on the replica:     32 workers (DATABASE_READ_URL)
// The mix, per ten requests: five live rates (memory), three historical pages, one certificate,
// one certificate list (database). Every process shares the machine's cores: CPU is measured per
// process (/proc), the database's as the backends of this database plus replication's own
// processes, so that the figures say what one request costs each part.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { check, header, limitRow, percentile, round, runBench, table } from './support.js';

const PRIMARY = process.env.BENCH_DATABASE_URL;
const REPLICA = process.env.BENCH_DATABASE_READ_URL;
const SECONDS = Number(process.env.CAPACITY_SECONDS ?? 15);
const WARMUP_MS = 3_000;
const KEYS = 64;
/** Reads are nine in ten of the mix's transactions: the replica should run at least 8 in 10. */
const REPLICA_SHARE_MIN = 0.8;
const TICK_HZ = 100; // /proc/<pid>/stat counts CPU in clock ticks (USER_HZ)
const root = path.resolve(import.meta.dirname, '..');

/** CPU seconds (user + system) a process has used, from /proc; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICK_HZ;
  } catch {
    return 0;
  }
}

/** The server processes working for this database: its backends, and replication's own (walsender, startup, walreceiver). */
async function serverPids(sql: postgres.Sql, database: string): Promise<number[]> {
  const rows = await sql<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity
    WHERE (datname = ${database} AND pid <> pg_backend_pid()) OR backend_type IN ('walsender', 'startup', 'walreceiver')`;
  return rows.map((r) => r.pid);
}

/** Transactions this database has run on a server (a standby counts its own read-only ones). */
async function transactions(sql: postgres.Sql, database: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = ${database}`;
  return row?.n ?? 0;
}

interface Api {
  readonly url: URL;
  readonly proc: ChildProcess;
  stop(): Promise<void>;
}

/** An API-only process (ROLE=api, as docker compose runs it), logging at info into a file. */
async function startApi(env: Record<string, string>): Promise<Api> {
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-capacity-'));
  const logFile = path.join(varDir, 'api.log');
  const out = fs.openSync(logFile, 'w');
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/serve.ts'], {
    cwd: root,
    env: { ...process.env, ROLE: 'api', PORT: '0', HOST: '127.0.0.1', AFRATES_VAR_DIR: varDir, LOG_LEVEL: 'info', REDIS_URL: '', ...env },
    stdio: ['ignore', out, 'inherit'],
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const deadline = Date.now() + 60_000;
  let url: URL | null = null;
  while (!url) {
    const match = /"url":"(http:[^"]+)","msg":"API listening"/.exec(fs.readFileSync(logFile, 'utf8'));
    if (match) url = new URL(match[1]!);
    else if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the API process did not start: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    else await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      fs.closeSync(out);
      fs.rmSync(varDir, { recursive: true, force: true });
    },
  };
}

function get(agent: http.Agent, base: URL, urlPath: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path: urlPath, agent, headers: { 'X-API-Key': key, 'Accept-Encoding': 'gzip' } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Phase {
  readonly name: string;
  readonly requests: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly non200: number;
  readonly apiCores: number;
  readonly primaryCores: number;
  readonly replicaCores: number;
  readonly clientCores: number;
  /** Share of this database's transactions that ran on the replica. */
  readonly onReplica: number;
  /** The replica's state in GET /v1/health at the end of the phase (null without replicas). */
  readonly replicaState: string | null;
}

runBench(async () => {
  if (!PRIMARY || !REPLICA) {
    console.log('capacity: set BENCH_DATABASE_URL and BENCH_DATABASE_READ_URL (a TimescaleDB primary and its streaming replica) to measure; nothing measured.');
    return;
  }
  // the test support creates the database on the primary, seeds 6 hours of market, certifies the settled buckets, issues keys; and drops it at the end
  process.env.TEST_DATABASE_URL = PRIMARY;
  process.env.TEST_DATABASE_READ_URL = REPLICA;
  const { startTestApi } = await import('../test/support/api.js');
  const { onReplica, untilReplayed } = await import('../test/support/replica.js');
  const seeded = await startTestApi({ hours: 6 });
  const database = new URL(seeded.db.url).pathname.slice(1);
  const primaryAdmin = postgres(PRIMARY, { max: 1, onnotice: () => {} });
  const replicaAdmin = postgres(REPLICA, { max: 1, onnotice: () => {} });
  const apis: Api[] = [];
  try {
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) keys.push(await seeded.key('enterprise'));
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const certificates = (await seeded.get(`/v1/certificates/BTCNGN?start=${yesterday}&end=${today}&limit=200`, seeded.keys.enterprise)).body.certificates as { certificate_url: string }[];
    check(certificates.length >= 20, `at least 20 certificates to fetch (${certificates.length})`);
    await untilReplayed(seeded.db.sql);
    let c = 0;
    const mix = [
      () => '/v1/rates/live?pairs=BTCNGN,ETHNGN,USDTNGN',
      () => '/v1/rates/live?pairs=BTCZAR',
      () => '/v1/rates/live?pairs=BTCNGN&include_sources=true',
      () => '/v1/rates/live?pairs=USDTNGN',
      () => '/v1/rates/live?pairs=BTCNGN,BTCZAR',
      () => `/v1/rates/historical?pair=BTCNGN&interval=1h&start=${today}&end=${today}`,
      () => `/v1/rates/historical?pair=BTCNGN&interval=5m&start=${yesterday}&end=${today}&limit=100`,
      () => `/v1/rates/historical?pair=BTCZAR&interval=1h&start=${yesterday}&end=${today}`,
      () => certificates[c++ % certificates.length]!.certificate_url,
      () => `/v1/certificates/BTCNGN?start=${today}&end=${today}&limit=50`,
    ];
    const DATABASE_SHARE = 5 / mix.length;

    const phase = async (name: string, count: number, workers: number, env: Record<string, string>): Promise<Phase> => {
      for (let i = 0; i < count; i++) apis.push(await startApi({ DATABASE_URL: seeded.db.url, ...env }));
      const running = apis.slice(-count);
      try {
        const agents = running.map(() => new http.Agent({ keepAlive: true, maxSockets: workers }));
        let n = 0;
        let timing = false;
        let stopAt = 0;
        const latencies: number[] = [];
        let non200 = 0;
        const worker = async (w: number) => {
          for (;;) {
            const at = performance.now();
            if (at >= stopAt) return;
            const i = n++;
            const which = w % running.length;
            const status = await get(agents[which]!, running[which]!.url, mix[i % mix.length]!(), keys[i % keys.length]!);
            if (!timing) continue;
            latencies.push(performance.now() - at);
            if (status !== 200) non200++;
          }
        };
        // warm-up, untimed (connections, plans, the replica router's first probes)
        stopAt = performance.now() + WARMUP_MS;
        await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
        const apiPids = running.map((a) => a.proc.pid!);
        const primaryPids = await serverPids(primaryAdmin, database);
        const replicaPids = await serverPids(replicaAdmin, database);
        const cpu = () => ({
          api: apiPids.reduce((s, p) => s + cpuSeconds(p), 0),
          primary: primaryPids.reduce((s, p) => s + cpuSeconds(p), 0),
          replica: replicaPids.reduce((s, p) => s + cpuSeconds(p), 0),
          client: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
        });
        const before = cpu();
        const txBefore = [await transactions(primaryAdmin, database), await transactions(replicaAdmin, database)];
        timing = true;
        const t0 = performance.now();
        stopAt = t0 + SECONDS * 1000;
        await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
        const seconds = (performance.now() - t0) / 1000;
        const after = cpu();
        const txPrimary = (await transactions(primaryAdmin, database)) - txBefore[0]!;
        const txReplica = (await transactions(replicaAdmin, database)) - txBefore[1]!;
        const health = await fetch(new URL('/v1/health', running[0]!.url)).then((r) => r.json() as Promise<{ database_replicas?: { state: string }[] }>);
        agents.forEach((a) => a.destroy());
        return {
          name,
          requests: latencies.length,
          seconds,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          non200,
          apiCores: (after.api - before.api) / seconds,
          primaryCores: (after.primary - before.primary) / seconds,
          replicaCores: (after.replica - before.replica) / seconds,
          clientCores: (after.client - before.client) / seconds,
          onReplica: txReplica / (txPrimary + txReplica),
          replicaState: health.database_replicas?.[0]?.state ?? null,
        };
      } finally {
        for (const api of running) await api.stop();
      }
    };

    const phases = [
      await phase('1 API, primary alone', 1, 16, {}),
      await phase('2 APIs, primary alone', 2, 32, {}),
      await phase('2 APIs, reads on the replica', 2, 32, { DATABASE_READ_URL: onReplica(seeded.db.url), DATABASE_READ_MAX_LAG_SECONDS: '10' }),
    ];
    for (const p of phases) check(p.non200 === 0, `${p.name}: ${p.non200} answers were not 200`);
    check(phases[2]!.replicaState === 'ok', `the replica served the last phase (health: ${phases[2]!.replicaState})`);

    header('capacity: a realistic mix through API-only processes on a TimescaleDB primary and its streaming replica', [
      `mix per 10 requests: 5 live (memory), 3 historical pages, 1 certificate, 1 certificate list (database: ${DATABASE_SHARE * 100} %)`,
      `closed loop, ${SECONDS} s a phase after ${WARMUP_MS / 1000} s warm-up; client, API processes and both servers share this machine's ${os.availableParallelism()} cores`,
      'cores: CPU seconds used per second of the phase (/proc), the database servers counting this database\'s backends and replication\'s processes',
    ]);
    const perK = (cores: number, p: Phase) => (cores * 1000) / (p.requests / p.seconds); // CPU ms per request
    console.log(
      table([
        ['phase', 'req/s', 'p50 ms', 'p99 ms', 'API cores', 'primary cores', 'replica cores', 'client cores', 'API ms/req', 'primary ms/req', 'replica ms/req', 'tx on replica', 'replica'],
        ...phases.map((p) => [
          p.name,
          Math.round(p.requests / p.seconds),
          round(p.p50, 1),
          round(p.p99, 1),
          round(p.apiCores, 2),
          round(p.primaryCores, 2),
          round(p.replicaCores, 2),
          round(p.clientCores, 2),
          round(perK(p.apiCores, p), 3),
          round(perK(p.primaryCores, p), 3),
          round(perK(p.replicaCores, p), 3),
          `${Math.round(p.onReplica * 100)} %`,
          p.replicaState ?? '-',
        ]),
      ]),
    );
    console.log('');
    // with the replica serving, the primary keeps the writes and little else
    console.log(table([['figure', 'value', 'limit', 'ratio'], limitRow("share of this database's transactions the replica ran", round(phases[2]!.onReplica, 2), REPLICA_SHARE_MIN, true)]));
    console.log('');
    console.log(
      JSON.stringify({
        capacity: phases.map((p) => ({
          phase: p.name,
          rps: Math.round(p.requests / p.seconds),
          p50_ms: round(p.p50, 1),
          p99_ms: round(p.p99, 1),
          api_cores: round(p.apiCores, 2),
          primary_cores: round(p.primaryCores, 2),
          replica_cores: round(p.replicaCores, 2),
          client_cores: round(p.clientCores, 2),
          on_replica: round(p.onReplica, 3),
        })),
      }),
    );
  } finally {
    for (const api of apis) if (api.proc.exitCode === null) await api.stop();
    await primaryAdmin.end();
    await replicaAdmin.end();
    await seeded.close(); // drops the database
  }
});
