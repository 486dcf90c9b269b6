// Owns the choice of database: DATABASE_URL when set, otherwise the embedded TimescaleDB under
// var/db. Nothing else in the code base knows which of the two it talks to; the only difference
// that leaks out is `maxConnections` (the embedded one admits a single connection).
import postgres from 'postgres';
import type { Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { startEmbedded, type EmbeddedDatabase } from './embedded/index.js';
import { migrate } from './migrate.js';

export type Sql = postgres.Sql;
/** A connection inside a transaction (sql.begin): statements that must commit together. */
export type Tx = postgres.TransactionSql;

export interface Database {
  readonly sql: Sql;
  readonly kind: 'embedded' | 'server';
  readonly url: string;
  /** The embedded database's handle (stats, and the crash hooks tests use); null on a server. */
  readonly embedded: EmbeddedDatabase | null;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Apply migrations and SQL objects before handing out the pool (default true). */
  migrate?: boolean;
  /** Embedded only: keep data in memory instead of config.dataDir (tests). */
  inMemory?: boolean;
  /**
   * Embedded only: the database stopped on its own (after one log line saying why). The service
   * exits on it; without it the pool just fails every query from then on.
   */
  onFatal?: (reason: Error) => void;
}

/**
 * postgres.js (3.4.9) reads the server's array types on every new connection and drops that
 * query's failure (src/connection.js, ReadyForQuery: `return fetchArrayTypes()`, a promise no one
 * handles): a connection opened while the server stalled past statement_timeout, or cut while it
 * read them, ended the whole process (an unhandled rejection; reproduced with a 1 ms timeout).
 * That one failure is logged; the connection goes on as postgres.js leaves it (its queries succeed
 * or fail on their own). Such a connection reads and sends no SQL arrays until it closes (a list
 * ['BTCNGN'] went as 'BTCNGN', "malformed array literal"; an array column came back as its text,
 * '{luno,valr}'), so no array crosses between our SQL and the client: lists go as JSON
 * (sql.json, read with jsonb_array_elements_text) and come back as JSON (json_agg); tested in
 * test/api/array-types.test.ts. Every other unhandled rejection still ends the process, as Node's
 * default does. test/lib/db/connect.test.ts runs it in a process of its own.
 */
function isArrayTypeFetch(reason: unknown): boolean {
  const query = (reason as { query?: unknown } | null)?.query;
  return typeof query === 'string' && query.includes('pg_catalog.pg_type') && query.includes("a.typcategory = 'A'");
}

let typeFetchLog: Pick<Logger, 'warn'> | undefined;
let typeFetchGuarded = false;

function guardArrayTypeFetch(): void {
  if (typeFetchGuarded) return;
  typeFetchGuarded = true;
  process.on('unhandledRejection', (reason) => {
    if (!isArrayTypeFetch(reason)) throw reason;
    const err = reason as Error & { code?: string };
    (typeFetchLog ??= createLogger('warn')).warn(
      { code: err.code, reason: err.message },
      'a new database connection could not read the array types (postgres.js); the process goes on',
    );
  });
}

/**
 * statementTimeoutMs: the server cancels a statement running longer; 0: never, whatever the
 * server's or database's default (migrations rebuild aggregates for minutes: a managed database's
 * statement_timeout would cancel them).
 */
export function createPool(url: string, max: number, statementTimeoutMs = 0): Sql {
  guardArrayTypeFetch();
  return postgres(url, {
    max,
    onnotice: () => {},
    // numeric and bigint come back as exact strings; lib/format.ts turns them into JSON numbers.
    // jit off: our statements read a few thousand rows at most, and a server's JIT compiles any
    // plan whose estimated cost passes jit_above_cost, however few rows it reads: a 42-candle page
    // took 1.2 s, all of it LLVM (cost estimates inflated by enable_nestloop = off pass it always).
    // DateStyle ISO: postgres.js reads timestamps with new Date(text), which reads only ISO right.
    // A server or database set to 'SQL, DMY' wrote 01/03/2026 for 1 March, read back as 3 January:
    // every date silently wrong. ISO is PostgreSQL's default, but the server's settings are not ours.
    // Values as strings: postgres.js leaves a falsy one (statement_timeout 0) out of the startup.
    connection: { application_name: 'afrates', DateStyle: 'ISO, YMD', jit: 'off', statement_timeout: String(statementTimeoutMs) } as Record<string, string | number> as never,
    idle_timeout: max === 1 ? 0 : 30,
    // Reconnecting after a refused or lost connection: 10 ms, doubling, at most 100 ms (seconds
    // here). postgres.js's own backoff grows to 10-20 s after a few refusals, and queries wait for
    // it: with the server down for a minute, requests hung 8-14 s before their 503, and the first
    // after its return 12.6 s. A failed attempt fails one query queued on the connection, the next
    // waits for the next attempt: with a 1 s cap, five requests at once took 1, 2, 3, 4 and 5 s.
    // Now they fail within half a second while it is away and pass within a second of its return
    // (test/lib/db/outage.test.ts); a down server sees at most ten attempts a second per connection.
    backoff: (retries: number) => Math.min(2 ** retries / 100, 0.1),
  });
}

/**
 * Runs work that may rightly take longer than the statement timeout (the pipeline's refreshes and
 * storage jobs) on a connection of its own with the timeout off. On the embedded database (one
 * connection) everything else waits for it meanwhile, as it would anyway.
 */
export async function withoutStatementTimeout<T>(sql: Sql, work: (conn: Sql) => Promise<T>): Promise<T> {
  const conn = await sql.reserve();
  try {
    await conn`SET statement_timeout = 0`;
    return await work(conn);
  } finally {
    await conn`RESET statement_timeout`.catch(() => {});
    conn.release();
  }
}

export async function openDatabase(config: Config, log: Logger, opts: OpenOptions = {}): Promise<Database> {
  let url = config.databaseUrl;
  let embedded: EmbeddedDatabase | null = null;
  const stopEmbedded = () => embedded?.stop();
  const kind = url ? 'server' : 'embedded';
  if (!url) {
    const dataDir = opts.inMemory ? 'memory' : config.dataDir;
    embedded = await startEmbedded(opts.inMemory ? undefined : config.dataDir, {
      onFatal: (reason) => {
        log.fatal({ err: reason, dataDir }, `the embedded database stopped: ${reason.message}`);
        opts.onFatal?.(reason);
      },
    });
    url = embedded.url;
    log.info({ dataDir }, 'embedded TimescaleDB started');
  }
  try {
    if (opts.migrate !== false) await migrate(url, log);
  } catch (err) {
    await stopEmbedded();
    throw err;
  }
  typeFetchLog = log;
  const sql = createPool(url, kind === 'embedded' ? 1 : 10, config.statementTimeoutMs);
  return {
    sql,
    kind,
    url,
    embedded,
    async close() {
      await sql.end({ timeout: 5 });
      await stopEmbedded();
    },
  };
}
