// The embedded TimescaleDB: PGlite (WASM PostgreSQL 17 + TimescaleDB) served on a loopback port, so
// the same `postgres` driver code talks to it and to a real server. It runs in a worker thread
// (embedded-worker.ts) so its queries never block this process's event loop. Limits are in
// shared/embedded-timescaledb.md: one connection at a time, LOAD 'timescaledb' before reuse,
// no protocol message over ~64 KB, no COPY, no background workers.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export interface EmbeddedDatabase {
  readonly url: string;
  stop(): Promise<void>;
}

/** The data directory is held by another live process. */
export class EmbeddedDatabaseBusy extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`the embedded database ${dataDir} is in use by process ${pid}; stop it, or run this command through it (see README, "Make targets")`);
    this.name = 'EmbeddedDatabaseBusy';
  }
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
// The lock file is created atomically ('wx'); one left by a process that is gone is taken over.
function acquireLock(dataDir: string): () => void {
  const lockFile = `${dataDir}.lock`;
  const release = () => fs.rmSync(lockFile, { force: true });
  try {
    fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    return release;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const holder = Number(fs.readFileSync(lockFile, 'utf8'));
  if (holder && holder !== process.pid && pidAlive(holder)) throw new EmbeddedDatabaseBusy(dataDir, holder);
  fs.writeFileSync(lockFile, String(process.pid));
  return release;
}

/** Opens (or creates) the database under dataDir; undefined dataDir = in memory (tests). */
export async function startEmbedded(dataDir: string | undefined): Promise<EmbeddedDatabase> {
  let release = () => {};
  if (dataDir) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    release = acquireLock(dataDir);
  }
  const worker = new Worker(new URL('./embedded-worker.mjs', import.meta.url), { workerData: { dataDir } });
  try {
    const conn = await new Promise<string>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the embedded database stopped while starting (exit ${code})`)));
      worker.on('message', (m: { type: string; conn?: string; message?: string }) => {
        if (m.type === 'ready') resolve(m.conn!);
        if (m.type === 'failed') reject(new Error(`the embedded database did not start: ${m.message}`));
      });
    });
    worker.removeAllListeners('exit');
    worker.removeAllListeners('error');
    worker.on('error', () => {}); // a dead worker shows up as refused connections (503s), not a crash
    let exited = false;
    worker.once('exit', () => (exited = true));
    return {
      url: `postgres://postgres@${conn}/postgres`,
      async stop() {
        if (!exited) {
          await new Promise<void>((resolve) => {
            // a clean close normally takes well under a second; never wait forever on a stuck worker
            const timer = setTimeout(() => void worker.terminate(), 10_000);
            worker.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            worker.on('message', (m: { type: string }) => m.type === 'stopped' && void worker.terminate());
            worker.postMessage('stop');
          });
        }
        release();
      },
    };
  } catch (err) {
    await worker.terminate();
    release();
    throw err;
  }
}
