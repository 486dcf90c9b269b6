// Framing of the PostgreSQL wire protocol (version 3) for the embedded database's server
// (wire.mjs), and the few backend messages that server writes itself.
//
// Why we frame at all: PGlite's execProtocol* must be given whole messages. TCP hands us bytes in
// arbitrary chunks (Node reads up to 64 KiB at a time), so a message can arrive in pieces and
// several messages can arrive in one chunk. Fed a piece of a message, PGlite's backend reads past
// the end of its input and the WASM instance aborts (docs/embedded-database.md, "The "64 KB limit"").
//
// Layout: until the startup is done, a message is a 4-byte big-endian length (counting itself)
// and a 4-byte code (protocol version, or the SSL/GSS/cancel request codes), then the body.
// Afterwards every message is a type byte, then a 4-byte length (counting itself, not the type).
// Plain JavaScript: it runs in the database's worker thread, which has no TypeScript loader.

export const PROTOCOL_3 = 196608; // 3 << 16
export const SSL_REQUEST = 80877103;
export const GSSENC_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;
/** PostgreSQL's own cap on a startup packet (MAX_STARTUP_PACKET_LENGTH). */
const MAX_STARTUP_BYTES = 10_000;

/** The client broke the protocol: the connection must end. */
export class FrameError extends Error {
  /** @param {string} message @param {string} sqlState */
  constructor(message, sqlState = '08P01') {
    super(message);
    this.name = 'FrameError';
    this.sqlState = sqlState;
  }
}

/**
 * Accumulates a connection's bytes and hands out complete messages, in order. A message's bytes
 * are copied at most once (when it spans chunks); one inside a chunk is a view of that chunk.
 */
export class MessageReader {
  /** @type {Buffer[]} chunks received, from #head on (an index, not shift(): see #drop) */
  #chunks = [];
  #head = 0;
  #buffered = 0;
  #startupPhase = true;
  /** body bytes of an oversize message still to discard */
  #skipping = 0;
  #maxMessageBytes;

  /** @param {{ maxMessageBytes: number }} opts */
  constructor({ maxMessageBytes }) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** Bytes received and not yet handed out as a message. */
  get buffered() {
    return this.#buffered;
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    if (chunk.length === 0) return;
    if (this.#head === this.#chunks.length) {
      this.#chunks = [];
      this.#head = 0;
    }
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
  }

