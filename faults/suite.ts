// The fault suite's orchestrator (faults/run.sh starts it on the clients' host, ctl, once the
// hosts exist): starts the programs on their hosts, the clients, then the faults of the schedule,
// each several times; afterwards lets everything settle and runs the checker (faults/check.ts).
// Settings (environment):
//   FAULTS_SCHEDULE   faults in order, comma-separated (default all): kill9,stop,linkdown,
//                     blackhole,market,failover,redis,lossy,rolling; and `tamper`, the checker's
//                     control (3 stored trades deleted: the run must fail with 3 lost)
//   FAULTS_REPEAT     how many times each fault runs (2)
//   FAULTS_FAULT_SECONDS    how long a cut, Redis loss or lossy link lasts (20)
//   FAULTS_STOP_SECONDS     how long SIGSTOP holds a pipeline (45)
//   FAULTS_RECOVER_SECONDS  quiet time after each fault before the next (15)
//   FAULTS_BASELINE_SECONDS quiet time before the first fault (30)
//   FAULTS_CYCLE_SECONDS, FAULTS_SETTLE_AFTER_SECONDS, FAULTS_STREAMS: the pipelines' settings (5, 60, 1)
//   FAULTS_NETEM      the lossy link's netem (delay 60ms 20ms loss 3%); where the kernel has no
//                     netem, FAULTS_TBF's token bucket instead (rate 256kbit burst 8kb latency 500ms)
//   FAULTS_SYNC       1: synchronous replication while a replica is attached (default); 0: asynchronous
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { check, printTable, type Window } from './check.js';
import { Clients } from './clients.js';
import { SYNC, dbUrl, initPrimary, initReplica, killHost, promote, type DbHost } from './db.js';
import { ADDRESS, ROOT, Service, WORK, inHost, onHost, onSwitch, sleep, until } from './hosts.js';

