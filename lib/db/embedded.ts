// The embedded TimescaleDB: PGlite (WASM PostgreSQL 17 + TimescaleDB) served on a loopback port, so
// the same `postgres` driver code talks to it and to a real server. Limits are in
// shared/embedded-timescaledb.md: one connection at a time, LOAD 'timescaledb' before reuse,
// no protocol message over ~64 KB, no COPY, no background workers.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { timescaledb } from '@electric-sql/pglite/timescaledb';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedDatabase {
  readonly url: string;
  stop(): Promise<void>;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// PGlite does not lock its data directory; two processes opening it would corrupt it.
function acquireLock(dataDir: string): () => void {
  const lockFile = `${dataDir}.lock`;
  try {
    const holder = Number(fs.readFileSync(lockFile, 'utf8'));
    if (holder && holder !== process.pid && pidAlive(holder)) {
      throw new Error(
        `the embedded database ${dataDir} is in use by process ${holder}; ` +
          'stop it, or run this command through it (see README, "Keys")',
      );
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.writeFileSync(lockFile, String(process.pid));
  return () => fs.rmSync(lockFile, { force: true });
}

/** Opens (or creates) the database under dataDir; undefined dataDir = in memory (tests). */
export async function startEmbedded(dataDir: string | undefined): Promise<EmbeddedDatabase> {
  let release = () => {};
  if (dataDir) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    release = acquireLock(dataDir);
  }
  try {
    const db = await PGlite.create({ dataDir, extensions: { timescaledb } });
    // A reopened directory misbehaves (hypertable inserts, cagg functions) until the library is loaded.
    await db.exec(`LOAD 'timescaledb'`);
    await db.exec(`CREATE EXTENSION IF NOT EXISTS timescaledb`);
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, connectionQueueTimeout: 120_000 });
    await server.start();
    const url = `postgres://postgres@${server.getServerConn()}/postgres`;
    return {
      url,
      async stop() {
        await server.stop();
        await db.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
