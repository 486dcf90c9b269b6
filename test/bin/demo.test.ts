// `make demo`'s process (bin/demo.ts) as an operator runs it: it starts its simulated market,
// backfills, serves the simulated data labelled as such, stops cleanly on SIGTERM, and starts
// again on its own data after being killed outright.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { openDatabase } from '../../lib/db/connect.js';
import { testLog } from '../support/db.js';

const root = path.resolve(import.meta.dirname, '../..');
const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-demo-'));
const env = { ...process.env, AFRATES_VAR_DIR: varDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
delete (env as Record<string, string | undefined>).DATABASE_URL;
delete (env as Record<string, string | undefined>).REDIS_URL;

const started: ChildProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill('SIGKILL');
  fs.rmSync(varDir, { recursive: true, force: true });
});

/**
 * Starts the demo with an hour of history (node with tsx's loader: signals reach the demo itself),
 * and waits for the log line holding `until` (default: ready, with the API's URL).
 */
async function startDemo(until = '"demo ready'): Promise<{ proc: ChildProcess; api: string; exit: Promise<number | null> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/demo.ts', '--history-hours', '1'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(proc);
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const api = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`no ${until} line in: ${buffer.slice(-2000)}`)), 120_000);
    proc.stdout!.on('data', (chunk: Buffer) => {
      buffer = (buffer + chunk.toString()).slice(-20_000);
      const line = buffer.split('\n').find((l) => l.includes(until));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { api?: string }).api ?? '');
      }
    });
    void exit.then((code) => reject(new Error(`the demo exited (${code}) before it was ready: ${buffer.slice(-2000)}`)));
  });
  return { proc, api, exit };
}

/** BTCNGN's live rate, asked with a free key issued to `email`; checks the answer is labelled simulated. */
async function liveRate(api: string, email: string): Promise<number> {
  const issued = await fetch(`${api}/v1/auth/free-key`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, customer_name: 'Demo' }),
  });
  const { api_key: key } = (await issued.json()) as { api_key: string };
  const live = await fetch(`${api}/v1/rates/live?pairs=BTCNGN`, { headers: { 'X-API-Key': key } });
  expect(live.status).toBe(200);
  expect(live.headers.get('x-afrates-data')).toBe('simulated');
  return ((await live.json()) as { data: Record<string, { rate: number }> }).data.BTCNGN!.rate;
}

/** The FX observations the demo has stored (read with the demo stopped: the database is its own). */
async function storedFx(): Promise<{ time: Date; row: string }[]> {
  const db = await openDatabase(loadConfig({ AFRATES_VAR_DIR: varDir, MARKET: 'simulated' }), testLog);
  try {
    return await db.sql<{ time: Date; row: string }[]>`
      SELECT time, concat_ws(' ', time, currency, units_per_usd, source, source_updated_at) AS row FROM fx_rates ORDER BY time, currency, source`;
  } finally {
    await db.close();
  }
}
let fxBeforeRestart: { time: Date; row: string }[] = [];

describe('make demo', () => {
  it('serves simulated data, labelled, and stops cleanly on SIGTERM', async () => {
    const demo = await startDemo();
    onTestFailed(() => void demo.proc.kill('SIGKILL'));

    const health = await fetch(`${demo.api}/v1/health`);
    expect(health.headers.get('x-afrates-data')).toBe('simulated');
    expect(await health.json()).toMatchObject({ mode: 'simulated', version: expect.stringContaining('simulated') });
    // the simulated venues' trades reached the live rates through ccxt and the pipeline
    expect(await liveRate(demo.api, 'demo@example.test')).toBeGreaterThan(0);

    demo.proc.kill('SIGTERM');
    expect(await demo.exit).toBe(0);
    fxBeforeRestart = await storedFx();
    expect(fxBeforeRestart.length).toBeGreaterThan(0);
  });

  it('starts again on its data after being killed outright mid-backfill (its lock and database left behind)', async () => {
    const demo = await startDemo('backfilling simulated history');
    demo.proc.kill('SIGKILL');
    await demo.exit;

    const again = await startDemo();
    expect((await fetch(`${again.api}/v1/health`)).status).toBe(200);
    expect(await liveRate(again.api, 'restart@example.test')).toBeGreaterThan(0);
    again.proc.kill('SIGTERM');
    expect(await again.exit).toBe(0);

    // the restarts seeded FX history only after what was stored: the rate in force for an hour
    // already recorded, and every synthetic price and certificate of it, stays as it was
    const newestBefore = fxBeforeRestart.at(-1)!.time.getTime();
    const after = await storedFx();
    expect(after.filter((r) => r.time.getTime() <= newestBefore).map((r) => r.row)).toEqual(fxBeforeRestart.map((r) => r.row));
  });
});
