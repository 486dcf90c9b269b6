// A deployment is its database (lib/db/deployment.ts): the secret naming its part of Redis stays
// across restarts, and a copy of the database restored or made somewhere else makes its own at its
// first start, so a staging service restored from production's dump never shares production's keys,
// revocations and counters on one Redis. On a server, a real copy (CREATE DATABASE ... TEMPLATE);
// everywhere, a database whose row says it was made elsewhere, as a restored dump's row does.
// A running API process whose deployment secret changes under it (a process started on a restored
// copy renewed it) stops: everywhere through the process's fatal path, on a server as real processes.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../../lib/db/connect.js';
import { heedSecretChange } from '../../../lib/db/deployment.js';
import { migrate } from '../../../lib/db/migrate.js';
import type { Logger } from '../../../lib/log.js';
import { failingQueries, freshDatabaseUrl, testLog } from '../../support/db.js';
import { startTestApi } from '../../support/api.js';
import { endServiceRuns, runService } from '../../support/service-process.js';
import { until } from '../../support/wait.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  database = await freshDatabaseUrl();
});
afterAll(async () => {
  endServiceRuns();
  await database?.drop();
});

async function deployment(url: string): Promise<{ secret: string; made_in: string | null }> {
  const sql = createPool(url, 1);
  try {
    const [row] = await sql<{ secret: string; made_in: string | null }[]>`SELECT secret, made_in FROM deployment`;
    return row!;
  } finally {
    await sql.end();
  }
}

/** A logger that keeps the warnings' messages, and the place each names. */
function listening(): { log: Logger; warned: string[]; places: unknown[] } {
  const warned: string[] = [];
  const places: unknown[] = [];
  const warn = (fields: { made_in?: unknown }, msg?: string) => {
    warned.push(String(msg));
    places.push(fields?.made_in);
  };
  return { warned, places, log: { ...testLog, warn } as unknown as Logger };
}

