// Owns the choice of database: DATABASE_URL when set, otherwise the embedded TimescaleDB under
// var/db. Nothing else in the code base needs to know which of the two it talks to; what differs
// shows only in what the database can do (below: COPY, more than one process, scheduled jobs), the
// trade notices (notices.ts), the statement-size rule every writer keeps (batches.ts) and the pool's
// size (the embedded one admits a single connection).
import postgres from 'postgres';
import { postgresHosts, type Config } from '../config.js';
import type { Logger } from '../log.js';
import { within } from '../within.js';
import { startEmbedded, type EmbeddedDatabase } from './embedded/index.js';
import { migrate, type MigrateOptions } from './migrate.js';
import { createPool, currentUrl, writableHost, type Sql } from './pool.js';

export { createPool, isUnreachable, replaceConnections, withoutStatementTimeout, type Sql, type Tx } from './pool.js';

export interface Database {
  readonly sql: Sql;
  readonly kind: 'embedded' | 'server';
  readonly url: string;
  /** The embedded database's handle (stats, and the crash hooks tests use); null on a server. */
  readonly embedded: EmbeddedDatabase | null;
  /** Whether it takes COPY (a server; the embedded database's socket does not). */
  readonly takesCopy: boolean;
  /** Whether this process is the only one that can use it (the embedded database admits one connection). */
  readonly sole: boolean;
  /** Whether it runs compression and retention itself (a server's job scheduler; the embedded database has none). */
  readonly schedulesJobs: boolean;
  /**
   * Whether the database is there at all, apart from the pool, whose connections may all be busy
   * with long work (health tells a busy database from a failed one by it): the embedded database's
   * worker still runs (its one connection is the pool's), or a server answers `SELECT 1` within
   * timeoutMs on a connection of its own.
   */
  answers(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * Apply migrations and SQL objects before handing out the pool (default true: as a service
   * starting does, never consenting to restatements, leaving SQL newer than its own alone).
   */
  migrate?: boolean | MigrateOptions;
  /** Embedded only: keep data in memory instead of config.dataDir (tests). */
  inMemory?: boolean;
  /** Embedded in memory only: start from this dump (lib/db/embedded/index.ts `from`). */
  from?: string;
  /**
   * Embedded only: the database stopped on its own (after one log line saying why). The service
   * exits on it; without it the pool just fails every query from then on.
   */
  onFatal?: (reason: Error) => void;
}

export async function openDatabase(config: Config, log: Logger, opts: OpenOptions = {}): Promise<Database> {
  let url = config.databaseUrl;
  let embedded: EmbeddedDatabase | null = null;
  const stopEmbedded = () => embedded?.stop();
  const kind = url ? 'server' : 'embedded';
  if (!url) {
    const dataDir = opts.inMemory ? 'memory' : config.dataDir;
    embedded = await startEmbedded(opts.inMemory ? undefined : config.dataDir, {
      from: opts.from,
      onFatal: (reason) => {
        log.fatal({ err: reason, dataDir }, `the embedded database stopped: ${reason.message}`);
        opts.onFatal?.(reason);
      },
    });
    url = embedded.url;
    log.info({ dataDir }, 'embedded TimescaleDB started');
  }
  // of several hosts, the one that accepts writes: migrations run there, and the pool starts there
  let at = 0;
  try {
    if (embedded === null) at = await writableHost(url);
    if (opts.migrate !== false) await migrate(postgresHosts(url)[at]!, log, undefined, opts.migrate === true || opts.migrate === undefined ? { older: 'skip' } : opts.migrate);
  } catch (err) {
    await stopEmbedded();
    throw err;
  }
  const sql = createPool(url, kind === 'embedded' ? 1 : 10, config.statementTimeoutMs, log, { watch: kind === 'server', startAt: at });
  return {
    sql,
    kind,
    url,
    embedded,
    takesCopy: kind === 'server',
    sole: kind === 'embedded',
    schedulesJobs: kind === 'server',
    answers: (timeoutMs) => (embedded ? Promise.resolve(embedded.alive) : serverAnswers(currentUrl(sql), timeoutMs)),
    async close() {
      await sql.end({ timeout: 5 });
      await stopEmbedded();
    },
  };
}

/** Whether the server at url answers `SELECT 1` within timeoutMs on a connection of its own. */
async function serverAnswers(url: string, timeoutMs: number): Promise<boolean> {
  // no type fetch: its failure would be unhandled (lib/db/pool.ts), and SELECT 1 needs none
  const probe = postgres(url, { max: 1, fetch_types: false, connect_timeout: Math.max(1, Math.ceil(timeoutMs / 1000)), onnotice: () => {} });
  try {
    await within(timeoutMs, probe`SELECT 1`);
    return true;
  } catch {
    return false;
  } finally {
    void probe.end({ timeout: 0 }).catch(() => {});
  }
}
