// The embedded database's TCP server: speaks the PostgreSQL wire protocol on a loopback port and
// feeds PGlite, so the ordinary `postgres` driver works against it. Replaces pglite-socket, whose
// handler passed every TCP chunk to PGlite as it arrived, unframed and without waiting for the
// previous one (docs/embedded-database.md has the measurements). What this server guarantees:
//
// - PGlite gets whole messages, one batch per call, strictly in order: everything up to and
//   including a Sync, Flush, simple Query or FunctionCall. PGlite aborts (WASM "Aborted()") when
//   about ten errors happen inside one call, and pglite-socket's chunks could hold dozens of
//   pipelined queries; a batch ending at Sync can raise at most one error.
// - No message but a call's first starts at a multiple of 8 KB (Flushes are inserted, see
//   assemble()): PGlite silently stops reading there. Statements of over 32,767 parameters, which
//   PGlite's parser cannot describe without dying, are refused with an error.
// - One client at a time (PGlite has one backend session). Later clients wait in a queue, up to
//   queueTimeoutMs, then get a FATAL error.
// - A client that leaves, cleanly or not, mid-query or mid-transaction, leaves nothing behind: its
//   last answer is discarded and the session is reset (Sync, ROLLBACK, DISCARD ALL, PGlite's own
//   session settings restored) before the next client gets it.
// - The startup is answered here (trust: no password; PGlite's startup path demands an MD5
//   password and ignores the startup parameters anyway). SSL and GSS encryption are declined.
// - COPY ... FROM STDIN works: PGlite reads COPY data synchronously from the same input as the
//   command and aborts if it is not all there, so the command is held back (the client is told to
//   go ahead with a CopyInResponse of our own) until CopyDone or CopyFail, then fed in one call.
// - Any exception from PGlite means its WASM instance is gone: onFatal is called once, every
//   client is disconnected, and nothing is fed to PGlite again.
//
// Plain JavaScript: it runs in the database's worker thread, which has no TypeScript loader.
import net from 'node:net';
import crypto from 'node:crypto';
import {
  CANCEL_REQUEST,
  assemble,
  FrameError,
  GSSENC_REQUEST,
  MessageReader,
  SSL_REQUEST,
  authenticationOk,
  backendKeyData,
  bindUnnamed,
  executeUnnamed,
  parseUnnamed,
  errorResponse,
  message,
  parameterStatus,
  query,
  readyForQuery,
  sslRefused,
  statementText,
  sync,
} from './frames.mjs';

/** Messages that end a batch: PGlite answers them, and the client waits for that answer. */
const BATCH_ENDS = new Set(['S', 'H', 'Q', 'F']);
/** Frontend messages a client may send once started; anything else is a protocol violation. */
const KNOWN_TYPES = new Set(['B', 'C', 'D', 'E', 'F', 'H', 'P', 'Q', 'S', 'X', 'd', 'c', 'f']);
/** Parameters a server reports at startup (GUC_REPORT); current values are read from PGlite. */
const REPORTED_PARAMETERS = [
  'server_version',
  'server_encoding',
  'client_encoding',
  'application_name',
  'default_transaction_read_only',
  'in_hot_standby',
  'is_superuser',
  'session_authorization',
  'DateStyle',
  'IntervalStyle',
  'TimeZone',
  'integer_datetimes',
  'standard_conforming_strings',
  'scram_iterations',
];
// A COPY ... FROM STDIN anywhere in the text (comments removed). A miss would hand PGlite a COPY
// without its data, which kills it: so this errs on the side of matching.
const COPY_FROM_STDIN = /(^|;)\s*copy\b[^;]*?\bfrom\s+stdin\b/i;
/**
 * PGlite's JavaScript protocol parser reads ParameterDescription's count as a signed 16-bit number:
 * describing a statement of 32,768 or more parameters throws inside the backend and kills PGlite
 * (measured: 5,461 rows x 6 columns in one INSERT pass, 5,462 do not). PostgreSQL allows 65,535.
 */
const MAX_PARAMETERS = 32_767;
/** Batches a client may have waiting before we stop reading from it. */
const MAX_QUEUED_BATCHES = 256;
// Our CopyInResponse: text format, no per-column formats (drivers do not read them).
const COPY_IN_RESPONSE = message('G', Buffer.from([0, 0, 0]));