const num = (name: string, dflt: number): number => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name}: not a number`);
  return v;
};
const ALL = ['kill9', 'stop', 'linkdown', 'blackhole', 'market', 'failover', 'redis', 'lossy', 'rolling'] as const;
/** Not a fault but a control, never in the default schedule: deletes 3 stored trades, which the checker must find lost. */
const CONTROLS = ['tamper'] as const;
type Fault = (typeof ALL)[number] | (typeof CONTROLS)[number];
const schedule = (process.env.FAULTS_SCHEDULE ?? ALL.join(',')).split(',').map((s) => s.trim()).filter(Boolean) as Fault[];
for (const f of schedule) if (![...ALL, ...CONTROLS].includes(f)) throw new Error(`FAULTS_SCHEDULE: unknown fault ${f} (one of ${ALL.join(', ')}; or the control: tamper)`);
const REPEAT = num('FAULTS_REPEAT', 2);
const FAULT_S = num('FAULTS_FAULT_SECONDS', 20);
const STOP_S = num('FAULTS_STOP_SECONDS', 45);
const RECOVER_S = num('FAULTS_RECOVER_SECONDS', 15);
const BASELINE_S = num('FAULTS_BASELINE_SECONDS', 30);
const CYCLE_S = num('FAULTS_CYCLE_SECONDS', 5);
const SETTLE_S = num('FAULTS_SETTLE_AFTER_SECONDS', 60);
const NETEM = (process.env.FAULTS_NETEM ?? 'delay 60ms 20ms loss 3%').split(/\s+/);
/** Without sch_netem (kernels built without it): a token bucket, whose queue delays and whose overflow drops. */
const TBF = (process.env.FAULTS_TBF ?? 'rate 256kbit burst 8kb latency 500ms').split(/\s+/);
let lossy: string[] = ['netem', ...NETEM];
const t0 = Date.now();

const say = (msg: string): void => console.log(`faults ${new Date().toISOString().slice(11, 19)} +${Math.round((Date.now() - t0) / 1000)}s ${msg}`);

// ---- the deployment ----
const secrets = {
  CERT_HMAC_SECRET: crypto.randomBytes(32).toString('hex'),
  CERT_ED25519_PRIVATE_KEY: crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  WEBHOOK_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
};
const DATABASE_URL = `postgres://postgres@${ADDRESS.pg1}:5432,${ADDRESS.pg2}:5432/postgres`;
const SIM_URL = `http://${ADDRESS.sim}:4010`;
const common = {
  ...secrets,
  DATABASE_URL,
  REDIS_URL: `redis://${ADDRESS.redis}:6379`,
  MARKET: 'simulated',
  SIM_URL,
  LOG_LEVEL: 'info',
  HOME: WORK,
  NODE_OPTIONS: '--max-old-space-size=768',
};
const node = ['node', '--import', 'tsx'];
const varDir = (h: string): string => {
  const d = path.join(WORK, `var-${h}`);
  fs.mkdirSync(d, { recursive: true });
  return d;
};
const pipelineEnv = (h: string) => ({
  ...common,
  ROLE: 'pipeline',
  AFRATES_VAR_DIR: varDir(h),
  STREAMS: process.env.FAULTS_STREAMS ?? '1',
  CYCLE_SECONDS: String(CYCLE_S),
  SETTLE_AFTER_SECONDS: String(SETTLE_S),
  HOST: ADDRESS[h]!,
  PORT: '8080',
});
const apiEnv = (h: string) => ({
  ...common,
  ROLE: 'api',
  AFRATES_VAR_DIR: varDir(h),
  DATABASE_READ_URL: `${dbUrl('pg1')},${dbUrl('pg2')}`,
  HOST: ADDRESS[h]!,
  PORT: '8080',
  PUBLIC_URL: 'http://api.faults.test',
  SETTLE_AFTER_SECONDS: String(SETTLE_S),
});
const redis = new Service('redis', 'redis', ['redis-server', '--bind', ADDRESS.redis!, '--port', '6379', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--dir', WORK], {});
const sim = new Service('sim', 'sim', [...node, 'sim/main.ts', '--host', ADDRESS.sim!, '--port', '4010', '--seed', '33', '--history-hours', '2'], { HOME: WORK });
const pipelines = { p1: new Service('p1', 'p1', [...node, 'bin/serve.ts'], pipelineEnv('p1')), p2: new Service('p2', 'p2', [...node, 'bin/serve.ts'], pipelineEnv('p2')) };
const apis = { a1: new Service('a1', 'a1', [...node, 'bin/serve.ts'], apiEnv('a1')), a2: new Service('a2', 'a2', [...node, 'bin/serve.ts'], apiEnv('a2')) };
const services = [redis, sim, ...Object.values(pipelines), ...Object.values(apis)];
let primary: DbHost = 'pg1';
let standby: DbHost = 'pg2';
const sql = postgres(DATABASE_URL, { max: 2, onnotice: () => {}, connect_timeout: 5, target_session_attrs: 'read-write' } as never);

const apiUrl = (h: string): string => `http://${ADDRESS[h]}:8080`;
const healthy = async (h: string): Promise<true | undefined> => ((await fetch(`${apiUrl(h)}/v1/health`, { signal: AbortSignal.timeout(3_000) })).status === 200 ? true : undefined);
const publisherPid = async (): Promise<number | undefined> =>
  (await sql<{ pid: number; host: string }[]>`SELECT pid, host FROM publisher_lease WHERE expires_at > clock_timestamp()`.catch(() => []))[0]?.pid;
/** The pipeline host publishing now (else p1). */
async function publisher(): Promise<'p1' | 'p2'> {
  const pid = await publisherPid();
  // the pid in the lease is the node process's, which is the one we spawned (ip netns exec execs it)
  return pid === pipelines.p2.pid ? 'p2' : 'p1';
}
const other = (p: 'p1' | 'p2'): 'p1' | 'p2' => (p === 'p1' ? 'p2' : 'p1');

const windows: Window[] = [];
let clients: Clients | undefined;
let stopping = false;

function progress(): void {
  const live = ['a1', 'a2'].map((a) => clients?.last[`live@${a}`]);
  const head = ['a1', 'a2'].map((a) => clients?.last[`head@${a}`]?.head?.tree_size ?? '-');
  const age = live.map((l) => (l?.newest ? `${Math.round((l.t - l.newest) / 1000)}s` : '-'));
  say(
    `progress: live ${live.map((l) => l?.status ?? '-').join('/')} (newest trade ${age.join('/')} old), heads ${head.join('/')}, ` +
      `pipelines ${Object.values(pipelines).map((p) => (p.running ? 'up' : 'down')).join('/')}, apis ${Object.values(apis).map((p) => (p.running ? 'up' : 'down')).join('/')}, primary ${primary}, reads ${clients?.reads ?? 0}`,
  );
}

async function qdisc(host: string, link: string, args: string[] | null): Promise<void> {
  // both directions: the switch's end (towards the host) and the host's own interface
  const devs: Array<[string, string]> = [['sw', `${host}-${link}`], [host, link === 'a' ? 'eth0' : 'eth1']];
  for (const [where, dev] of devs) {
    const run = where === 'sw' ? (a: string[]) => onSwitch('tc', a) : (a: string[]) => onHost(where, 'tc', a);
    if (args) await run(['qdisc', 'replace', 'dev', dev, 'root', ...args]);
    else await run(['qdisc', 'del', 'dev', dev, 'root']).catch(() => {});
  }
}
const linkState = (host: string, link: 'a' | 'b', up: boolean) => onSwitch('ip', ['link', 'set', `${host}-${link}`, up ? 'up' : 'down']);

async function waitReady(s: Service, from: number): Promise<void> {
  if (s.host.startsWith('a')) await until(`${s.name} healthy`, 120_000, () => healthy(s.host));
  else await until(`${s.name} running`, 120_000, async () => (s.log().indexOf('"afrates running"', from) >= 0 ? true : undefined));
}

/** One fault, once: returns when it is cleared (recovery is waited for by the caller). */
async function inject(f: Fault, n: number): Promise<string> {
  const target = n % 2 === 0 ? await publisher() : other(await publisher());
  switch (f) {
    case 'kill9': {
      const p = await publisher();
      say(`kill -9 ${p} (pid ${pipelines[p].pid}, the publisher); its supervisor starts it again after 2 s`);
      pipelines[p].signal('SIGKILL');
      return p;
    }
    case 'stop': {
      const p = await publisher();
      say(`SIGSTOP ${p} (the publisher) for ${STOP_S} s`);
      pipelines[p].signal('SIGSTOP');
      await tick(STOP_S);
      pipelines[p].signal('SIGCONT');
      say(`SIGCONT ${p}`);
      return p;
    }
    case 'linkdown':
      say(`${target}'s database link down for ${FAULT_S} s`);
      await linkState(target, 'a', false);
      await tick(FAULT_S);
      await linkState(target, 'a', true);
      return target;
    case 'blackhole':
      say(`every packet on ${target}'s database link dropped for ${FAULT_S} s (nothing reset)`);
      // a FIFO that holds nothing: every packet dropped, both ways, nothing answered or reset
      await qdisc(target, 'a', ['pfifo', 'limit', '0']);
      await tick(FAULT_S);
      await qdisc(target, 'a', null);
      return target;
    case 'market':
      say(`${target} cut from the market for ${FAULT_S} s (${other(target)} reaches it)`);
      await linkState(target, 'b', false);
      await tick(FAULT_S);
      await linkState(target, 'b', true);
      return target;
    case 'failover': {
      const old = primary;
      say(`primary ${old} killed (every process of its host, SIGKILL); ${standby} promoted in 5 s`);
      await killHost(old);
      await tick(5);
      await promote(standby);
      [primary, standby] = [standby, old];
      say(`${primary} promoted; ${old} rebuilt as its replica after ${FAULT_S} s`);
      await tick(FAULT_S);
      await initReplica(old, primary);
      say(`${old} streams from ${primary} again (${SYNC ? 'synchronous' : 'asynchronous'})`);
      return old;
    }
    case 'redis':
      say(`Redis lost (SIGKILL) for ${FAULT_S} s, then back empty`);
      redis.held = true;
      redis.signal('SIGKILL');
      await redis.exited();
      await tick(FAULT_S);
      redis.held = false;
      redis.start();
      return 'redis';
    case 'lossy':
      say(`the primary's link (${primary}) lossy for ${FAULT_S} s: ${lossy.join(' ')}, both ways`);
      await qdisc(primary, 'a', lossy);
      await tick(FAULT_S);
      await qdisc(primary, 'a', null);
      return primary;
    case 'tamper': {
      // the checker's control: trades stored a minute ago deleted behind the pipelines' backs (their
      // watermarks have passed them, so nothing fetches them again): the run must FAIL with 3 lost
      const gone = await sql<{ exchange: string; pair: string; trade_id: string }[]>`
        DELETE FROM trades t USING (
          SELECT exchange, pair, trade_id, time FROM trades
          WHERE time > now() - INTERVAL '3 minutes' AND time < now() - INTERVAL '40 seconds' ORDER BY time DESC LIMIT 3) d
        WHERE t.exchange = d.exchange AND t.pair = d.pair AND t.trade_id = d.trade_id AND t.time = d.time
        RETURNING t.exchange, t.pair, t.trade_id`;
      say(`control: deleted ${gone.length} stored trades (${gone.map((g) => `${g.exchange} ${g.pair} ${g.trade_id}`).join(', ')}): the checker must count them lost`);
      return 'trades';
    }
    case 'rolling': {
      say('rolling restart: p1, p2, a1, a2 in turn (SIGTERM, start, ready, next)');
      for (const s of [pipelines.p1, pipelines.p2, apis.a1, apis.a2]) {
        s.held = true;
        s.signal('SIGTERM');
        await s.exited();
        const from = s.log().length;
        s.held = false;
        s.start();
        await waitReady(s, from);
        say(`  ${s.name} restarted and ready`);
      }
      return 'all';
    }
  }
}

/** Waits `s` seconds, a progress line every 5 s. */
async function tick(s: number): Promise<void> {
  const end = Date.now() + s * 1000;
  for (let i = 0; i < 100_000 && Date.now() < end && !stopping; i++) {
    await sleep(Math.min(5_000, end - Date.now()));
    progress();
  }
}

async function main(): Promise<void> {
  say(`schedule ${schedule.join(',')} x${REPEAT}; fault ${FAULT_S} s, stop ${STOP_S} s, recover ${RECOVER_S} s; cycle ${CYCLE_S} s, settle after ${SETTLE_S} s; replication ${SYNC ? 'synchronous' : 'asynchronous'}; work dir ${WORK}`);
  // netem where the kernel has it, else the token bucket
  try {
    await onHost('ctl', 'tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'netem', ...NETEM]);
    await onHost('ctl', 'tc', ['qdisc', 'del', 'dev', 'lo', 'root']);
  } catch {
    lossy = ['tbf', ...TBF];
    say(`no netem in this kernel: the lossy link is a token bucket (tbf ${TBF.join(' ')}): delay and drops when its queue is full`);
  }
  say('database: primary on pg1, replica on pg2');
  await initPrimary('pg1');
  await initReplica('pg2', 'pg1');
  redis.start();
  sim.start();
  await until('the market', 60_000, async () => ((await fetch(`${SIM_URL}/_control/health`)).ok ? true : undefined));
  say('redis and the market up; starting two pipelines and two API processes');
  for (const s of [...Object.values(pipelines), ...Object.values(apis)]) s.start();
  for (const s of [...Object.values(pipelines), ...Object.values(apis)]) await waitReady(s, 0);
  const key = (await inHost('a1', 'node', ['--import', 'tsx', 'bin/key.ts', 'create', '--tier=enterprise', '--name=faults', '--email=faults@example.test'], { env: apiEnv('a1') }).catch(async (e) => {
    throw new Error(`key: ${(e as Error).message}`);
  })).trim().split('\n').at(-1)!;
  const pairs = (await sql<{ pair: string }[]>`SELECT pair FROM public_pairs ORDER BY pair`).map((r) => r.pair);
  const listed = new Set(Object.values((await (await fetch(`${SIM_URL}/_control/listings`)).json()) as Record<string, string[]>).flat());
  const livePairs = pairs.filter((p) => listed.has(p)).slice(0, 50);
  say(`key issued; clients read ${livePairs.length} pairs from a1 and a2`);
  clients = new Clients(path.join(WORK, 'records.jsonl'), { a1: apiUrl('a1'), a2: apiUrl('a2') }, key, livePairs);
  clients.start();
  await until('live rates and a signed head', 300_000, async () => {
    progress();
    await sleep(4_000);
    const l = clients!.last['live@a1'];
    const h = clients!.last['head@a1'];
    return l?.status === 200 && h?.status === 200 ? true : undefined;
  });
  const judgeFrom = Date.now();
  say(`warm: live rates and heads served; baseline ${BASELINE_S} s`);
  const baseStart = Date.now();
  await tick(BASELINE_S);
  windows.push({ fault: 'baseline', n: 1, target: '-', start: baseStart, cleared: Date.now(), end: Date.now() });
  for (const f of schedule) {
    for (let n = 0; n < REPEAT && !stopping; n++) {
      const start = Date.now();
      say(`== ${f} #${n + 1}`);
      const target = await inject(f, n);
      const cleared = Date.now();
      await tick(RECOVER_S + (f === 'kill9' || f === 'stop' ? 15 : 0));
      windows.push({ fault: f, n: n + 1, target, start, cleared, end: Date.now() });
    }
  }
  const judgeTo = Date.now();
  // the buckets judged are those ended by now: each settles within SETTLE_AFTER_SECONDS of its end
  const quiesce = SETTLE_S + 45;
  say(`faults done; ${quiesce} s for the last buckets to settle and be certified, and the last trades to be collected`);
  await tick(quiesce);
  await clients.stop();
  say('clients stopped; checking');
  const result = await check({ sql, simUrl: SIM_URL, records: path.join(WORK, 'records.jsonl'), windows, judgeFrom, judgeTo, say });
  fs.writeFileSync(path.join(ROOT, 'var', 'faults-result.json'), JSON.stringify({ date: new Date().toISOString(), settings: { schedule, REPEAT, FAULT_S, STOP_S, RECOVER_S, CYCLE_S, SETTLE_S, lossy: lossy.join(' '), SYNC }, ...result }, null, 2));
  console.log(printTable(result));
  say(`written var/faults-result.json; ${result.pass ? 'PASS' : 'FAIL'}`);
  process.exitCode = result.pass ? 0 : 1;
}

async function shutdown(): Promise<void> {
  stopping = true;
  await clients?.stop().catch(() => {});
  for (const s of services) await s.stop('SIGKILL').catch(() => {});
  await sql.end({ timeout: 1 }).catch(() => {});
}

process.on('SIGINT', () => void shutdown().then(() => process.exit(130)));
process.on('SIGTERM', () => void shutdown().then(() => process.exit(143)));
fs.mkdirSync(path.join(ROOT, 'var'), { recursive: true });
main()
  .catch((e: unknown) => {
    say(`failed: ${(e as Error).stack ?? e}`);
    process.exitCode = 2;
  })
  .finally(async () => {
    await shutdown();
    process.exit();
  });
