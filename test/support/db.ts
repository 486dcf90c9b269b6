// A fresh database per test file: the embedded TimescaleDB in memory by default, or a new database
// created on the server named by TEST_DATABASE_URL (dropped again afterwards), so the same suite
// proves the SQL on both.
import crypto from 'node:crypto';
import fs from 'node:fs';
import postgres from 'postgres';
import { loadConfig } from '../../lib/config.js';
import { openDatabase, type Database, type Sql } from '../../lib/db/connect.js';
import { renewDeployment } from '../../lib/db/deployment.js';
import { startEmbedded } from '../../lib/db/embedded/index.js';
import { createLogger } from '../../lib/log.js';

export const testLog = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

/** Names the migrated database test/support/global-setup.ts wrote, which each file's database starts from. */
export const DATABASE_DUMP_ENV = 'AFRATES_TEST_DATABASE_DUMP';

/** The migrated database to start from, where the run made one (a benchmark's run starts from initdb). */
const migratedDump = (): string | undefined => {
  const file = process.env[DATABASE_DUMP_ENV];
  return file && fs.existsSync(file) ? file : undefined;
};

/** An empty database (not migrated) and how to get rid of it. */
export async function freshDatabaseUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const embedded = await startEmbedded(undefined);
    return { url: embedded.url, drop: () => embedded.stop() };
  }
  const name = `afrates_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } catch (err) {
    await admin.end();
    throw err;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * A migrated database for one test file. On a server, the database it creates is dropped by
 * close() even when closing the pool fails (a test that ended it), and at once if migrating fails:
 * a suite run leaves no afrates_test_* database behind.
 */
export async function openTestDatabase(): Promise<Database> {
  if (!process.env.TEST_DATABASE_URL) {
    // from the run's migrated copy, still migrated on opening: a no-op that proves the copy current
    const from = migratedDump();
    const db = await openDatabase(loadConfig({}), testLog, { inMemory: true, from });
    // each file's database is a deployment of its own, as a new one is: a copy of the data
    // directory is where it was copied from (lib/db/deployment.ts), so its secret is made anew here
    if (from) await renewDeployment(db.sql);
    return db;
  }
  const fresh = await freshDatabaseUrl();
  let db: Database;
  try {
    db = await openDatabase(loadConfig({ DATABASE_URL: fresh.url }), testLog);
  } catch (err) {
    await fresh.drop();
    throw err;
  }
  return {
    ...db,
    async close() {
      try {
        await db.close();
      } finally {
        await fresh.drop();
      }
    },
  };
}

/**
 * `sql`, except that the next `fail(n)` queries whose text includes `match` fail with `err`, as a
 * statement timeout or a dropped connection would; `pending` is how many are still to fail,
 * `matched` how many such queries were made, failed or not.
 */
export function failingQueries(sql: Sql, match: string, err: Error): { sql: Sql; fail(times: number): void; readonly pending: number; readonly matched: number } {
  let left = 0;
  let matched = 0;
  const failing = new Proxy(sql, {
    apply(target, self, args: unknown[]) {
      if (Array.isArray(args[0]) && (args[0] as string[]).join('?').includes(match)) {
        matched++;
        if (left > 0) {
          left--;
          return Promise.reject(err);
        }
      }
      return Reflect.apply(target as never, self, args);
    },
  });
  return {
    sql: failing,
    fail: (times) => void (left = times),
    get pending() {
      return left;
    },
    get matched() {
      return matched;
    },
  };
}
