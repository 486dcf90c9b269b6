// Processes started at the same moment against one new database, as compose and every orchestrator
// start them: each migrates on start, one applies while the others wait for it, and all of them
// start; every migration and SQL object is applied once. Real processes (bin/migrate.ts, and the
// service as ROLE=api and ROLE=pipeline) on a real server: the embedded database belongs to one
// process, so the race exists only on a server (TEST_DATABASE_URL).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { repeatableFiles, SQL_DIR } from '../../lib/db/migrate.js';
import { freshDatabaseUrl } from '../support/db.js';

const root = path.resolve(import.meta.dirname, '../..');
const onServer = Boolean(process.env.TEST_DATABASE_URL);
const NO_SERVER = 'needs TEST_DATABASE_URL (a TimescaleDB server): on the embedded database one process owns the database, so no two migrate at once';

const started: ChildProcess[] = [];
const varDirs: string[] = [];
afterAll(() => {
  for (const p of started) p.kill('SIGKILL');
  for (const d of varDirs) fs.rmSync(d, { recursive: true, force: true });
});

interface Run {
  readonly proc: ChildProcess;
  /** Resolves with the exit code, or with 'running' once the service logs that it runs. */
  readonly outcome: Promise<number | 'running'>;
  readonly output: () => string;
}

/** A real process (node with tsx's loader, so signals reach it) on `url`. */
function run(script: string, url: string, extra: Record<string, string> = {}): Run {
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-together-'));
  varDirs.push(varDir);
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: url, AFRATES_VAR_DIR: varDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', MARKET: 'simulated', SIM_URL: 'http://127.0.0.1:9', CYCLE_SECONDS: '300', ...extra };
  delete env.REDIS_URL;
  delete env.DATABASE_READ_URL;
  const proc = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(proc);
  let out = '';
  const outcome = new Promise<number | 'running'>((resolve) => {
    const hear = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"afrates running"')) resolve('running');
    };
    proc.stdout!.on('data', hear);
    proc.stderr!.on('data', hear);
    proc.once('exit', (code) => resolve(code ?? -1));
  });
  return { proc, outcome, output: () => out };
}

describe('processes started together on a new database', () => {
  it('all start, and every migration is applied once', async (ctx) => {
    if (!onServer) ctx.skip(NO_SERVER);
    const fresh = await freshDatabaseUrl();
    try {
      // three at once: two migrations and a service of each role
      const runs = [run('bin/migrate.ts', fresh.url), run('bin/migrate.ts', fresh.url), run('bin/serve.ts', fresh.url, { ROLE: 'api' }), run('bin/serve.ts', fresh.url, { ROLE: 'pipeline' })];
      const outcomes = await Promise.all(runs.map((r) => r.outcome));
      const report = runs.map((r, i) => `#${i}: ${outcomes[i]}\n${r.output().slice(-1500)}`).join('\n');
      expect(outcomes, report).toEqual([0, 0, 'running', 'running']);
      expect(runs.map((r) => r.output()).join('')).not.toContain('Another migration is already running');

      const sql = postgres(fresh.url, { max: 1, onnotice: () => {} });
      try {
        const files = fs.readdirSync(path.join(SQL_DIR, 'migrations')).filter((f) => f.endsWith('.sql'));
        const migrations = await sql<{ name: string; n: number }[]>`SELECT name, count(*)::int AS n FROM pgmigrations GROUP BY name ORDER BY name`;
        expect(migrations.map((m) => m.name).sort()).toEqual(files.map((f) => f.replace(/\.sql$/, '')).sort());
        expect(migrations.every((m) => m.n === 1)).toBe(true);
        const objects = await sql<{ file: string }[]>`SELECT file FROM sql_objects ORDER BY file`;
        expect(objects.map((o) => o.file).sort()).toEqual(repeatableFiles().map((f) => f.name).sort());
      } finally {
        await sql.end();
      }
      // the services stop cleanly
      for (const r of runs.slice(2)) {
        const exited = new Promise((resolve) => r.proc.once('exit', resolve));
        r.proc.kill('SIGTERM');
        await exited;
      }
    } finally {
      for (const p of started) p.kill('SIGKILL');
      await fresh.drop();
    }
  }, 180_000);
});
