// make sql, as an operator opens SQL on the embedded database: one statement's rows as JSON lines
// (Q=), statements piped to psql, and one line saying what to do while the service holds the
// database (it admits one connection).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { openDatabase } from '../../lib/db/connect.js';
import { testLog } from '../support/db.js';

const root = path.resolve(import.meta.dirname, '../..');
const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-sql-'));
afterAll(() => fs.rmSync(varDir, { recursive: true, force: true }));

beforeAll(async () => {
  // a migrated embedded database, as make run leaves it
  const db = await openDatabase(loadConfig({ AFRATES_VAR_DIR: varDir }), testLog);
  await db.close();
}, 120_000);

/** make sql with the environment given (Q, DEMO aside) and `input` on stdin. */
function makeSql(env: Record<string, string>, input = ''): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const { DATABASE_URL: _d, Q: _q, ...rest } = process.env;
    const p = spawn('make', ['-s', 'sql'], { cwd: root, env: { ...rest, AFRATES_VAR_DIR: varDir, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    p.on('exit', (status) => resolve({ status, stdout, stderr }));
    p.stdin.end(input);
  });
}

describe('make sql', () => {
  it('runs Q and prints its rows as JSON lines', async () => {
    const r = await makeSql({ Q: "SELECT pair, visibility FROM pairs WHERE pair IN ('BTCNGN', 'BTCUSDT') ORDER BY pair" });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { pair: 'BTCNGN', visibility: 'public' },
      { pair: 'BTCUSDT', visibility: 'internal' },
    ]);
  }, 60_000);

  it('takes statements on its input (psql)', async () => {
    const r = await makeSql({}, "SELECT count(*) AS public_pairs FROM pairs WHERE visibility = 'public';\n");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/public_pairs\s*\n-+\s*\n\s*20\s*\n/);
  }, 60_000);

  it('says in one line to stop the service while it holds the embedded database', async () => {
    const held = await openDatabase(loadConfig({ AFRATES_VAR_DIR: varDir }), testLog, { migrate: false }); // as make run would
    try {
      const r = await makeSql({ Q: 'SELECT 1' });
      expect(r.status).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')[0]).toMatch(/^error: sql: the embedded database .* is in use by process \d+ \(make run or make demo\); stop it first/);
    } finally {
      await held.close();
    }
  }, 60_000);
});
