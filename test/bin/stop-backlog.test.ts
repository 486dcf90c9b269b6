// SIGTERM in the middle of the worst moment: the first publish after a start, issuing a backlog of
// certificates (make demo with 6 hours of history: ~850 of them, past the 500 a backlog is
// announced from). Container runtimes send SIGKILL 10 s after SIGTERM, so the process must be gone
// well within that, cleanly (exit 0); the next start certifies what was left, and nothing is
// issued twice. A real process (bin/demo.ts, as
// `make demo` runs it) on its own embedded database; what customers get is read from the stored
// records afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { openDatabase } from '../../lib/db/connect.js';
import { testLog } from '../support/db.js';

const root = path.resolve(import.meta.dirname, '../..');
const varDirs: string[] = [];

const started: ChildProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill('SIGKILL');
  for (const d of varDirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A new state directory for the demo (its database and keys). */
function newVarDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-stop-backlog-'));
  varDirs.push(dir);
  return dir;
}

/**
 * The demo with 6 hours of history; resolves once the log holds `until` (a string, or a test of
 * the whole log so far).
 */
async function startDemo(varDir: string, until: string | ((log: string) => boolean)): Promise<{ proc: ChildProcess; exit: Promise<number | null>; log: () => string }> {
  const env: Record<string, string | undefined> = { ...process.env, AFRATES_VAR_DIR: varDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const heard = typeof until === 'string' ? (log: string) => log.includes(until) : until;
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/demo.ts', '--history-hours', '6'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(proc);
  let buffer = '';
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${String(until)} line in: ${buffer.slice(-3000)}`)), 240_000);
    proc.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      if (heard(buffer)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exit.then((code) => reject(new Error(`the demo exited (${code}) before ${String(until)}: ${buffer.slice(-3000)}`)));
  });
  return { proc, exit, log: () => buffer };
}

/** SIGTERM, and how the process ended: its exit code, or 'still running' 10 s later (it is then killed). */
async function stopWithin10s(demo: { proc: ChildProcess; exit: Promise<number | null> }): Promise<number | null | 'still running'> {
  demo.proc.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([demo.exit, new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), 10_000)))]);
  clearTimeout(timer);
  if (outcome === 'still running') {
    demo.proc.kill('SIGKILL');
    await demo.exit;
  }
  return outcome;
}

/**
 * Started, stopped by SIGTERM once `first` is heard, started again and stopped once it has
 * certified: what was left is certified, once.
 */
async function stopThenResume(first: string | ((log: string) => boolean)): Promise<string> {
  const varDir = newVarDir();
  // 1. stopped in the middle of the first publish
  const stopped = await startDemo(varDir, first);
  expect(await stopWithin10s(stopped), stopped.log().slice(-3000)).toBe(0);

  // 2. started again: it certifies what was left, then is stopped once that is done
  const second = await startDemo(varDir, '"msg":"certificates issued for settled buckets"');
  expect(await stopWithin10s(second), second.log().slice(-3000)).toBe(0);

  // every settled bucket with trades has its certificate, each with one log entry, none twice
  const db = await openDatabase(loadConfig({ AFRATES_VAR_DIR: varDir, MARKET: 'simulated' }), testLog);
  try {
    const [row] = await db.sql<{ missing: number; certificates: number; entries: number; distinct_entries: number; bundles: number }[]>`
      SELECT
        (SELECT count(*)::int FROM (
           SELECT DISTINCT e.pair, e.bucket FROM candles_5m_by_exchange e
           JOIN public_pairs p ON p.pair = e.pair
           JOIN pair_settlement s ON s.pair = e.pair
           WHERE e.bucket + INTERVAL '5 minutes' <= s.settled_through
             AND NOT EXISTS (SELECT 1 FROM certificates c WHERE c.pair = e.pair AND c.bucket = e.bucket)) m) AS missing,
        (SELECT count(*)::int FROM certificates) AS certificates,
        (SELECT count(*)::int FROM transparency_entries WHERE kind = 'certificate') AS entries,
        (SELECT count(DISTINCT entry_id)::int FROM transparency_entries WHERE kind = 'certificate') AS distinct_entries,
        (SELECT count(*)::int FROM bundles WHERE id LIKE 'CERT-%') AS bundles`;
    expect(row!.certificates).toBeGreaterThan(500);
    expect(row).toEqual({ missing: 0, certificates: row!.certificates, entries: row!.certificates, distinct_entries: row!.certificates, bundles: row!.certificates });
  } finally {
    await db.close();
  }
  return stopped.log();
}

describe('SIGTERM during the first publish of a backlog', () => {
  it('is honoured within 10 s in the middle of the certificates, and the next start certifies the rest once', async () => {
    const log = await stopThenResume('"msg":"certifying a backlog of settled buckets"');
    expect(log).toContain('certificates left for the next run');
  }, 600_000);

  it('is honoured within 10 s as the publish that settles the backlog begins (the aggregates refreshed first)', async () => {
    // every venue's first cycle done: the publish that settles the history follows at once
    await stopThenResume((log) => log.split('"msg":"venue cycle"').length > 4);
  }, 600_000);
});
