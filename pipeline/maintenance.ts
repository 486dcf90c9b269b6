// Storage of raw trades: compression (a policy set by the migrations) and retention (an operator
// setting, TRADES_RETENTION_DAYS). Where the database schedules jobs (Database.schedulesJobs: a
// server) TimescaleDB's job scheduler runs both policies; elsewhere the pipeline runs the same
// jobs itself (runStorageJobs), about once an hour, with the VACUUM and ANALYZE that autovacuum
// would run and the CHECKPOINT the checkpointer would: without one the write-ahead log is never
// recycled and grows with every write (docs/embedded-database.md, "Limits").
// Retention drops raw trades only: candles are materialised in the aggregates and stay
// (lib/db/migrate.ts refuses an aggregate rebuild that would lose them).
import type { Sql } from '../lib/db/connect.js';

/** Sets (or removes, for null) the retention policy of raw trades to match the configuration. */
export async function configureRetention(sql: Sql, days: number | null): Promise<void> {
  const [current] = await sql<{ same: boolean }[]>`
    SELECT (config->>'drop_after')::interval = make_interval(days => ${days ?? 0}) AS same
    FROM timescaledb_information.jobs WHERE proc_name = 'policy_retention' AND hypertable_name = 'trades'`;
  if (current ? current.same && days !== null : days === null) return;
  await sql`SELECT remove_retention_policy('trades', if_exists => true)`;
  if (days !== null) await sql`SELECT add_retention_policy('trades', drop_after => make_interval(days => ${days}))`;
}

/**
 * Runs the trades hypertable's compression and retention jobs now, then what a server's background
 * processes do: VACUUM (refreshes rewrite materialised rows; their dead versions must be
 * reclaimed), ANALYZE (the planner needs row counts) and CHECKPOINT (WAL segments before it are
 * recycled, so pg_wal stays within max_wal_size). Returns what ran.
 */
export async function runStorageJobs(sql: Sql): Promise<{ job: string; ms: number }[]> {
  const jobs = await sql<{ job_id: number; proc_name: string }[]>`
    SELECT job_id, proc_name FROM timescaledb_information.jobs
    WHERE hypertable_name = 'trades' AND proc_name IN ('policy_compression', 'policy_retention')
    ORDER BY proc_name DESC`; // retention first: no point compressing what is about to be dropped
  const ran: { job: string; ms: number }[] = [];
  for (const { job_id, proc_name } of jobs) {
    const started = performance.now();
    await sql`CALL run_job(${job_id})`;
    ran.push({ job: proc_name, ms: Math.round(performance.now() - started) });
  }
  const started = performance.now();
  await sql`VACUUM (ANALYZE)`;
  ran.push({ job: 'vacuum_analyze', ms: Math.round(performance.now() - started) });
  const checkpointStarted = performance.now();
  await sql`CHECKPOINT`;
  ran.push({ job: 'checkpoint', ms: Math.round(performance.now() - checkpointStarted) });
  return ran;
}
