// Brings a database up to date, in two layers:
// 1. sql/migrations/: run-once, append-only migrations (tables, hypertables) by node-pg-migrate,
//    all pending ones in one transaction, so a failing migration leaves the database as it was.
// 2. sql/aggregates/ then sql/views/: repeatable files, each (re)creating one object. A file whose
//    checksum differs from the one recorded in sql_objects is re-applied together with every file
//    after it (dependants are dropped by its CASCADE and come back in order), each in its own
//    transaction; re-created continuous aggregates are then refreshed in full from raw trades.
// Re-running with nothing changed is a no-op.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Logger } from '../log.js';
import { createPool } from './connect.js';
import { refreshAggregates } from './refresh.js';

const SQL_OBJECTS_LOCK = 7_202_611; // arbitrary, fixed: the advisory lock of the repeatable layer

export const SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sql');

interface SqlObjectFile {
  readonly name: string; // e.g. aggregates/20_candles_5m.sql
  readonly text: string;
  readonly checksum: string;
}

export function repeatableFiles(sqlDir = SQL_DIR): SqlObjectFile[] {
  return ['aggregates', 'views'].flatMap((folder) =>
    fs
      .readdirSync(path.join(sqlDir, folder))
      .filter((f) => f.endsWith('.sql'))
      .sort()
      .map((f) => {
        const text = fs.readFileSync(path.join(sqlDir, folder, f), 'utf8');
        return { name: `${folder}/${f}`, text, checksum: crypto.createHash('sha256').update(text).digest('hex') };
      }),
  );
}

export async function migrate(url: string, log: Logger, sqlDir = SQL_DIR): Promise<{ applied: string[] }> {
  const ran = await runner({
    databaseUrl: url,
    dir: path.join(sqlDir, 'migrations'),
    migrationsTable: 'pgmigrations',
    direction: 'up',
    count: Infinity,
    singleTransaction: true,
    checkOrder: true,
    verbose: false,
    log: (msg: string) => log.debug({ msg }, 'node-pg-migrate'),
    logger: {
      debug: () => {},
      info: (msg: string) => log.debug(msg),
      warn: (msg: string) => log.warn(msg),
      error: (msg: string) => log.error(msg),
    },
  });
  const applied = ran.map((m) => `migrations/${m.name}`);

  const sql = createPool(url, 1);
  try {
    // the api and pipeline services may start together: one applies, the other then finds it done
    await sql`SELECT pg_advisory_lock(${SQL_OBJECTS_LOCK})`;
    const recorded = new Map(
      (await sql<{ file: string; checksum: string }[]>`SELECT file, checksum FROM sql_objects`).map((r) => [
        r.file,
        r.checksum,
      ]),
    );
    const files = repeatableFiles(sqlDir);
    const firstChanged = files.findIndex((f) => recorded.get(f.name) !== f.checksum);
    if (firstChanged >= 0) {
      for (const file of files.slice(firstChanged)) {
        await sql.begin(async (tx) => {
          await tx.unsafe(file.text);
          await tx`
            INSERT INTO sql_objects (file, checksum) VALUES (${file.name}, ${file.checksum})
            ON CONFLICT (file) DO UPDATE SET checksum = excluded.checksum, applied_at = now()`;
        });
        applied.push(file.name);
      }
      if (files.slice(firstChanged).some((f) => f.name.startsWith('aggregates/'))) {
        await refreshAggregates(sql, null, null);
      }
    }
    if (applied.length > 0) log.info({ applied }, 'database migrated');
    return { applied };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
