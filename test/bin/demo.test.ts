// `make demo`'s process (bin/demo.ts) as an operator runs it: it starts its simulated market,
// backfills, serves the simulated data labelled as such, stops cleanly on SIGTERM, and starts
// again on its own data after being killed outright. As a newcomer first meets it: health says
// `starting` until its history is published, and what it serves once health says ok stays so.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
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

interface RunningDemo {
  proc: ChildProcess;
  /** The API's URL, from the line that was waited for (ready, or the API listening). */
  api: string;
  exit: Promise<number | null>;
  /** The first log line (parsed) holding `text`, whenever it comes. */
  line(text: string): Promise<Record<string, unknown>>;
}

/**
 * Starts the demo with an hour of history (node with tsx's loader: signals reach the demo itself),
 * and waits for the log line holding `until` (default: ready, with the API's URL).
 */
async function startDemo(until = '"demo ready', extraEnv: Record<string, string> = {}): Promise<RunningDemo> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/demo.ts', '--history-hours', '1'], { cwd: root, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(proc);
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const lines: string[] = [];
  let partial = '';
  const waiting = new Set<() => void>();
  proc.stdout!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop()!;
    lines.push(...parts.filter((l) => l.startsWith('{')));
    for (const check of waiting) check();
  });
  const line = (text: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`no ${text} line in: ${lines.slice(-20).join('\n')}`)), 180_000);
      const check = () => {
        const found = lines.find((l) => l.includes(text));
        if (found) finish(null, JSON.parse(found) as Record<string, unknown>);
      };
      const finish = (err: Error | null, value?: Record<string, unknown>) => {
        clearTimeout(timer);
        waiting.delete(check);
        if (err) reject(err);
        else resolve(value!);
      };
      waiting.add(check);
      check();
      void exit.then((code) => finish(new Error(`the demo exited (${code}) before a ${text} line: ${lines.slice(-20).join('\n')}`)));
    });
  const first = await line(until);
  return { proc, api: String(first.api ?? first.url ?? ''), exit, line };
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

/** A key of `tier` for the demo in `dir`, issued by the key command through the running demo. */
async function demoKey(dir: string, tier: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/key.ts', 'create', '--tier', tier, '--name', 'Newcomer', '--email', `${tier}@example.test`], {
    cwd: root,
    env: { ...env, AFRATES_VAR_DIR: dir },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return stdout.trim();
}

type Answer = Record<string, unknown> & { tree_size?: number; pairs?: unknown; data?: unknown };

/** How many publishes (settle, certify, log head) the demo has finished: its metrics' count. */
async function publishes(metrics: string): Promise<number> {
  const text = await (await fetch(metrics)).text();
  return Number(/^afrates_cycle_duration_seconds_count\{kind="publish"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

describe('make demo, as a newcomer first meets it', () => {
  it('says starting until its history is published; once health says ok its candles, log and sources are whole and stay so', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-demo-first-'));
    onTestFailed(() => fs.rmSync(dir, { recursive: true, force: true }));
    // cycles of 10 s: the "minute later" comes after a few of them
    const demo = await startDemo('"API listening"', { AFRATES_VAR_DIR: dir, METRICS_PORT: '0', CYCLE_SECONDS: '10' });
    onTestFailed(() => void demo.proc.kill('SIGKILL'));
    const metrics = String((await demo.line('"metrics listening"')).url);

    // the README's first request: ask health until it says ok; before that it says starting (503),
    // never a failure of what is only loading
    const seen = new Set<string>();
    for (;;) {
      const res = await fetch(`${demo.api}/v1/health`);
      const body = (await res.json()) as { status: string; services: Record<string, string> };
      if (body.status === 'ok') break;
      seen.add(`${res.status} ${body.status} database ${body.services.database}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect([...seen].filter((s) => !/^503 starting database (ok|busy)$/.test(s))).toEqual([]);
    expect(seen.size).toBeGreaterThan(0); // it was asked while loading

    const key = await demoKey(dir, 'enterprise');
    const get = async (p: string) => {
      const res = await fetch(`${demo.api}${p}`, { headers: { 'X-API-Key': key } });
      expect(res.status, p).toBe(200);
      return res.json() as Promise<Answer>;
    };
    const firstDay = new Date(Date.now() - 3_600_000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    const pairs = ['BTCNGN', 'BTCZAR', 'BTCKES'];
    /** Each pair's 5-minute candles that had ended 10 minutes before `at`: the history, settled by now. */
    // one page after another: a 10,000-candle page takes half an Enterprise customer's share
    // (docs/decisions.md, "Each customer's share of a process")
    const history = async (at: number) => {
      const out: Record<string, { time: string }[]> = {};
      for (const pair of pairs) {
        const page = await get(`/v1/rates/historical?pair=${pair}&interval=5m&start=${firstDay}&end=${today}&limit=10000`);
        out[pair] = (page.data as { time: string }[]).filter((c) => Date.parse(c.time) + 600_000 <= at);
      }
      return out;
    };
    const readAt = Date.now();
    const before = { candles: await history(readAt), head: await get('/v1/transparency/head'), status: await get('/v1/status') };
    for (const pair of pairs) {
      expect(before.candles[pair]!.length, pair).toBeGreaterThan(6); // an hour of history, less the last 10 minutes
      expect(before.candles[pair]!.filter((c) => !(c as { settled?: boolean }).settled), pair).toEqual([]);
    }
    expect(before.head.tree_size).toBeGreaterThan(0); // the history's certificates are in the log
    const failing = (status: Answer) => Object.entries(status.pairs as Record<string, { sources_failing: string[] }>).filter(([, p]) => p.sources_failing.length > 0);
    expect(failing(before.status)).toEqual([]);

    // after the next cycles (two more publishes: one begun after the reads), the same
    const published = await publishes(metrics);
    while ((await publishes(metrics)) < published + 2) await new Promise((r) => setTimeout(r, 500));
    const after = { candles: await history(readAt), head: await get('/v1/transparency/head'), status: await get('/v1/status') };
    expect(after.candles).toEqual(before.candles);
    expect(after.head.tree_size).toBeGreaterThanOrEqual(before.head.tree_size!);
    expect(failing(after.status)).toEqual([]);

    demo.proc.kill('SIGTERM');
    expect(await demo.exit).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 180_000); // a start, its history's publish and two 10 s cycles: a loaded machine takes over a minute
});
