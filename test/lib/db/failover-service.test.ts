// The service follows the database through a failover (issue 33, item 2), as a process: one
// afrates process (bin/serve.ts, pipeline and API) on a DATABASE_URL naming a TimescaleDB standby
// and its primary, collecting from the simulated market. The primary crashes and the standby is
// promoted; without a restart the pipeline stores trades again and the API issues a key (a write)
// within 30 s, and the live rates stay served meanwhile. The servers are the test's own
// (TEST_PG_BIN, with TimescaleDB installed beside it), never TEST_DATABASE_URL's.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimMarket, type SimMarket } from '../../../sim/index.js';
import { pgBin, startPgPair, type PgPair } from '../../support/pg-pair.js';
import { freePort, until } from '../../support/wait.js';

const root = path.resolve(import.meta.dirname, '../../..');

let pair: PgPair | undefined;
let sim: SimMarket | undefined;
let proc: ChildProcess | undefined;
let varDir: string | undefined;
afterAll(async () => {
  proc?.kill('SIGKILL');
  await sim?.stop();
  await pair?.close();
  if (varDir) fs.rmSync(varDir, { recursive: true, force: true });
});

describe.skipIf(!pgBin)('one afrates process through a failover (needs TEST_PG_BIN with TimescaleDB beside it: a primary and standby of its own)', () => {
  it('stores trades and writes from the API again within 30 s, without a restart, serving live rates meanwhile', async () => {
    pair = await startPgPair(["shared_preload_libraries = 'timescaledb'", 'timescaledb.telemetry_level = off']);
    sim = await startSimMarket({ seed: 5, historyStart: Date.now() - 30 * 60_000 });
    varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-failover-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: Record<string, string | undefined> = {
      ...process.env,
      // the standby named first: the service finds the primary itself
      DATABASE_URL: `postgres://postgres@127.0.0.1:${pair.ports.standby},127.0.0.1:${pair.ports.primary}/postgres`,
      MARKET: 'simulated',
      SIM_URL: sim.url,
      STREAMS: '0',
      CYCLE_SECONDS: '2',
      LOG_LEVEL: 'info',
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      AFRATES_VAR_DIR: varDir,
      CERT_HMAC_SECRET: crypto.randomBytes(32).toString('hex'),
      WEBHOOK_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    };
    delete env.REDIS_URL;
    delete env.DATABASE_READ_URL;
    delete env.METRICS_PORT;
    proc = spawn(process.execPath, ['--import', 'tsx', 'bin/serve.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    let exited: number | null | undefined;
    proc.once('exit', (code) => (exited = code));
    const alive = () => {
      if (exited !== undefined) throw new Error(`the service exited (${exited}): ${out.slice(-3000)}`);
      return true;
    };
    await until('the service runs', () => alive() && out.includes('"afrates running"') && out.includes('"API listening"'), 180_000, 100);

    try {
      await failover(pair, base, alive, () => out, () => exited);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- the service's last lines:\n${out.slice(-5000)}`, { cause: err });
    }
  });
});

/** The failover itself, and what the process does through it. */
async function failover(pair: PgPair, base: string, alive: () => boolean, output: () => string, exitCode: () => number | null | undefined): Promise<void> {
  {
    const count = async (url: string) => {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        return (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades`)[0]!.n;
      } finally {
        await sql.end({ timeout: 1 });
      }
    };
    const freeKey = (email: string) => fetch(`${base}/v1/auth/free-key`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email }) });
    const live = async (key: string) => fetch(`${base}/v1/rates/live?pairs=BTCNGN`, { headers: { 'X-API-Key': key } });

    const issued = await freeKey('before@example.test');
    expect(issued.status).toBe(201);
    const key = ((await issued.json()) as { api_key: string }).api_key;
    await until('trades stored and a live rate served', async () => alive() && (await count(pair.url('primary'))) > 0 && (await live(key)).status === 200, 120_000, 200);
    // everything so far on the standby too, so the promoted one has what the API was shown
    const stored = await count(pair.url('primary'));
    await until('the standby has replayed it', async () => (await count(pair.url('standby'))) >= stored, 30_000, 100);

    await pair.crash('primary');
    const goneAt = Date.now();
    // meanwhile live rates are answered from what the process holds
    expect((await live(key)).status).toBe(200);
    await pair.promote();

    const atPromotion = await count(pair.url('standby'));
    await until('the pipeline stores trades on the promoted standby', async () => alive() && (await count(pair.url('standby'))) > atPromotion, 30_000, 200);
    await until('the API issues a key (a write)', async () => alive() && (await freeKey(`after-${Date.now()}@example.test`)).status === 201, 30_000, 200);
    expect(Date.now() - goneAt).toBeLessThan(30_000);
    expect((await live(key)).status).toBe(200);
    expect(output()).toContain('database: following the server that accepts writes');
    expect(exitCode()).toBeUndefined();
  }
}