/**
 * @typedef {import('@electric-sql/pglite').PGlite} PGlite
 * @typedef {{ db: PGlite, raw: import('./raw.mjs').RawProtocol, host?: string, port?: number, queueTimeoutMs?: number,
 *             maxMessageBytes?: number, onFatal: (err: Error) => void }} WireServerOptions
 */

export class WireServer {
  /** @type {PGlite} */ #db;
  /** @type {import('./raw.mjs').RawProtocol} */ #raw;
  /** @type {net.Server | null} */ #server = null;
  /** @type {Connection | null} */ #attached = null;
  /** @type {Connection[]} */ #waiting = [];
  /** @type {Set<Connection>} */ #connections = new Set();
  /** serialises every use of PGlite: batches, resets, parameter reads */
  #tail = Promise.resolve();
  #handingOver = false;
  /** @type {Error | null} */ #dead = null;
  #stopping = false;
  /** set once the last work before stop() has run: PGlite is off limits */
  #stopped = false;
  /** @type {Array<{ name: string, setting: string }>} */ #baseline = [];
  #opts;
  #nextId = 1;
  /** what the server has done, for the stats message and tests */
  counters = { connections: 0, batches: 0, resets: 0, queueTimeouts: 0, oversize: 0, copies: 0 };

  /** @param {WireServerOptions} opts */
  constructor(opts) {
    this.#db = opts.db;
    this.#raw = opts.raw;
    this.#opts = { host: '127.0.0.1', port: 0, queueTimeoutMs: 120_000, maxMessageBytes: 16 * 2 ** 20, ...opts };
  }

