// A PostgreSQL primary and streaming standby of a test's own, in a temporary directory, made with
// the programs in TEST_PG_BIN (initdb, pg_ctl, pg_basebackup): for tests that promote the standby
// and stop the primary, which TEST_DATABASE_URL's servers, shared by every test file, must never be.
// As the postgres user when the tests run as root (initdb refuses root).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './wait.js';

const run = promisify(execFile);
export const pgBin = process.env.TEST_PG_BIN;

export type Member = 'primary' | 'standby';

export interface PgPair {
  readonly ports: Readonly<Record<Member, number>>;
  /** postgres://postgres@127.0.0.1:port/postgres of one of them */
  url(member: Member): string;
  /** Stopped at once, as by a crash (no shutdown checkpoint, connections cut). */
  crash(member: Member): Promise<void>;
  /** The standby becomes a primary (waits until it accepts writes). */
  promote(): Promise<void>;
  close(): Promise<void>;
}

async function pg(command: string, args: string[]): Promise<string> {
  const file = path.join(pgBin!, command);
  const asRoot = process.getuid?.() === 0;
  const { stdout } = await run(asRoot ? 'runuser' : file, asRoot ? ['-u', 'postgres', '--', file, ...args] : args, { timeout: 120_000 });
  return stdout;
}

/** conf: lines appended to the primary's postgresql.conf (the standby copies them). */
export async function startPgPair(conf: string[] = []): Promise<PgPair> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-pgpair-'));
  if (process.getuid?.() === 0) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout);
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout);
    fs.chownSync(dir, uid, gid);
  }
  const ports: Record<Member, number> = { primary: await freePort(), standby: await freePort() };
  const data = (m: Member) => path.join(dir, m);
  const start = (m: Member) => pg('pg_ctl', ['-D', data(m), '-l', path.join(dir, `${m}.log`), '-o', `-p ${ports[m]}`, '-w', 'start']);
  const stop = (m: Member) => pg('pg_ctl', ['-D', data(m), '-m', 'immediate', '-w', 'stop']);
  const pair: PgPair = {
    ports,
    url: (m) => `postgres://postgres@127.0.0.1:${ports[m]}/postgres`,
    crash: async (m) => void (await stop(m)),
    promote: async () => void (await pg('pg_ctl', ['-D', data('standby'), '-w', 'promote'])),
    async close() {
      for (const m of ['standby', 'primary'] as const) await stop(m).catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await pg('initdb', ['-D', data('primary'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
    fs.appendFileSync(path.join(data('primary'), 'postgresql.conf'), [`listen_addresses = '127.0.0.1'`, `unix_socket_directories = '${dir}'`, 'wal_level = replica', 'fsync = off', ...conf, ''].join('\n'));
    await start('primary');
    await pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(ports.primary), '-U', 'postgres', '-D', data('standby'), '-R', '-X', 'stream']);
    await start('standby');
  } catch (err) {
    const logs = ['primary', 'standby'].map((m) => path.join(dir, `${m}.log`)).filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f, 'utf8').slice(-2000));
    await pair.close();
    throw new Error(`${(err as Error).message}\n${logs.join('\n')}`);
  }
  return pair;
}
