// Brings a database up to date, in two layers:
// 1. sql/migrations/: run-once, append-only migrations (tables, hypertables) by node-pg-migrate,
//    all pending ones in one transaction, so a failing migration leaves the database as it was.
// 2. sql/aggregates/ then sql/views/: repeatable files, each (re)creating one object. A file whose
//    checksum differs from the one recorded in sql_objects is re-applied together with every file
//    after it (dependants are dropped by its CASCADE and come back in order), each in its own
//    transaction; re-created continuous aggregates are then refreshed in full from raw trades.
//    A run stopped part-way (killed, or a file failing) is resumed by the next one.
//    That needs the raw trades: when retention has dropped some that candles were built from, the
//    rebuild is refused rather than losing those candles.
// Re-running with nothing changed is a no-op.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Logger } from '../log.js';
import { createPool } from './connect.js';
import { refreshAggregates, resetFrontiers } from './refresh.js';

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
    // statement_timeout 0, as on the repeatable layer's connection below: a migration runs to the end
    databaseUrl: { connectionString: url, options: '-c statement_timeout=0' },
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
      // every aggregate file from the first changed one on is (re)created: one aggregate per file,
      // named by what it produces (aggregates/20_candles_5m.sql -> candles_5m)
      const aggregates = files.slice(firstChanged).filter((f) => f.name.startsWith('aggregates/'));
      const views = aggregates.map((f) => path.basename(f.name, '.sql').replace(/^\d+_/, ''));
      // re-creating one that exists rebuilds it from raw trades; a new one just starts there. Asked
      // of the database, not of sql_objects: a resumed run finds the records already forgotten.
      const [existing] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM jsonb_array_elements_text(${sql.json([...views])}) AS v(name) WHERE to_regclass(v.name) IS NOT NULL`;
      if (existing!.n > 0) await refuseCandleLoss(sql);
      // Before the first file runs, forget what it is about to replace: every later file's record
      // (its CASCADE may drop their objects, though their text is unchanged) and the frontiers of
      // the aggregates to be re-created. A run killed or failing part-way then resumes at the first
      // file not re-applied, and no re-created aggregate keeps a frontier that hides its past.
      await sql.begin(async (tx) => {
        await tx`DELETE FROM sql_objects WHERE file IN (SELECT jsonb_array_elements_text(${tx.json(files.slice(firstChanged).map((f) => f.name))}))`;
        await resetFrontiers(tx, views);
      });
      for (const file of files.slice(firstChanged)) {
        await sql.begin(async (tx) => {
          await tx.unsafe(file.text);
          await tx`
            INSERT INTO sql_objects (file, checksum) VALUES (${file.name}, ${file.checksum})
            ON CONFLICT (file) DO UPDATE SET checksum = excluded.checksum, applied_at = now()`;
        });
        applied.push(file.name);
      }
      if (views.length > 0) {
        // again: a refresh pass of another process may have run between the reset and the re-creation
        await resetFrontiers(sql, views);
        // a new database has nothing to materialise: the pipeline's first pass sets the frontiers
        const [any] = await sql`SELECT 1 FROM trades LIMIT 1`;
        if (any) await refreshAggregates(sql);
      }
    }
    if (applied.length > 0) log.info({ applied }, 'database migrated');
    return { applied };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Re-creating an aggregate rebuilds it from raw trades. If retention (TRADES_RETENTION_DAYS) has
 * dropped trades that the existing candles were built from, those candles would be lost: refuse.
 */
async function refuseCandleLoss(sql: ReturnType<typeof createPool>): Promise<void> {
  let row: { candles_from: Date | null; trades_from: Date | null } | undefined;
  try {
    [row] = await sql<{ candles_from: Date | null; trades_from: Date | null }[]>`
      SELECT (SELECT min(bucket) FROM candles_1d) AS candles_from, (SELECT min(time) FROM trades) AS trades_from`;
  } catch {
    return; // no candles yet (a new database): nothing to lose
  }
  const dayOf = (d: Date) => Math.floor(d.getTime() / 86_400_000) * 86_400_000;
  if (row?.candles_from && (!row.trades_from || dayOf(row.trades_from) > row.candles_from.getTime())) {
    throw new Error(
      `an aggregate file changed, and re-creating the aggregates would rebuild them from raw trades, which are kept only from ${row.trades_from?.toISOString() ?? '(none)'} ` +
        `(TRADES_RETENTION_DAYS) while candles go back to ${row.candles_from.toISOString()}: those candles would be lost. ` +
        'Put the old file back, or add the change as a new aggregate file instead.',
    );
  }
}
