// The database hosts: a TimescaleDB primary and its streaming replica (pg1, pg2), made with the
// programs in FAULTS_PG_BIN as the postgres user. Commits wait for the replica (synchronous
// replication) while one is attached, so a promotion loses no committed write; FAULTS_SYNC=0 runs
// them asynchronous (the default of a plain streaming replica).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { ADDRESS, PG_BIN, WORK, inHost, sleep, until } from './hosts.js';

const run = promisify(execFile);
export const SYNC = (process.env.FAULTS_SYNC ?? '1') !== '0';
export type DbHost = 'pg1' | 'pg2';
export const dbUrl = (h: DbHost): string => `postgres://postgres@${ADDRESS[h]}:5432/postgres`;
const dataOf = (h: DbHost): string => path.join(WORK, h, 'data');
const pg = (h: DbHost, program: string, args: string[], timeoutMs = 180_000) => inHost(h, path.join(PG_BIN, program), args, { asPostgres: true, timeoutMs });

async function owned(dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  await run('chown', ['-R', 'postgres:', dir]);
}

const CONF = `
shared_preload_libraries = 'timescaledb'
timescaledb.telemetry_level = off
wal_level = replica
max_wal_senders = 10
wal_keep_size = '1GB'
hot_standby = on
hot_standby_feedback = on
max_connections = 200
fsync = off
wal_sender_timeout = '10s'
wal_receiver_timeout = '10s'
log_min_messages = warning
`;
const HBA = `local all all trust
host all all 10.77.0.0/16 trust
host replication all 10.77.0.0/16 trust
`;

export async function startServer(h: DbHost): Promise<void> {
  const sock = path.join(WORK, h, 'sock');
  await owned(sock);
  await pg(h, 'pg_ctl', ['-D', dataOf(h), '-l', path.join(WORK, h, 'server.log'), '-o', `-c listen_addresses=${ADDRESS[h]} -c port=5432 -c unix_socket_directories=${sock}`, '-w', '-t', '120', 'start']);
}

/** A new primary on `h`. */
export async function initPrimary(h: DbHost): Promise<void> {
  await owned(path.join(WORK, h));
  await pg(h, 'initdb', ['-D', dataOf(h), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  fs.appendFileSync(path.join(dataOf(h), 'postgresql.conf'), CONF);
  fs.writeFileSync(path.join(dataOf(h), 'pg_hba.conf'), HBA);
  await startServer(h);
}

/** `h` made anew as a streaming replica of `primary` (its old data thrown away), started. */
export async function initReplica(h: DbHost, primary: DbHost): Promise<void> {
  fs.rmSync(dataOf(h), { recursive: true, force: true });
  await owned(path.join(WORK, h));
  await pg(h, 'pg_basebackup', ['-h', ADDRESS[primary]!, '-U', 'postgres', '-D', dataOf(h), '-R', '-X', 'stream', '-c', 'fast']);
  fs.appendFileSync(path.join(dataOf(h), 'postgresql.auto.conf'), `primary_conninfo = 'host=${ADDRESS[primary]} port=5432 user=postgres application_name=${h}'\n`);
  await startServer(h);
  await until(`${h} streaming from ${primary}`, 120_000, async () => {
    const sql = postgres(dbUrl(primary), { max: 1, onnotice: () => {}, connect_timeout: 3 });
    try {
      const rows = await sql`SELECT 1 FROM pg_stat_replication WHERE application_name = ${h} AND state = 'streaming'`;
      return rows.length ? true : undefined;
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
  await setSync(primary, SYNC);
}

/** Commits on `primary` wait for a replica (or not). */
export async function setSync(primary: DbHost, on: boolean): Promise<void> {
  const sql = postgres(dbUrl(primary), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    if (on) await sql.unsafe(`ALTER SYSTEM SET synchronous_standby_names = '*'`);
    else await sql.unsafe(`ALTER SYSTEM RESET synchronous_standby_names`);
    await sql`SELECT pg_reload_conf()`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** The host dies: every process in its namespace killed with SIGKILL. */
export async function killHost(h: DbHost): Promise<void> {
  const pids = (await run('ip', ['netns', 'pids', `${process.env.FAULTS_PREFIX ?? 'afx'}-${h}`])).stdout.split(/\s+/).filter(Boolean);
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await sleep(500);
}

/** The replica promoted; it takes commits alone until a new replica is attached. */
export async function promote(h: DbHost): Promise<void> {
  await pg(h, 'pg_ctl', ['-D', dataOf(h), '-w', '-t', '60', 'promote']);
  // the promoted server inherited the old primary's synchronous_standby_names: with no replica it
  // would hold every commit
  await setSync(h, false);
}
