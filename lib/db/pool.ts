// The connection pool every part of afrates talks to the database through (postgres.js), and the
// settings each of its connections gets whatever the server's defaults. Which database the pool
// points at is lib/db/connect.ts's choice.
import postgres from 'postgres';
import { createLogger, type Logger } from '../log.js';

export type Sql = postgres.Sql;
/** A connection inside a transaction (sql.begin): statements that must commit together. */
export type Tx = postgres.TransactionSql;

/**
 * postgres.js reads the server's array types on every new connection and leaves that query's
 * failure unhandled, which would end the process: that one failure is logged and the connection
 * goes on. Such a connection sends and reads no SQL arrays until it closes, so no array crosses
 * between our SQL and the client: lists go as JSON (sql.json, read with jsonb_array_elements_text)
 * and come back as JSON (json_agg). docs/decisions.md, "No SQL arrays between the service and its SQL".
 */
function isArrayTypeFetch(reason: unknown): boolean {
  const query = (reason as { query?: unknown } | null)?.query;
  return typeof query === 'string' && query.includes('pg_catalog.pg_type') && query.includes("a.typcategory = 'A'");
}

let typeFetchLog: Pick<Logger, 'warn'> | undefined;
let typeFetchGuarded = false;

function guardArrayTypeFetch(log: Pick<Logger, 'warn'> | undefined): void {
  if (log) typeFetchLog = log;
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
 * log: where the array-type failure above is told (the service's log; a warning logger if none).
 * statementTimeoutMs: the server cancels a statement running longer; 0: never, whatever the
 * server's or database's default (migrations rebuild aggregates for minutes: a managed database's
 * statement_timeout would cancel them).
 */
export function createPool(url: string, max: number, statementTimeoutMs = 0, log?: Pick<Logger, 'warn'>): Sql {
  guardArrayTypeFetch(log);
  return postgres(url, {
    max,
    onnotice: () => {},
    // numeric and bigint come back as exact strings; lib/format.ts turns them into JSON numbers.
    // jit off: our statements read a few thousand rows at most, and JIT compiles any plan whose
    // estimated cost passes jit_above_cost however few rows it reads (docs/decisions.md, "JIT is off").
    // DateStyle ISO: postgres.js reads timestamps with new Date(text), which reads only ISO right,
    // whatever the server's or database's default. Values as strings: postgres.js leaves a falsy
    // one (statement_timeout 0) out of the startup message.
    connection: { application_name: 'afrates', DateStyle: 'ISO, YMD', jit: 'off', statement_timeout: String(statementTimeoutMs) } as Record<string, string | number> as never,
    idle_timeout: max === 1 ? 0 : 30,
    // Reconnecting after a refused or lost connection: 10 ms, doubling, at most 100 ms (seconds
    // here), so queries fail fast while the server is away and pass within a second of its return;
    // a down server sees at most ten attempts a second per connection (docs/decisions.md, "Reconnecting after an outage").
    backoff: (retries: number) => Math.min(2 ** retries / 100, 0.1),
  });
}

// SQLSTATE classes that mean "the server is not there" (connection exceptions, insufficient
// resources, shutting down or starting up) rather than "the query is wrong", and the client's own
// codes for a connection refused, cut or never made.
const UNREACHABLE_SQLSTATE = /^(08|53|57P)/;
const UNREACHABLE_CLIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT', 'CONNECTION_DESTROYED']);

/** Whether a query failed because its server could not be reached or could not serve it now. */
export function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (UNREACHABLE_SQLSTATE.test(code) || UNREACHABLE_CLIENT_CODES.has(code));
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