  /**
   * The next complete message, or null until more bytes arrive. A message over maxMessageBytes is
   * reported from its header as { kind: 'oversize' } and its body discarded as it arrives, never
   * buffered. Throws FrameError on a malformed length.
   * @returns {null | { kind: 'startup', code: number, bytes: Buffer } | { kind: 'message', type: string, bytes: Buffer }
   *   | { kind: 'oversize', type: string, length: number }}
   */
  next() {
    if (this.#skipping > 0) {
      const n = Math.min(this.#skipping, this.#buffered);
      this.#take(n);
      this.#skipping -= n;
      if (this.#skipping > 0) return null;
    }
    const headerBytes = this.#startupPhase ? 4 : 5;
    if (this.#buffered < headerBytes) return null;
    const header = this.#peek(headerBytes);
    const length = header.readInt32BE(headerBytes - 4);
    if (this.#startupPhase) {
      if (length < 8 || length > MAX_STARTUP_BYTES) throw new FrameError(`invalid startup packet length ${length}`);
    } else {
      if (length < 4) throw new FrameError(`invalid message length ${length}`);
      if (length > this.#maxMessageBytes) {
        const type = String.fromCharCode(header[0]);
        this.#take(5);
        this.#skipping = length - 4;
        return { kind: 'oversize', type, length };
      }
    }
    const total = headerBytes - 4 + length;
    if (this.#buffered < total) return null;
    const bytes = this.#take(total);
    if (this.#startupPhase) {
      const code = bytes.readInt32BE(4);
      // after a startup message proper (any 3.x version) the typed phase begins; SSL, GSS and
      // cancel requests keep the startup framing
      if (code >>> 16 === 3) this.#startupPhase = false;
      return { kind: 'startup', code, bytes };
    }
    return { kind: 'message', type: String.fromCharCode(bytes[0]), bytes };
  }

  /** The first n bytes (n is a header's size, at most 5), without consuming them. */
  #peek(/** @type {number} */ n) {
    const first = this.#chunks[this.#head];
    if (first.length >= n) return first;
    // copy from as few chunks as needed: a client trickling single bytes must not cost O(n^2)
    const out = Buffer.alloc(n);
    let offset = 0;
    for (let i = this.#head; i < this.#chunks.length; i++) {
      const chunk = this.#chunks[i];
      const count = Math.min(chunk.length, n - offset);
      chunk.copy(out, offset, 0, count);
      offset += count;
      if (offset === n) break;
    }
    return out;
  }

  /** Removes and returns the first n bytes. */
  #take(/** @type {number} */ n) {
    this.#buffered -= n;
    const first = this.#chunks[this.#head];
    if (first.length >= n) {
      if (first.length === n) this.#drop();
      else this.#chunks[this.#head] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let offset = 0;
    while (offset < n) {
      const chunk = this.#chunks[this.#head];
      const count = Math.min(chunk.length, n - offset);
      chunk.copy(out, offset, 0, count);
      offset += count;
      if (count === chunk.length) this.#drop();
      else this.#chunks[this.#head] = chunk.subarray(count);
    }
    return out;
  }

  /** Forgets the first chunk. Array.shift() is linear in the array's length: many small chunks
   *  would make a long message quadratic. */
  #drop() {
    this.#chunks[this.#head++] = /** @type {Buffer} */ (/** @type {unknown} */ (undefined));
    if (this.#head > 1024 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }
}

/** A typed message: type byte, length, body. @param {string} type @param {Buffer} [body] */
export function message(type, body = Buffer.alloc(0)) {
  const out = Buffer.allocUnsafe(5 + body.length);
  out.write(type, 0, 'latin1');
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

/** @param {string} s */
const cstring = (s) => Buffer.from(`${s}\0`, 'utf8');

const int32 = (/** @type {number} */ n) => {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32BE(n);
  return b;
};

export const sslRefused = () => Buffer.from('N');
export const authenticationOk = () => message('R', int32(0));
/** @param {string} name @param {string} value */
export const parameterStatus = (name, value) => message('S', Buffer.concat([cstring(name), cstring(value)]));
/** @param {number} pid @param {number} secret */
export const backendKeyData = (pid, secret) => message('K', Buffer.concat([int32(pid), int32(secret)]));
/** @param {'I' | 'T' | 'E'} status */
export const readyForQuery = (status = 'I') => message('Z', Buffer.from(status, 'latin1'));
export const sync = () => message('S');
/** A simple-protocol query. @param {string} sql */
export const query = (sql) => message('Q', cstring(sql));

/**
 * An ErrorResponse. FATAL ones precede closing the connection, as a server does.
 * @param {{ severity: 'ERROR' | 'FATAL', code: string, message: string }} e
 */
export function errorResponse({ severity, code, message: text }) {
  const fields = Buffer.concat([
    Buffer.from('S'),
    cstring(severity),
    Buffer.from('V'),
    cstring(severity),
    Buffer.from('C'),
    cstring(code),
    Buffer.from('M'),
    cstring(text),
    Buffer.from([0]),
  ]);
  return message('E', fields);
}

/** PGlite's backend reads its input in blocks of this many bytes (PostgreSQL's PQ_RECV_BUFFER_SIZE). */
const RECV_BLOCK = 8192;
const FLUSH = message('H');

/**
 * One PGlite call's input from whole messages. PGlite stops reading a call's input where a message
 * begins exactly at a multiple of 8,192 bytes: that message and all after it are silently dropped
 * (measured: a Bind of k x 8,192 bytes followed by Execute and Sync is answered with BindComplete
 * alone, for every k tried from 1 to 100; a client then waits for ever). So Flush messages, which a
 * backend ignores in every state (in an aborted batch and during COPY too), are inserted in front
 * of a message to move it, and the one after it, off such a boundary. A message ending the input
 * on a boundary is fine; so are COPY data messages, read by another loop, but they get the same
 * treatment for simplicity.
 * @param {Buffer[]} messages
 * @returns {Buffer}
 */
export function assemble(messages) {
  if (messages.length === 1) return /** @type {Buffer} */ (messages[0]);
  /** @type {Buffer[]} */
  const out = [];
  let offset = 0; // where the next message starts: 0 or not a multiple of RECV_BLOCK
  messages.forEach((m, i) => {
    const last = i === messages.length - 1;
    const fits = (/** @type {number} */ pads) => {
      for (let j = 1; j <= pads; j++) if ((offset + 5 * j) % RECV_BLOCK === 0) return false; // a Flush after the first, or m itself
      return last || (offset + 5 * pads + m.length) % RECV_BLOCK !== 0; // the message after m
    };
    let pads = 0;
    while (!fits(pads)) pads++;
    for (let j = 0; j < pads; j++) out.push(FLUSH);
    out.push(m);
    offset += 5 * pads + m.length;
  });
  return Buffer.concat(out);
}

/** A Parse of an unnamed statement (no parameter types). @param {string} sql */
export const parseUnnamed = (sql) => message('P', Buffer.concat([Buffer.from([0]), cstring(sql), Buffer.from([0, 0])]));
/** A Bind of the unnamed statement to the unnamed portal, no parameters, text results. */
export const bindUnnamed = () => message('B', Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]));
/** An Execute of the unnamed portal, all rows. */
export const executeUnnamed = () => message('E', Buffer.from([0, 0, 0, 0, 0]));

/** The SQL text of a Parse ('P') or Query ('Q') message; undefined for other types. @param {Buffer} bytes */
export function statementText(bytes) {
  const type = String.fromCharCode(bytes[0]);
  let start = 5;
  if (type === 'P') start = bytes.indexOf(0, 5) + 1; // skip the statement name
  else if (type !== 'Q') return undefined;
  const end = bytes.indexOf(0, start);
  return bytes.toString('utf8', start, end < 0 ? bytes.length : end);
}
