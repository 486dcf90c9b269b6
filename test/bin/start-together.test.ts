// Processes started at the same moment against one new database, as compose and every orchestrator
// start them: each migrates on start, one applies while the others wait for it, and all of them
// start; every migration and SQL object is applied once. Real processes (bin/migrate.ts, and the
// service as ROLE=api and ROLE=pipeline) on a real server: the embedded database belongs to one
// process, so the race exists only on a server (TEST_DATABASE_URL).
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { repeatableFiles, SQL_DIR } from '../../lib/db/migrate.js';
import { freshDatabaseUrl } from '../support/db.js';
import { endServiceRuns, runService } from '../support/service-process.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
const NO_SERVER = 'needs TEST_DATABASE_URL (a TimescaleDB server): on the embedded database one process owns the database, so no two migrate at once';

afterAll(endServiceRuns);

describe('processes started together on a new database', () => {
  it('all start, and every migration is applied once', async (ctx) => {
    if (!onServer) ctx.skip(NO_SERVER);
    const fresh = await freshDatabaseUrl();
    try {
      // three at once: two migrations and a service of each role
      const runs = [runService('bin/migrate.ts', fresh.url), runService('bin/migrate.ts', fresh.url), runService('bin/serve.ts', fresh.url, { ROLE: 'api' }), runService('bin/serve.ts', fresh.url, { ROLE: 'pipeline' })];
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
        r.proc.kill('SIGTERM');
        expect(await r.exited).toBe(0);
      }
    } finally {
      endServiceRuns();
      await fresh.drop();
    }
  }, 180_000);
});
