// The connection pool every part of afrates talks to the database through (postgres.js), the
// settings each of its connections gets whatever the server's defaults, and the watch that
// replaces its connections when the server goes silent and follows the server that accepts
// writes. Which database the pool points at is lib/db/connect.ts's choice.
import postgres from 'postgres';
import { postgresHosts } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { within } from '../within.js';

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

/** The options every connection of a pool gets (one host each: the watch below picks the host). */
function connectionOptions(max: number, statementTimeoutMs: number, writable: boolean): postgres.Options<{}> {
  return {
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
    // a server that accepts no connection (every packet dropped) fails the query in this long, not postgres.js's 30 s
    connect_timeout: CONNECT_TIMEOUT_S,
    // of several hosts, a connection that lands on a standby is closed at once, its query failing
    ...(writable ? { target_session_attrs: 'read-write' as const } : {}),
    // Reconnecting after a refused or lost connection: 10 ms, doubling, at most 100 ms (seconds
    // here), so queries fail fast while the server is away and pass within a second of its return;
    // a down server sees at most ten attempts a second per connection (docs/decisions.md, "Reconnecting after an outage").
    backoff: (retries: number) => Math.min(2 ** retries / 100, 0.1),
  };
}

/** How long a new connection may take before its query fails (seconds). */
const CONNECT_TIMEOUT_S = 10;
/** How often a watched pool's server is asked whether it answers (and accepts writes). */
export const WATCH_EVERY_MS = 5_000;
/** A server that has not answered the watch's query in this long is silent: its connections are replaced. */
export const WATCH_TIMEOUT_MS = 10_000;

export interface PoolOptions {
  /**
   * Watch the server from a connection of its own (servers only: the embedded database admits one
   * connection): one silent for WATCH_TIMEOUT_MS has every connection of the pool replaced, and of
   * a URL with several hosts the pool follows the one that accepts writes.
   */
  watch?: boolean;
  /** The index of the host (of several) to start on: the one found writable (writableHost). */
  startAt?: number;
}

/** A LISTEN made through a pool: made again on the pool that replaces it. */
interface Listening {
  readonly channel: string;
  readonly fn: (payload: string) => void;
  readonly onlisten?: () => void;
  /** unlisten on the pool it was made on; null until that LISTEN has been made */
  unlisten: (() => Promise<void>) | null;
}

interface Handle {
  /** the postgres.js pool queries go to now (one host) */
  current: Sql;
  readonly listening: Set<Listening>;
  /** index into hosts of the host it is on */
  at: number;
  readonly hosts: readonly string[];
  /** reason: logged (none: the caller tells it its own way) */
  replace(reason: string | null, to?: number): void;
  ended: boolean;
}

const handles = new WeakMap<object, Handle>();
/** Every pool of this process not yet ended: all are replaced after postgres.js's closed-socket fault (below). */
const live = new Set<Handle>();

/**
 * postgres.js (3.4.9) writes a query to a connection whose socket has closed, from a timer, and the
 * TypeError thrown there ends the process (porsager/postgres#1154, #1208: the rollback of a
 * transaction whose server went away, as in every failover). That one fault is caught: the write
 * was for a connection already lost, whose queries have failed, but the connection object keeps
 * the unsent bytes and never flushes again, so every pool's connections are replaced. Any other
 * uncaught exception ends the process as before (thrown on from here).
 */
function isClosedSocketWrite(err: unknown): boolean {
  const stack = (err as { stack?: unknown } | null)?.stack;
  return err instanceof TypeError && typeof stack === 'string' && /reading 'write'/.test(err.message) && /at Immediate\.nextWrite \([^)]*postgres[\\/]src[\\/]connection\.js/.test(stack);
}

let closedSocketGuarded = false;

function guardClosedSocketWrite(): void {
  if (closedSocketGuarded) return;
  closedSocketGuarded = true;
  process.on('uncaughtException', (err) => {
    if (!isClosedSocketWrite(err)) throw err;
    (typeFetchLog ??= createLogger('warn')).warn(
      { reason: err.message },
      'database: postgres.js wrote to a closed connection (a transaction cut by the server going away); every connection replaced, the process goes on',
    );
    for (const handle of live) handle.replace(null);
  });
}

/**
 * A pool (postgres.js) on `url`, whose connections can be replaced without the callers noticing
 * more than the failure of what was running on them: the Sql handed out stays the same object.
 * log: where the array-type failure above, a replacement and a change of host are told (a warning
 * logger if none). statementTimeoutMs: the server cancels a statement running longer; 0: never,
 * whatever the server's or database's default (migrations rebuild aggregates for minutes: a
 * managed database's statement_timeout would cancel them). A URL with several hosts
 * (postgres://u@h1:5433,h2:5433/db) is served by the one that accepts writes (docs/operations.md,
 * "The database": a failover, a server that goes silent).
 */