  /** Quietens the session, records the settings a reset must restore, and starts listening. */
  async start() {
    // PGlite starts its backend with client_min_messages = debug3: every Parse and Bind then sends
    // the client a DEBUG notice that nobody reads. The PostgreSQL default is notice.
    await this.#db.exec('SET client_min_messages = notice');
    // PGlite sets search_path for its session; DISCARD ALL would reset it to pg_catalog. Everything
    // set at session level now (PGlite's and ours) is put back after each client.
    this.#baseline = (await this.#db.query(`SELECT name, setting FROM pg_settings WHERE source = 'session'`)).rows;
    const server = net.createServer((socket) => this.#accept(socket));
    this.#server = server;
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#opts.port, this.#opts.host, () => resolve(undefined));
    });
    const address = /** @type {net.AddressInfo} */ (server.address());
    return { host: address.address, port: address.port };
  }

  /** Stops accepting, lets the batch under way finish, then ends every connection. */
  async stop() {
    this.#stopping = true;
    const closed = new Promise((resolve) => (this.#server ? this.#server.close(() => resolve(undefined)) : resolve(undefined)));
    // after everything queued so far, nothing more reaches PGlite (the worker closes it next)
    await this.#exclusive(async () => {
      this.#stopped = true;
    }).catch(() => {});
    for (const conn of this.#connections) conn.fail('57P01', 'the embedded database is shutting down');
    await closed;
  }

  /** @param {Error} err PGlite threw: its instance is unusable. */
  #die(err) {
    if (this.#dead) return;
    this.#dead = err;
    this.#server?.close();
    for (const conn of this.#connections) conn.socket.destroy();
    this.#opts.onFatal(err);
  }

  /**
   * Runs fn after everything queued before it. An exception from PGlite other than an SQL error is
   * fatal (#die); the returned promise rejects then, and so does anything queued after.
   * @template T @param {() => Promise<T>} fn @returns {Promise<T>}
   */
  #exclusive(fn) {
    const run = this.#tail.then(async () => {
      if (this.#dead) throw this.#dead;
      if (this.#stopped) throw new Error('the embedded database is shutting down');
      try {
        return await fn();
      } catch (err) {
        // an SQL error from one of our own queries is only that; anything else (a WASM
        // RuntimeError, "PGlite is closed") means PGlite is gone
        if (!isSqlError(err)) this.#die(/** @type {Error} */ (err));
        throw err;
      }
    });
    this.#tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** One batch of whole messages through PGlite, in one call; its answer's bytes, unparsed (raw.mjs). @param {Buffer[]} messages */
  #execute(messages) {
    const batch = assemble(messages);
    return this.#exclusive(() =>
      this.#db.runExclusive(async () => {
        this.counters.batches++;
        return this.#raw.exec(new Uint8Array(batch.buffer, batch.byteOffset, batch.length));
      }),
    );
  }

  /** @param {net.Socket} socket */
  #accept(socket) {
    if (this.#stopping || this.#dead) {
      socket.destroy();
      return;
    }
    const conn = new Connection(this, socket, this.#nextId++, this.#opts.maxMessageBytes);
    this.#connections.add(conn);
    this.counters.connections++;
  }

  /** A client finished its startup: it gets the session now, or waits its turn. @param {Connection} conn */
  admit(conn) {
    conn.waitTimer = setTimeout(() => {
      this.counters.queueTimeouts++;
      conn.fail('53300', `the embedded database admits one connection at a time; waited ${this.#opts.queueTimeoutMs} ms for the current one to close`);
    }, this.#opts.queueTimeoutMs);
    this.#waiting.push(conn);
    void this.#handOver();
  }

  /** A connection ended (any way). @param {Connection} conn */
  closed(conn) {
    this.#connections.delete(conn);
    clearTimeout(conn.waitTimer);
    this.#waiting = this.#waiting.filter((c) => c !== conn);
    if (this.#attached === conn) {
      this.#attached = null;
      void this.#handOver(true);
    }
  }

  /**
   * Gives the session to the next waiting client, after resetting it if the last one used it.
   * One hand-over at a time; a loop, so a client that left while being attached is skipped.
   */
  async #handOver(reset = false) {
    if (reset) this.#needsReset = true;
    if (this.#handingOver) return;
    this.#handingOver = true;
    try {
      while (!this.#attached && !this.#dead && !this.#stopping) {
        if (this.#needsReset) {
          this.#needsReset = false;
          await this.#reset().catch((err) => {
            if (this.#dead || this.#stopped) throw err;
            // an SQL error in a reset step: the steps before it did their part; carry on
          });
        }
        const next = this.#waiting.shift();
        if (!next) break;
        clearTimeout(next.waitTimer);
        if (next.ended) continue;
        this.#attached = next;
        const params = await this.#exclusive(() => this.#db.query(`SELECT name, current_setting(name, true) AS value FROM unnest($1::text[]) AS name`, [REPORTED_PARAMETERS]));
        if (next.ended) continue; // closed() saw it attached and asked for a reset already
        next.attach(/** @type {Array<{ name: string, value: string | null }>} */ (params.rows));
      }
    } catch {
      // PGlite is dead (#die has reported it) or the server is stopping
    } finally {
      this.#handingOver = false;
    }
  }

  #needsReset = false;

  /** Leaves the session as a new backend would be: no transaction, no prepared statements, defaults. */
  async #reset() {
    this.counters.resets++;
    // Sync ends an extended-protocol batch that an error left waiting for one; then nothing may be
    // inside a transaction block for DISCARD ALL, which closes cursors, drops prepared statements
    // and temporary tables, releases advisory locks and resets every setting.
    for (const step of [sync(), query('ROLLBACK'), query('DISCARD ALL')]) await this.#execute([step]);
    if (this.#baseline.length > 0) {
      await this.#exclusive(() =>
        this.#db.query(`SELECT set_config(name, setting, false) FROM unnest($1::text[], $2::text[]) AS s(name, setting)`, [
          this.#baseline.map((s) => s.name),
          this.#baseline.map((s) => s.setting),
        ]),
      );
    }
  }

  /** Runs a client's batches in order while it holds the session. @param {Connection} conn */
  async pump(conn) {
    if (conn.pumping) return;
    conn.pumping = true;
    try {
      while (this.#attached === conn && !conn.ended && conn.batches.length > 0) {
        const { messages, stripCopyIn } = /** @type {{ messages: Buffer[], stripCopyIn: boolean }} */ (conn.batches.shift());
        let answer = await this.#execute(messages);
        if (stripCopyIn) answer = withoutFirst(answer, 'G');
        if (conn.ended) break; // it left while PGlite worked: the answer has nowhere to go
        if (conn.socket.isPaused() && conn.batches.length < MAX_QUEUED_BATCHES / 2) conn.socket.resume();
        if (!conn.socket.write(answer)) await conn.drained();
      }
    } catch {
      conn.socket.destroy(); // PGlite died (reported by #die), or the server is stopping
    } finally {
      conn.pumping = false;
    }
  }

  /** The counters, plus PGlite's memory. */
  stats() {
    return { ...this.counters, waiting: this.#waiting.length, attached: this.#attached !== null, wasmHeapBytes: this.#db.Module?.HEAPU8.byteLength ?? null };
  }
}