describe('the deployment a database is', () => {
  it('keeps its secret across starts, and makes its own when its row says it was made elsewhere (a restored copy)', async () => {
    await migrate(database.url, testLog);
    const first = await deployment(database.url);
    expect(first.made_in).toMatch(/^\d+\/\d+$/); // the server's system identifier and the database's oid
    const quiet = listening();
    await migrate(database.url, quiet.log);
    expect(await deployment(database.url)).toEqual(first);
    expect(quiet.warned.filter((m) => m.includes('copy'))).toEqual([]);

    // a dump of another server's database restored here brings that server's place with its row
    const sql = createPool(database.url, 1);
    await sql`UPDATE deployment SET made_in = '1234567890123456789/16384'`;
    await sql.end();
    const told = listening();
    await migrate(database.url, told.log);
    const copy = await deployment(database.url);
    expect(copy.secret).not.toBe(first.secret);
    expect(copy.made_in).toBe(first.made_in);
    expect(told.warned.some((m) => m.includes('a copy of another deployment'))).toBe(true);
    expect(told.places).toContain('1234567890123456789/16384'); // where it was copied from
    await migrate(database.url, testLog); // and keeps the new one from then on
    expect((await deployment(database.url)).secret).toBe(copy.secret);
  });

  it.runIf(onServer)('on a server, a database copied from another (CREATE DATABASE ... TEMPLATE) is a deployment of its own; the original keeps its secret', async () => {
    const original = await freshDatabaseUrl();
    const name = new URL(original.url).pathname.slice(1);
    const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    const copyName = `${name}_copy`;
    const copyUrl = new URL(original.url);
    copyUrl.pathname = `/${copyName}`;
    try {
      await migrate(original.url, testLog);
      const before = await deployment(original.url);
      // a template has no one connected: TimescaleDB's scheduler leaves it (as before a restore), then it is copied
      const onOriginal = postgres(original.url, { max: 1, onnotice: () => {} });
      await onOriginal`SELECT timescaledb_pre_restore()`;
      await onOriginal.end();
      // a busy server's TimescaleDB launcher may still look in on it: copied once nobody is there
      let present = '';
      await until('the copy made', async () => {
        try {
          await admin.unsafe(`CREATE DATABASE ${copyName} TEMPLATE ${name}`);
          return true;
        } catch (err) {
          if ((err as { code?: string }).code !== '55006') throw err;
          present = (await admin<{ who: string }[]>`SELECT string_agg(backend_type || ' ' || coalesce(application_name, ''), ', ') AS who FROM pg_stat_activity WHERE datname = ${name}`)[0]!.who;
          return false;
        }
      }, 90_000).catch((err: Error) => {
        throw new Error(`${err.message}; connected to the original: ${present}`);
      });
      const back = postgres(original.url, { max: 1, onnotice: () => {} });
      await back`SELECT timescaledb_post_restore()`;
      await back.end();
      expect((await deployment(copyUrl.toString())).secret).toBe(before.secret); // the copy, as made

      // two processes starting on the copy together: it is renewed once
      const [a, b] = [listening(), listening()];
      await Promise.all([migrate(copyUrl.toString(), a.log), migrate(copyUrl.toString(), b.log)]);
      expect([...a.warned, ...b.warned].filter((m) => m.includes('a copy of another deployment'))).toHaveLength(1);
      const copy = await deployment(copyUrl.toString());
      expect(copy.secret).not.toBe(before.secret);
      expect(copy.made_in).not.toBe(before.made_in);
      await migrate(original.url, testLog);
      expect(await deployment(original.url)).toEqual(before);
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${copyName} WITH (FORCE)`);
      await admin.end();
      await original.drop();
    }
  });
});

describe('a process whose deployment secret changes under it', () => {
  /** Ten rounds' time: long enough for rounds that should not come to have come. */
  const tenRounds = () => new Promise((r) => setTimeout(r, 100));

  it('is told once, after the secret changed, and not while it stays or cannot be read (the database away), nor once stopped', async () => {
    await migrate(database.url, testLog);
    const pool = createPool(database.url, 1);
    const reads = failingQueries(pool, 'FROM deployment', Object.assign(new Error('connection closed'), { code: 'CONNECTION_CLOSED' }));
    let told = 0;
    const watch = await heedSecretChange(reads.sql, () => told++, 10);
    let after = 0;
    try {
      const [row] = await pool<{ secret: string }[]>`SELECT secret FROM deployment`;
      expect(watch.secret).toBe(row!.secret);
      await until('three rounds that found the same secret', () => reads.matched >= 4);
      reads.fail(3);
      await until('three rounds that could not read it', () => reads.pending === 0);
      expect(told).toBe(0);

      await pool`UPDATE deployment SET secret = DEFAULT`; // as the operator's command, or a process on a copy
      await until('told of the change', () => told === 1);
      after = reads.matched;
      await pool`UPDATE deployment SET secret = DEFAULT`;
      await tenRounds(); // none is made once told
      expect([told, reads.matched]).toEqual([1, after]);
    } finally {
      watch.stop();
    }

    // stopped: no round reads it again
    const again = await heedSecretChange(reads.sql, () => told++, 10);
    await until('a round', () => reads.matched > after + 1);
    again.stop();
    const stoppedAt = reads.matched;
    await pool`UPDATE deployment SET secret = DEFAULT`;
    await tenRounds();
    expect([told, reads.matched]).toEqual([1, stoppedAt]);
    await pool.end();
  });

  it("stops the API's process: its secret changed (UPDATE deployment, as docs/operations.md has operators do), the process's fatal path is taken", async () => {
    const fatal: Error[] = [];
    const t = await startTestApi({ onFatal: (reason) => fatal.push(reason) });
    try {
      await t.db.sql`UPDATE deployment SET secret = DEFAULT`;
      await until('the process told to stop', () => fatal.length > 0, 20_000); // a round every 5 s
      expect(fatal.map((e) => e.message)).toEqual(['the deployment secret changed under this process']);
    } finally {
      await t.close();
    }
  });

  it.runIf(onServer)('on a server, an API process stops (exit 1, saying why) when a process started on its restored database renews it; the new one serves', async () => {
    const restored = await freshDatabaseUrl();
    try {
      const first = runService('bin/serve.ts', restored.url, { ROLE: 'api' });
      expect(await first.outcome, first.output()).toBe('running');
      // restored in place from a dump: the row says it was made where the dump was taken
      const sql = createPool(restored.url, 1);
      await sql`UPDATE deployment SET made_in = '1234567890123456789/16384'`;
      await sql.end();

      const second = runService('bin/serve.ts', restored.url, { ROLE: 'api' });
      expect(await second.outcome, second.output()).toBe('running');
      expect(second.output()).toContain('a copy of another deployment');
      expect(await first.exited, first.output()).toBe(1);
      expect(first.output()).toContain('deployment secret changed under this process');

      const { url } = JSON.parse(second.output().split('\n').find((line) => line.includes('"API listening"'))!) as { url: string };
      expect((await fetch(`${url}/v1/health`)).status).toBe(200);
      second.proc.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      endServiceRuns();
      await restored.drop();
    }
  }, 120_000);
});