export function createPool(url: string, max: number, statementTimeoutMs = 0, log?: Pick<Logger, 'warn'>, opts: PoolOptions = {}): Sql {
  guardArrayTypeFetch(log);
  guardClosedSocketWrite();
  const say = log ?? createLogger('warn');
  const hosts = postgresHosts(url);
  const writable = hosts.length > 1;
  const open = (at: number) => postgres(hosts[at]!, connectionOptions(max, statementTimeoutMs, writable)) as Sql;
  const handle: Handle = {
    current: open(opts.startAt ?? 0),
    at: opts.startAt ?? 0,
    hosts,
    listening: new Set(),
    ended: false,
    replace(reason, to = handle.at) {
      if (handle.ended) return;
      const old = handle.current;
      const moved = to !== handle.at;
      handle.at = to;
      handle.current = open(to);
      for (const l of handle.listening) relisten(handle, l, handle.current);
      if (reason !== null) say.warn({ where: placeOf(hosts[to]!), reason }, moved ? 'database: following the server that accepts writes; queries on the old one fail' : 'database: connections replaced; queries running on them fail');
      // silent or gone: what runs on the old connections will never be answered
      void old.end({ timeout: 0 }).catch(() => {});
    },
  };
  const sql = new Proxy(function pool() {} as unknown as Sql, {
    apply: (_target, _self, args: unknown[]) => Reflect.apply(handle.current as never, undefined, args),
    get: (_target, prop) => {
      if (prop === 'end') return (o?: { timeout?: number }) => endPool(handle, o);
      if (prop === 'listen') return (channel: string, fn: (payload: string) => void, onlisten?: () => void) => listen(handle, channel, fn, onlisten);
      return Reflect.get(handle.current, prop);
    },
    has: (_target, prop) => Reflect.has(handle.current, prop),
  });
  handles.set(sql, handle);
  live.add(handle);
  if (opts.watch) watch(handle, say, WATCH_EVERY_MS, WATCH_TIMEOUT_MS, writable);
  return sql;
}

/** sql.listen, kept across replacements of the pool (postgres.js's own LISTEN connection would end with its pool). */
async function listen(handle: Handle, channel: string, fn: (payload: string) => void, onlisten?: () => void) {
  const l: Listening = { channel, fn, onlisten, unlisten: null };
  const made = await handle.current.listen(channel, fn, onlisten);
  l.unlisten = made.unlisten;
  handle.listening.add(l);
  return {
    state: made.state,
    unlisten: async () => {
      handle.listening.delete(l);
      await l.unlisten?.();
    },
  };
}

/** The LISTEN made again on the pool `on`; tried every second until it is made, or `on` is replaced in its turn. */
function relisten(handle: Handle, l: Listening, on: Sql): void {
  l.unlisten = null;
  on.listen(l.channel, l.fn, l.onlisten).then(
    (made) => {
      if (handle.current === on && handle.listening.has(l)) l.unlisten = made.unlisten;
      else void made.unlisten().catch(() => {});
    },
    () => {
      if (handle.current === on && handle.listening.has(l) && !handle.ended) setTimeout(() => relisten(handle, l, on), 1_000).unref();
    },
  );
}

const watchEnds = new WeakMap<Handle, () => Promise<void>>();

async function endPool(handle: Handle, o?: { timeout?: number }): Promise<void> {
  handle.ended = true;
  live.delete(handle);
  await watchEnds.get(handle)?.();
  await handle.current.end(o);
}

/**
 * Every connection of `sql` (a pool from createPool) closed and made anew on its next query:
 * for a server that stopped answering without closing them (the read router's replicas, which
 * logs it its own way).
 */
export function replaceConnections(sql: Sql): void {
  handles.get(sql)?.replace(null);
}

/** The URL of the one host a pool from createPool talks to now. */
export function currentUrl(sql: Sql): string {
  const handle = handles.get(sql);
  return handle ? handle.hosts[handle.at]! : '';
}

/** host:port/database of a postgres URL of one host, for logs (never the password). */
export function placeOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}

type Verdict = 'writable' | 'read-only' | 'silent' | 'unreachable';

/** How a host answers now: a query on a connection of its own, within timeoutMs. */
async function ask(url: string, timeoutMs: number, conn?: Sql): Promise<Verdict> {
  // no type fetch: its failure would be unhandled (above), and this query needs none
  const own = conn ?? (postgres(url, { max: 1, fetch_types: false, connect_timeout: Math.ceil(timeoutMs / 1000), onnotice: () => {} }) as Sql);
  try {
    const [row] = await within(timeoutMs, own<{ writable: boolean }[]>`SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable`);
    return row!.writable ? 'writable' : 'read-only';
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return code === 'ETIMEDOUT' || code === 'CONNECT_TIMEOUT' ? 'silent' : 'unreachable';
  } finally {
    if (!conn) void own.end({ timeout: 0 }).catch(() => {});
  }
}