/** One client socket: startup, then batches. */
class Connection {
  /** @type {Array<{ messages: Buffer[], stripCopyIn: boolean }>} complete batches not yet run */
  batches = [];
  /** @type {Buffer[]} messages of the batch being received */
  #partial = [];
  /** @type {Buffer[] | null} the data of a held-back COPY FROM STDIN batch; null when none */
  #copy = null;
  #copyBytes = 0;
  #copyExecuting = false;
  #syncAfterCopy = false;
  /** names of this client's prepared statements that are COPY FROM STDIN */
  #copyStatements = new Set();
  started = false;
  ended = false;
  pumping = false;
  /** @type {NodeJS.Timeout | undefined} */ waitTimer;
  #server;
  #reader;
  #id;
  #maxMessageBytes;

  /** @param {WireServer} server @param {net.Socket} socket @param {number} id @param {number} maxMessageBytes */
  constructor(server, socket, id, maxMessageBytes) {
    this.#server = server;
    this.socket = socket;
    this.#id = id;
    this.#maxMessageBytes = maxMessageBytes;
    this.#reader = new MessageReader({ maxMessageBytes });
    socket.setNoDelay(true);
    // an 'error' without a listener would be an uncaught exception that ends the worker
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#end());
    socket.on('data', (chunk) => this.#receive(chunk));
  }

  #end() {
    if (this.ended) return;
    this.ended = true;
    this.#server.closed(this);
  }

  /** Sends an error (FATAL) and closes, as a server does. @param {string} code @param {string} text */
  fail(code, text) {
    if (this.ended) return;
    // end() alone half-closes: a client that never closes its side would keep the socket open
    this.socket.end(errorResponse({ severity: 'FATAL', code, message: text }), () => this.socket.destroy());
    this.#end();
  }

