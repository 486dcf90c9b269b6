// A fresh database per test file: the embedded TimescaleDB in memory by default, or a new database
// created on the server named by TEST_DATABASE_URL (dropped again afterwards), so the same suite
// proves the SQL on both.
import crypto from 'node:crypto';
import postgres from 'postgres';
import { loadConfig } from '../../lib/config.js';
import { openDatabase, type Database } from '../../lib/db/connect.js';
import { startEmbedded } from '../../lib/db/embedded.js';
import { createLogger } from '../../lib/log.js';

export const testLog = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

/** An empty database (not migrated) and how to get rid of it. */
export async function freshDatabaseUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const embedded = await startEmbedded(undefined);
    return { url: embedded.url, drop: () => embedded.stop() };
  }
  const name = `afrates_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
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

export async function openTestDatabase(): Promise<Database> {
  if (!process.env.TEST_DATABASE_URL) return openDatabase(loadConfig({}), testLog, { inMemory: true });
  const fresh = await freshDatabaseUrl();
  const db = await openDatabase(loadConfig({ DATABASE_URL: fresh.url }), testLog);
  return {
    ...db,
    async close() {
      await db.close();
      await fresh.drop();
    },
  };
}