/**
 * The watch of one pool: every everyMs, its host is asked on a connection of its own. Silent for
 * timeoutMs: the pool's connections are replaced (what ran on them fails; postgres.js alone would
 * wait for TCP to give up, ~15 minutes). Of several hosts, when its host is not the writable one
 * (gone, silent, or a standby now), the first host found writable takes over.
 */
function watch(handle: Handle, say: Pick<Logger, 'warn'>, everyMs: number, timeoutMs: number, writable: boolean): void {
  const openProbe = () => postgres(handle.hosts[handle.at]!, { max: 1, fetch_types: false, connect_timeout: Math.ceil(timeoutMs / 1000), idle_timeout: 0, onnotice: () => {} }) as Sql;
  let probe = openProbe();
  let probeAt = handle.at;
  let timer: NodeJS.Timeout | undefined;
  /** "no host accepts writes" has been logged (once until one does) */
  let noneWritable = false;
  /** the last round found the server silent */
  let lastSilent = false;
  const once = async () => {
    if (probeAt !== handle.at) {
      void probe.end({ timeout: 0 }).catch(() => {});
      probe = openProbe();
      probeAt = handle.at;
    }
    const verdict = await ask(handle.hosts[handle.at]!, timeoutMs, probe);
    if (handle.ended) return;
    if (verdict === 'writable') noneWritable = false;
    const silent = lastSilent;
    lastSilent = verdict === 'silent';
    if (verdict === 'silent') {
      void probe.end({ timeout: 0 }).catch(() => {});
      probe = openProbe();
    }
    if (verdict === 'writable' || (!writable && verdict !== 'silent')) return;
    if (writable) {
      const found = await firstWritable(handle.hosts, timeoutMs);
      if (handle.ended) return;
      if (found !== null && (found !== handle.at || verdict === 'silent')) return handle.replace(verdict === 'silent' ? `${placeOf(handle.hosts[handle.at]!)} did not answer within ${timeoutMs} ms` : `${placeOf(handle.hosts[handle.at]!)} is ${verdict}`, found);
    }
    // one line for a silence, however many rounds it lasts (each replaces the connections again)
    if (verdict === 'silent') handle.replace(silent ? null : `it did not answer within ${timeoutMs} ms`);
    else if (!noneWritable) {
      noneWritable = true;
      say.warn({ where: placeOf(handle.hosts[handle.at]!), state: verdict }, 'database: no host accepts writes; queries fail until one does');
    }
  };
  const next = () => {
    if (handle.ended) return;
    timer = setTimeout(() => void once().catch(() => {}).finally(next), everyMs);
    timer.unref();
  };
  next();
  // ending the probe fails a round under way at once; its asking of other hosts ends by itself
  watchEnds.set(handle, async () => {
    clearTimeout(timer);
    await probe.end({ timeout: 0 }).catch(() => {});
  });
}

/**
 * Of a URL with several hosts, the index of one that accepts writes now (0 for a single host, as
 * it is); throws naming each host's state when none does (a failover under way: the caller retries).
 */
export async function writableHost(url: string, timeoutMs = WATCH_TIMEOUT_MS): Promise<number> {
  const hosts = postgresHosts(url);
  if (hosts.length === 1) return 0;
  const found = await firstWritable(hosts, timeoutMs);
  if (found !== null) return found;
  const states = await Promise.all(hosts.map(async (host) => `${placeOf(host)} ${await ask(host, timeoutMs)}`));
  throw Object.assign(new Error(`no host of the database URL accepts writes: ${states.join(', ')}`), { code: '08001' });
}

/** The index of the first host to answer that it accepts writes (all asked at once), or null. */
async function firstWritable(hosts: readonly string[], timeoutMs: number): Promise<number | null> {
  return Promise.any(
    hosts.map(async (url, i) => {
      if ((await ask(url, timeoutMs)) !== 'writable') throw new Error('not writable');
      return i;
    }),
  ).catch(() => null);
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
  let lost = false;
  try {
    await conn`SET statement_timeout = 0`;
    return await work(conn);
  } catch (err) {
    lost = isUnreachable(err);
    throw err;
  } finally {
    // a reserved connection that was lost is never written to again: postgres.js (3.4.9) writes to
    // its closed socket and the process ends (TypeError in nextWrite, porsager/postgres#1208)
    if (!lost) await conn`RESET statement_timeout`.catch(() => {});
    conn.release();
  }
}
