// The streaming replica of TEST_DATABASE_URL's server, named by TEST_DATABASE_READ_URL (its
// `postgres` database; a superuser, to pause replay): the same database there (the replica mirrors
// every database of the primary), its replay paused and resumed (pg_wal_replay_pause) or delayed
// (recovery_min_apply_delay, reset afterwards), and the replica stopped and started by the
// commands TEST_REPLICA_STOP and TEST_REPLICA_START (for a stopped replica).
import { exec } from 'node:child_process';
import { promisify } from 'node:util';
import postgres from 'postgres';
import type { Sql } from '../../lib/db/connect.js';
import { primaryWalPosition } from '../../lib/db/replicas.js';
import { until } from './wait.js';

export const replicaServerUrl = process.env.TEST_DATABASE_READ_URL;
export const onServers = Boolean(process.env.TEST_DATABASE_URL && replicaServerUrl);
export const canStopReplica = Boolean(process.env.TEST_REPLICA_STOP && process.env.TEST_REPLICA_START);

/** The URL of the database at `url` (on the primary) on the replica. */
export function onReplica(url: string): string {
  const replica = new URL(replicaServerUrl!);
  replica.pathname = new URL(url).pathname;
  return replica.toString();
}

async function onReplicaServer<T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(replicaServerUrl!, { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end();
  }
}

/** Replay stops (WAL is still received): reads there see a frozen state. */
export async function pauseReplay(): Promise<void> {
  await onReplicaServer(async (sql) => {
    await sql`SELECT pg_wal_replay_pause()`;
    await until('replay paused', async () => (await sql<{ s: string }[]>`SELECT pg_get_wal_replay_pause_state() AS s`)[0]!.s === 'paused');
  });
}

export async function resumeReplay(): Promise<void> {
  await onReplicaServer((sql) => sql`SELECT pg_wal_replay_resume()`);
}

/** Each commit is replayed `seconds` after it was made (kept across a restart of the replica, until undelayReplay). */
export async function delayReplay(seconds: number): Promise<void> {
  await onReplicaServer(async (sql) => {
    await sql.unsafe(`ALTER SYSTEM SET recovery_min_apply_delay = '${Number(seconds)}s'`);
    await sql`SELECT pg_reload_conf()`;
  });
}

export async function undelayReplay(): Promise<void> {
  await onReplicaServer(async (sql) => {
    await sql`ALTER SYSTEM RESET recovery_min_apply_delay`;
    await sql`SELECT pg_reload_conf()`;
  });
}

/** Waits until the replica has replayed everything the primary (`primary`: any pool on it) has written so far. */
export async function untilReplayed(primary: postgres.Sql): Promise<void> {
  const lsn = await primaryWalPosition(primary as unknown as Sql);
  await onReplicaServer((sql) =>
    until(`the replica replays ${lsn}`, async () => (await sql<{ ok: boolean }[]>`SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS ok`)[0]!.ok),
  );
}

const run = promisify(exec);
export const stopReplica = () => run(process.env.TEST_REPLICA_STOP!);
export const startReplica = () => run(process.env.TEST_REPLICA_START!);