  drained() {
    return new Promise((resolve) => {
      if (this.ended) return resolve(undefined);
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve(undefined);
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** The session is ours: tell the client it is logged in. @param {Array<{ name: string, value: string | null }>} params */
  attach(params) {
    const status = params.filter((p) => p.value !== null).map((p) => parameterStatus(p.name, /** @type {string} */ (p.value)));
    this.socket.write(Buffer.concat([authenticationOk(), ...status, backendKeyData(this.#id, crypto.randomInt(2 ** 31)), readyForQuery('I')]));
    void this.#server.pump(this);
  }

  /** @param {Buffer} chunk */
  #receive(chunk) {
    if (this.ended) return;
    this.#reader.push(chunk);
    try {
      for (let m = this.#reader.next(); m && !this.ended; m = this.#reader.next()) {
        if (m.kind === 'startup') this.#startup(m.code);
        else if (m.kind === 'oversize') this.#oversize(m.type, m.length);
        else this.#message(m.type, m.bytes);
      }
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      this.fail(err.sqlState, err.message);
      return;
    }
    if (this.batches.length > 0) void this.#server.pump(this);
  }

  /** @param {number} code */
  #startup(code) {
    if (this.started) return this.fail('08P01', 'unexpected startup packet');
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      this.socket.write(sslRefused()); // loopback only: the client goes on unencrypted
    } else if (code === CANCEL_REQUEST) {
      // PGlite runs a query to its end, synchronously: there is nothing to cancel. A server closes
      // a cancel request's connection without an answer.
      this.socket.end();
    } else if (code >>> 16 === 3) {
      this.started = true;
      this.#server.admit(this);
    } else {
      this.fail('0A000', `unsupported frontend protocol ${code >>> 16}.${code & 0xffff}`);
    }
  }

  /** @param {string} type @param {Buffer} bytes */
  #message(type, bytes) {
    if (!this.started || !KNOWN_TYPES.has(type)) return this.fail('08P01', `unexpected message type ${JSON.stringify(type)}`);
    if (type === 'X') {
      // Terminate: the client is done. Never passed to PGlite, whose session outlives clients.
      this.socket.end();
      return this.#end();
    }
    if (this.#copy) return this.#copyMessage(type, bytes);
    // CopyData/Done/Fail outside a COPY are ignored, as a server does after a COPY failed
    if (type === 'd' || type === 'c' || type === 'f') return;
    if (type === 'P' && parameterCount(bytes) > MAX_PARAMETERS) {
      this.#server.counters.oversize++;
      return this.#raiseInPlace(
        `a statement with ${parameterCount(bytes)} parameters exceeds the embedded database's limit of ${MAX_PARAMETERS} ` +
          '(PGlite reads the parameter count as a signed 16-bit number and fails): split the statement',
        false,
      );
    }
    this.#partial.push(bytes);
    if (type === 'P') {
      // remember which prepared statements are COPY FROM STDIN: a driver binds them again later
      // without sending their text (postgres.js caches every statement)
      const name = cstringAt(bytes, 5);
      if (isCopyFromStdin(/** @type {string} */ (statementText(bytes)))) this.#copyStatements.add(name);
      else this.#copyStatements.delete(name);
    } else if (type === 'C' && bytes[5] === 0x53 /* S: a statement */) {
      this.#copyStatements.delete(cstringAt(bytes, 6));
    } else if (type === 'B' && this.#copyStatements.has(cstringAt(bytes, bytes.indexOf(0, 5) + 1))) {
      this.#startCopy(false);
      return;
    } else if (type === 'Q' && isCopyFromStdin(/** @type {string} */ (statementText(bytes)))) {
      this.#startCopy(true);
      this.socket.write(COPY_IN_RESPONSE); // the client sends its data once told to go ahead
      return;
    }
    if (BATCH_ENDS.has(type)) {
      this.batches.push({ messages: this.#partial, stripCopyIn: false });
      this.#partial = [];
      // a client that pipelines far ahead waits for PGlite to catch up
      if (this.batches.length >= MAX_QUEUED_BATCHES) this.socket.pause();
    }
  }

  /**
   * A message over the size limit (its body is being discarded unread). The client gets the error
   * from PGlite itself, in its place in the batch, so that what follows (skipped until Sync) and
   * the transaction state are a backend's own: the message is replaced by a statement raising it.
   * @param {string} type @param {number} length
   */
  #oversize(type, length) {
    this.#server.counters.oversize++;
    const text =
      `a protocol message of ${length} bytes exceeds the embedded database's limit of ${this.#maxMessageBytes} bytes ` +
      '(its WASM memory grows by several times a message and never shrinks): split the statement';
    if (this.#copy && this.#copyExecuting) {
      this.#finishCopy(message('f', Buffer.from(`${text}\0`)));
      return;
    }
    this.#copy = null; // a COPY bound but not executed yet: the error comes first, no COPY starts
    this.#raiseInPlace(text, type === 'Q' || type === 'F');
  }

  /**
   * Puts, where the client's message would have been, a statement that makes PGlite raise
   * program_limit_exceeded with the text: the error, what is skipped after it and the transaction
   * state are then the backend's own. A simple query (or function call) is a batch of its own,
   * answered with ReadyForQuery; otherwise the rest of the client's batch follows up to its Sync.
   * @param {string} text @param {boolean} simple
   */
  #raiseInPlace(text, simple) {
    const raise = `DO $$BEGIN RAISE EXCEPTION '${text.replaceAll("'", "''")}' USING ERRCODE = 'program_limit_exceeded'; END$$`;
    if (simple) this.#message('Q', query(raise));
    else for (const m of [parseUnnamed(raise), bindUnnamed(), executeUnnamed()]) this.#partial.push(m);
  }

  /** Holds the batch back until its COPY data is all here. @param {boolean} executing */
  #startCopy(executing) {
    this.#copy = [];
    this.#copyBytes = 0;
    this.#copyExecuting = executing;
    this.#syncAfterCopy = false;
  }

  /**
   * Inside a held-back COPY: the rest of the extended-protocol batch (Execute, Sync) and then the
   * data. PGlite gets command, data and CopyDone/CopyFail in one call, with the Sync that the
   * client sent before its data moved after them (a backend ignores a Sync during COPY, and no
   * ReadyForQuery would follow). PGlite's own CopyInResponse is removed from its answer.
   * @param {string} type @param {Buffer} bytes
   */
  #copyMessage(type, bytes) {
    const copy = /** @type {Buffer[]} */ (this.#copy);
    if (!this.#copyExecuting) {
      // bound, not yet executed
      if (type === 'E') {
        this.#partial.push(bytes);
        this.#copyExecuting = true;
        this.socket.write(COPY_IN_RESPONSE);
      } else if (type === 'S' || type === 'H') {
        // bound but not executed: no COPY starts, an ordinary batch after all
        this.#copy = null;
        this.#message(type, bytes);
      } else {
        this.#partial.push(bytes);
      }
      return;
    }
    if (type === 'd') {
      this.#copyBytes += bytes.length;
      if (this.#copyBytes > this.#maxMessageBytes) {
        // too much to hand PGlite at once: fail the COPY through PGlite itself, so that the error
        // and the transaction state come from the backend; the rest of the data is then ignored
        this.#finishCopy(message('f', Buffer.from(`COPY data over the embedded database's limit of ${this.#maxMessageBytes} bytes: split it\0`)));
        this.#server.counters.oversize++;
      } else {
        copy.push(bytes);
      }
    } else if (type === 'c' || type === 'f') {
      this.#finishCopy(bytes);
    } else if (type === 'S') {
      this.#syncAfterCopy = true;
    }
    // a Flush, or anything else sent during COPY, is ignored as a backend in COPY ignores it
  }

  /** @param {Buffer} end CopyDone or CopyFail */
  #finishCopy(end) {
    const parts = [...this.#partial, .../** @type {Buffer[]} */ (this.#copy), end];
    if (this.#syncAfterCopy) parts.push(sync());
    this.batches.push({ messages: parts, stripCopyIn: true });
    this.#server.counters.copies++;
    this.#partial = [];
    this.#copy = null;
  }
}

/** An error PostgreSQL raised (it has an SQLSTATE), as opposed to one from PGlite's machinery. @param {unknown} err */
function isSqlError(err) {
  const code = /** @type {{ code?: unknown }} */ (err)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** @param {string} sql */
function isCopyFromStdin(sql) {
  return COPY_FROM_STDIN.test(sql.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' '));
}

/**
 * How many parameters a Parse message's statement has: the parameter types it declares, or the
 * highest $n in its text if that is more (a driver may leave types to the server).
 * @param {Buffer} bytes
 */
function parameterCount(bytes) {
  const queryStart = bytes.indexOf(0, 5) + 1;
  const queryEnd = bytes.indexOf(0, queryStart);
  const declared = queryEnd > 0 && queryEnd + 3 <= bytes.length ? bytes.readUInt16BE(queryEnd + 1) : 0;
  let highest = 0;
  for (const m of bytes.toString('latin1', queryStart, queryEnd).matchAll(/\$(\d{5,})/g)) highest = Math.max(highest, Number(m[1]));
  return Math.max(declared, highest);
}

/** The NUL-terminated string at offset. @param {Buffer} bytes @param {number} offset */
function cstringAt(bytes, offset) {
  const end = bytes.indexOf(0, offset);
  return bytes.toString('utf8', offset, end < 0 ? bytes.length : end);
}

/** The answer without the first message of the given type. @param {Buffer} answer @param {string} type */
function withoutFirst(answer, type) {
  const code = type.charCodeAt(0);
  for (let i = 0; i + 5 <= answer.length; i += 1 + answer.readInt32BE(i + 1)) {
    if (answer[i] === code) return Buffer.concat([answer.subarray(0, i), answer.subarray(i + 1 + answer.readInt32BE(i + 1))]);
  }
  return answer;
}
