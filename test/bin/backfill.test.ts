// `make backfill` as an operator runs it: without a terminal (CI, a log file) it prints plain
// progress lines, not a progress bar's redraws, and walks each venue's whole offered history of
// the day; beside a process that holds the embedded database it says so in one line instead of a
// stack trace. The command runs as its own process against the simulated market.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { openDatabase, type Database } from '../../lib/db/connect.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { testLog } from '../support/db.js';

const root = path.resolve(import.meta.dirname, '../..');
const DAY = 86_400_000;
// yesterday (UTC), whole: the simulated venues serve it from their generated history
const yesterday = new Date(Math.floor(Date.now() / DAY) * DAY - DAY);
const day = yesterday.toISOString().slice(0, 10);
const varDirs: string[] = [];
let sim: SimMarket;

beforeAll(async () => {
  sim = await startSimMarket({ seed: 4, historyStart: yesterday.getTime() - 3_600_000 });
});
afterAll(async () => {
  await sim?.stop();
  for (const dir of varDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function freshVarDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-backfill-'));
  varDirs.push(dir);
  return dir;
}

/** bin/backfill.ts in a process of its own, its output a pipe (not a terminal); `simUrl` null: none given. */
async function backfillCommand(varDir: string, ...args: string[]) {
  return backfillWith(varDir, sim.url, ...args);
}

async function backfillWith(varDir: string, simUrl: string | null, ...args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, AFRATES_VAR_DIR: varDir, MARKET: 'simulated', SIM_URL: simUrl ?? undefined, LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  if (simUrl === null) delete env.SIM_URL;
  try {
    const r = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/backfill.ts', ...args], { cwd: root, env, encoding: 'utf8', timeout: 240_000 });
    return { status: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { status: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('make backfill', () => {
  it('prints plain progress lines without a terminal and stores every trade the venues offer for the day', async () => {
    const varDir = freshVarDir();
    const r = await backfillCommand(varDir, '--pair', 'BTCZAR', '--from', day, '--to', day);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/\u001b\[/); // no terminal control sequences (a bar's redraws)
    const lines = r.stdout.trim().split('\n');
    for (const venue of ['luno', 'valr']) {
      expect(lines).toContain(`backfill ${venue} BTCZAR: 0% +0 trades (started)`);
      expect(lines.some((l) => l.startsWith(`backfill ${venue} BTCZAR: 100% +`) && l.endsWith(' trades (done)'))).toBe(true);
    }
    // progress lines, a note per venue whose history is shorter than asked (Luno keeps 24 hours)
    // and the total, nothing else: no warning, a venue keeping what it keeps is no fault
    const odd = lines.filter((l) => !/^backfill \w+ BTCZAR: \d+% \+\d+ trades( \(started\)| \(done\))?$/.test(l) && !/^stored \d+ new trades$/.test(l) && !/^note: \w+ /.test(l));
    expect(odd).toEqual([]);
    expect(lines.filter((l) => l.startsWith('note: '))).toEqual([expect.stringMatching(/^note: luno keeps 24 hours of trades: backfilled from \S+ \(BTCZAR\)$/)]);

    // VALR serves a day by walking back from its end, page by page: every trade of the day is there
    const db: Database = await openDatabase(loadConfig({ AFRATES_VAR_DIR: varDir }), testLog);
    try {
      const [valr] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades WHERE exchange = 'valr' AND pair = 'BTCZAR'`;
      const served = sim.served('valr', 'BTCZAR').filter((t) => t.time >= yesterday.getTime() && t.time < yesterday.getTime() + DAY).length;
      expect(served).toBeGreaterThan(1_000); // many pages: a cap on the walk would show
      expect(valr!.n).toBe(served);
      const [stored] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades`;
      expect(lines.at(-1)).toBe(`stored ${stored!.n} new trades`);
    } finally {
      await db.close();
    }
  }, 300_000);

  it("with DEMO=1 acts on make demo's database and fetches from its market, the simulated one, never the real venues", async () => {
    const dry = spawnSync('make', ['-n', 'backfill', 'DEMO=1', `FROM=${day}`, `TO=${day}`], { cwd: root, encoding: 'utf8' });
    expect(dry.stdout).toMatch(/AFRATES_VAR_DIR=var\/demo MARKET=simulated .*bin\/backfill\.ts/);
    // MARKET=simulated and no SIM_URL (make demo is stopped, its market with it): the command starts
    // the demo's market itself (seed 1), and stores what that market served
    const varDir = freshVarDir();
    const r = await backfillWith(varDir, null, '--pair', 'BTCZAR', '--from', day, '--to', day);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const demoMarket = await startSimMarket({ seed: 1, historyStart: yesterday.getTime() });
    const db: Database = await openDatabase(loadConfig({ AFRATES_VAR_DIR: varDir }), testLog);
    try {
      const stored = await db.sql<{ trade_id: string }[]>`SELECT trade_id FROM trades WHERE exchange = 'valr' AND pair = 'BTCZAR' ORDER BY time, trade_id`;
      expect(stored.length).toBeGreaterThan(1_000);
      // the same trades as the demo's seed makes (a real venue's, or another seed's, would differ)
      const ids = new Set(stored.map((t) => t.trade_id));
      const served = demoMarket.served('valr', 'BTCZAR').filter((t) => t.time >= yesterday.getTime() && t.time < yesterday.getTime() + DAY);
      expect(served.length).toBe(stored.length);
      expect(served.every((t) => ids.has(String(t.id)))).toBe(true);
    } finally {
      await db.close();
      await demoMarket.stop();
    }
  }, 300_000);

  it('refuses a database another process holds, in one line', async () => {
    const varDir = freshVarDir();
    const holder = await openDatabase(loadConfig({ AFRATES_VAR_DIR: varDir }), testLog); // as make run would
    try {
      const r = await backfillCommand(varDir, '--from', day, '--to', day);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: backfill: the embedded database .* is in use by process \d+ \(make run or make demo\); stop it first/);
    } finally {
      await holder.close();
    }
  }, 120_000);
});
