// A fresh database per test file: the embedded TimescaleDB in memory by default, or a new database
// created on the server named by TEST_DATABASE_URL (dropped again afterwards), so the same suite
// proves the SQL on both.
import crypto from 'node:crypto';
import postgres from 'postgres';
import { loadConfig } from '../../lib/config.js';
import { openDatabase, type Database } from '../../lib/db/connect.js';
import { createLogger } from '../../lib/log.js';

export const testLog = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

export async function openTestDatabase(): Promise<Database> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return openDatabase(loadConfig({}), testLog, { inMemory: true });

  const name = `afrates_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase(loadConfig({ DATABASE_URL: url.toString() }), testLog);
  return {
    ...db,
    async close() {
      await db.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
