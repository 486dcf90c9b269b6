// Once per run, before any test file: a migrated embedded database written to a file, from which
// each file's database starts (test/support/db.ts openTestDatabase) rather than from initdb and
// every migration again: about 3.5 s less of both cores' time per file (docs/embedded-database.md).
// On a server (TEST_DATABASE_URL) each file creates a database of its own, as before.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config.js';
import { openDatabase } from '../../lib/db/connect.js';
import { createLogger } from '../../lib/log.js';
import { DATABASE_DUMP_ENV } from './db.js';

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env.TEST_DATABASE_URL) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-test-'));
  const file = path.join(dir, 'migrated.tar');
  const db = await openDatabase(loadConfig({}), createLogger('silent'), { inMemory: true });
  try {
    await db.sql`CHECKPOINT`; // each copy then opens without replaying the migrations' write-ahead log
    await db.embedded!.dump(file);
  } finally {
    await db.close();
  }
  process.env[DATABASE_DUMP_ENV] = file; // the test files' processes inherit it
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
