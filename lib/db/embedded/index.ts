// The embedded TimescaleDB: PGlite (WASM PostgreSQL 17 + TimescaleDB) served on a loopback port by
// our own wire server (wire.mjs), so the same `postgres` driver code talks to it and to a
// real server. It runs in a worker thread (worker.mjs) so its queries never block this
// process's event loop. Limits (docs/embedded-database.md): one connection at a time, LOAD
// 'timescaledb' before reuse, protocol messages up to MAX_MESSAGE_BYTES, no background workers.
// If the worker or PGlite dies, onFatal says why, once: nothing fails silently.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** Above this a protocol message (or a COPY's data) is refused: PGlite's WASM memory grows by about
 *  four times each message's size and never shrinks (docs/embedded-database.md, "The "64 KB limit""). */
export const MAX_MESSAGE_BYTES = 16 * 2 ** 20;

/**
 * PostgreSQL's shared_buffers in the embedded database (PGlite's build has 128MB, all of it
 * resident from the start). The embedded database serves one connection at a time, and its files
 * are read through the OS page cache (or held in memory) anyway, so a larger pool buys little:
 * against 32MB, 16MB costs about a tenth on the 10,000-candle page over HTTP and a fifth on one
 * large bucket's certification, the rest within their runs' spread, and keeps 14-18 MB less
 * resident (bench/README.md, rss).
 */
export const SHARED_BUFFERS = '16MB';

export interface EmbeddedStats {
  /** PGlite's WASM memory (linear memory only grows) */
  readonly wasmHeapBytes: number | null;
  /** the worker thread's V8 heap in use */
  readonly workerHeapUsedBytes: number;
  readonly connections: number;
  readonly batches: number;
  readonly resets: number;
  readonly queueTimeouts: number;
  readonly oversize: number;
  readonly copies: number;
  readonly waiting: number;
  readonly attached: boolean;
}

export interface EmbeddedOptions {
  /**
   * The database stopped on its own (PGlite's WASM instance failed, or the worker thread ended):
   * called once, with the reason. Not called for stop().
   */
  readonly onFatal?: (reason: Error) => void;
  /** How long a second client waits for the connection (default 120 s). */
  readonly queueTimeoutMs?: number;
  /**
   * In memory only: start from a database dump() wrote (a tar file) instead of a new one. The
   * tests start every file's database from one migrated copy: a new database's initdb, and the
   * JIT compiling of the WASM it runs hot, cost about three times the CPU of unpacking a copy.
   */
  readonly from?: string;
}

export interface EmbeddedDatabase {
  readonly url: string;
  /** Whether its worker thread still runs (once it ends, through stop() or a failure, never again). */
  readonly alive: boolean;
  /** Memory and counters of the worker, for benchmarks and tests. */
  stats(): Promise<EmbeddedStats>;
  /** Writes the whole database to `file` as a tar that `from` starts from; with no query under way. */
  dump(file: string): Promise<void>;
  /** Tests: makes PGlite fail with a WASM abort, as too many errors in one call do, to prove it is reported. */
  crash(): void;
  /** Tests: ends the worker thread abruptly. */
  terminate(): Promise<void>;
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

/** The worker's report of PGlite's failure, as an Error. */
function revive(m: { name?: string; message?: string; stack?: string }): Error {
  const err = new Error(m.message ?? 'unknown failure');
  err.name = m.name ?? 'Error';
  if (m.stack) err.stack = m.stack;
  return err;
}

/** What the worker answers a request with (stats, dump), by its id. */
interface WorkerReply {
  readonly type: string;
  readonly id?: number;
  readonly stats?: EmbeddedStats;
  /** a dump's failure, or (with type fatal) PGlite's */
  readonly message?: string;
}

/** Opens (or creates) the database under dataDir; undefined dataDir = in memory (tests). */
export async function startEmbedded(dataDir: string | undefined, opts: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  if (dataDir && opts.from) throw new Error('the embedded database starts from a dump only in memory, not in a data directory');
  let release = () => {};
  if (dataDir) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    release = acquireLock(dataDir);
  }
  const worker = new Worker(new URL('./worker.mjs', import.meta.url), {
    workerData: { dataDir, from: opts.from, maxMessageBytes: MAX_MESSAGE_BYTES, queueTimeoutMs: opts.queueTimeoutMs, sharedBuffers: SHARED_BUFFERS },
  });
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
    worker.removeAllListeners('message');
    // From here on the worker ends only through stop(), or because something failed: the reason
    // (PGlite's report, or the worker's uncaught error) is kept until the exit and passed on once.
    let reason: Error | undefined;
    let stopping = false;
    let exited = false;
    const exit = new Promise<void>((resolve) =>
      worker.once('exit', (code) => {
        exited = true;
        release();
        for (const r of replies.values()) r.reject(new Error('the embedded database has stopped'));
        replies.clear();
        if (!stopping) opts.onFatal?.(reason ?? new Error(`the database worker thread ended (exit code ${code})`));
        resolve();
      }),
    );
    worker.on('error', (err) => (reason ??= err));
    // the worker's answers to stats and dump, by request id; failed all at once if the worker ends
    const replies = new Map<number, { resolve: (m: WorkerReply) => void; reject: (err: Error) => void }>();
    let nextId = 1;
    const ask = (message: { type: string; path?: string }): Promise<WorkerReply> => {
      if (exited) return Promise.reject(new Error('the embedded database has stopped'));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        replies.set(id, { resolve, reject });
        worker.postMessage({ ...message, id });
      });
    };
    worker.on('message', (m: WorkerReply & { name?: string; stack?: string }) => {
      if (m.type === 'fatal') reason ??= revive(m);
      if (m.type === 'stats' || m.type === 'dumped') {
        replies.get(m.id!)?.resolve(m);
        replies.delete(m.id!);
      }
      if (m.type === 'stopped') void worker.terminate();
    });
    return {
      url: `postgres://postgres@${conn}/postgres`,
      get alive() {
        return !exited;
      },
      async stats() {
        return (await ask({ type: 'stats' })).stats!;
      },
      async dump(file) {
        const { message } = await ask({ type: 'dump', path: file });
        if (message !== undefined) throw new Error(`the embedded database was not dumped: ${message}`);
      },
      crash() {
        worker.postMessage({ type: 'crash' });
      },
      async terminate() {
        await worker.terminate();
        await exit;
      },
      async stop() {
        if (exited) return;
        stopping = true;
        // a clean close normally takes well under a second; never wait forever on a stuck worker
        const timer = setTimeout(() => void worker.terminate(), 10_000);
        worker.postMessage('stop');
        await exit;
        clearTimeout(timer);
      },
    };
  } catch (err) {
    await worker.terminate();
    release();
    throw err;
  }
}
