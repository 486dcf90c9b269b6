// The embedded database's wire server (lib/db/embedded/wire.mjs) against the real PGlite: framing,
// pipelined errors, large messages, COPY, clients that vanish, the one-connection queue, and a
// dying database being reported. docs/embedded-database.md has the measurements behind each case.
import net from 'node:net';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../lib/config.js';
import { openDatabase } from '../../../../lib/db/connect.js';
import { MAX_MESSAGE_BYTES, startEmbedded, type EmbeddedDatabase } from '../../../../lib/db/embedded/index.js';
import { FrameError, MessageReader, assemble, message, query, sync } from '../../../../lib/db/embedded/frames.mjs';
import { until } from '../../../support/wait.js';

const QUEUE_TIMEOUT_MS = 1_500;
let db: EmbeddedDatabase;
const fatal: Error[] = [];

beforeAll(async () => {
  db = await startEmbedded(undefined, { onFatal: (reason) => fatal.push(reason), queueTimeoutMs: QUEUE_TIMEOUT_MS });
  const sql = client();
  await sql`CREATE TABLE w (id int PRIMARY KEY, note text)`;
  await sql.end();
});
afterAll(async () => {
  await db?.stop();
  expect(fatal).toEqual([]); // nothing in this file but the dedicated tests may kill a database
});

function client(opts: postgres.Options<Record<string, postgres.PostgresType>> = {}) {
  return postgres(db.url, { max: 1, onnotice: () => {}, ...opts });
}

function startupPacket(): Buffer {
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + params.length);
  head.writeInt32BE(196608, 4);
  return Buffer.concat([head, params]);
}

/** A raw protocol client: what a driver would send, byte for byte, and the types of what came back. */
class RawClient {
  readonly socket: net.Socket;
  private received = Buffer.alloc(0);
  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (d) => (this.received = Buffer.concat([this.received, d])));
    socket.on('error', () => {});
  }
  static async connect(url: string): Promise<RawClient> {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawClient(socket);
  }
  /** Backend message types received so far (one letter each). */
  types(): string {
    const out: string[] = [];
    for (let i = 0; i + 5 <= this.received.length; i += 1 + this.received.readInt32BE(i + 1)) out.push(String.fromCharCode(this.received[i]!));
    return out.join('');
  }
  /** Once the types received match `pattern` (looked at as each chunk arrives). */
  async until(pattern: RegExp, timeoutMs = 5_000): Promise<string> {
    if (!pattern.test(this.types())) {
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(this.types())) return;
          clearTimeout(timer);
          this.socket.off('data', check);
          resolve();
        };
        const timer = setTimeout(() => {
          this.socket.off('data', check);
          reject(new Error(`waited for ${pattern}, got ${JSON.stringify(this.types())}`));
        }, timeoutMs);
        this.socket.on('data', check); // after the constructor's: what this chunk brought is counted
      });
    }
    return this.types();
  }
  clear(): void {
    this.received = Buffer.alloc(0);
  }
  async login(): Promise<void> {
    this.socket.write(startupPacket());
    await this.until(/^R.*Z$/);
  }
}

const parse = (name: string, sql: string) => message('P', Buffer.from(`${name}\0${sql}\0\0\0`));
const describe_ = (name: string) => message('D', Buffer.from(`S${name}\0`));
const flush = () => message('H');

describe('framing', () => {
  const stream = Buffer.concat([
    startupPacket(),
    parse('s1', 'SELECT $1::int'),
    describe_('s1'),
    sync(),
    query(`SELECT '${'x'.repeat(100_000)}'`),
    message('X'),
  ]);
  const frames = (chunks: Buffer[]) => {
    const reader = new MessageReader({ maxMessageBytes: 1_000_000 });
    const out: string[] = [];
    for (const c of chunks) {
      reader.push(c);
      for (let f = reader.next(); f; f = reader.next()) out.push(f.kind === 'oversize' ? 'oversize' : `${f.kind === 'startup' ? `startup:${f.code}` : f.type}:${f.bytes.length}`);
    }
    return { out, left: reader.buffered };
  };

  it('hands out the same whole messages however the bytes are split', () => {
    const whole = frames([stream]);
    expect(whole.out).toEqual(['startup:196608:41', 'P:25', 'D:9', 'S:5', 'Q:100015', 'X:5']);
    expect(whole.left).toBe(0);
    const bytewise = frames([...stream].map((b) => Buffer.from([b])));
    expect(bytewise).toEqual(whole);
    let seed = 7;
    const random: Buffer[] = [];
    for (let i = 0; i < stream.length; ) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const n = 1 + (seed % 70_000);
      random.push(stream.subarray(i, i + n));
      i += n;
    }
    expect(frames(random)).toEqual(whole);
  });

  it('reports a message over the limit from its header, and discards its body unbuffered', () => {
    const reader = new MessageReader({ maxMessageBytes: 1_000 });
    reader.push(startupPacket());
    expect(reader.next()?.kind).toBe('startup');
    reader.push(Buffer.from([0x51, 0, 0, 0x10, 0x04])); // 'Q' of 4 KB: header only so far
    expect(reader.next()).toEqual({ kind: 'oversize', type: 'Q', length: 4_100 });
    reader.push(Buffer.alloc(3_000, 0x61));
    expect(reader.next()).toBeNull();
    expect(reader.buffered).toBe(0);
    reader.push(Buffer.concat([Buffer.alloc(1_096, 0x61), sync()]));
    expect(reader.next()).toMatchObject({ kind: 'message', type: 'S' });
    expect(reader.buffered).toBe(0);
  });

  it('assembles a call so that no message but the first starts on an 8 KB boundary', () => {
    const starts = (bytes: Buffer) => {
      const out: number[] = [];
      for (let i = 0; i + 5 <= bytes.length; i += 1 + bytes.readInt32BE(i + 1)) out.push(i);
      return out;
    };
    for (const first of [8_192 - 5, 8_192, 16_384 - 10, 8_187 - 5, 8_192 * 3 + 1]) {
      const messages = [message('B', Buffer.alloc(first - 5)), message('E', Buffer.alloc(5)), sync()];
      const bytes = assemble(messages);
      expect(starts(bytes).slice(1).filter((o) => o % 8_192 === 0)).toEqual([]);
      // the same messages in the same order, only Flushes added
      expect(starts(bytes).map((o) => String.fromCharCode(bytes[o]!)).join('').replace(/H/g, '')).toBe('BES');
    }
  });

  it('refuses a malformed length', () => {
    const reader = new MessageReader({ maxMessageBytes: 1_000 });
    reader.push(Buffer.from([0, 0, 0, 2, 0, 0, 0, 0]));
    expect(() => reader.next()).toThrow(FrameError);
  });
});

describe('embedded wire server', () => {
  it('answers every pipelined query in order, errors among them, burst after burst', async () => {
    const sql = client();
    try {
      for (let burst = 0; burst < 5; burst++) {
        const results = await Promise.allSettled(
          Array.from({ length: 90 }, (_, i) =>
            i % 3 === 0
              ? sql`SELECT 1 / ${0}::int AS x`
              : i % 3 === 1
                ? sql`SELECT ${'294277-01-01'}::text::timestamptz AS x`
                : sql`SELECT ${i}::int AS i`,
          ),
        );
        results.forEach((r, i) => {
          if (i % 3 === 2) expect(r).toEqual({ status: 'fulfilled', value: [{ i }] });
          else expect(r.status === 'rejected' && (r.reason as { code: string }).code).toBe(i % 3 === 0 ? '22012' : '22008');
        });
      }
      expect(await sql`SELECT 41 + 1 AS n`).toEqual([{ n: 42 }]);
    } finally {
      await sql.end();
    }
  });

  it('answers a batch whose messages fall on 8 KB boundaries (PGlite drops them otherwise)', async () => {
    // The Bind of a prepared statement grows a byte per query: one of them puts the Execute (or
    // the Sync) exactly at 16,384 bytes into the call, where PGlite would stop reading.
    const sql = client();
    try {
      const sizes = Array.from({ length: 40 }, (_, i) => 16_384 - 45 + i);
      const lengths = await Promise.race([
        Promise.all(sizes.map((n) => sql`SELECT length(${'x'.repeat(n)}::text) AS n`.then((r) => r[0]!.n as number))),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('a query never got its answer')), 10_000)),
      ]);
      expect(lengths).toEqual(sizes);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('takes statements and parameters far above 64 KB', async () => {
    const sql = client();
    try {
      const mb = 'x'.repeat(2 ** 20);
      expect(await sql`SELECT length(${mb}) AS n`).toEqual([{ n: 2 ** 20 }]);
      const literal = 'y'.repeat(300_000);
      expect(await sql.unsafe(`SELECT length('${literal}') AS n`)).toEqual([{ n: 300_000 }]);
      // 5,000 rows x 4 parameters in one INSERT killed the database before (about 150 KB)
      await sql`CREATE TABLE wide (a int, b text, c float8, d timestamptz)`;
      const rows = Array.from({ length: 5_000 }, (_, i) => ({ a: i, b: `row ${i}`, c: i / 3, d: new Date(1_800_000_000_000 + i * 1000) }));
      await sql`INSERT INTO wide ${sql(rows)}`;
      expect(await sql`SELECT count(*)::int AS n, sum(a)::int AS s FROM wide`).toEqual([{ n: 5_000, s: (4_999 * 5_000) / 2 }]);
    } finally {
      await sql.end();
    }
  });

  it('answers a message over the limit with an error in its place, and goes on', async () => {
    const sql = client();
    try {
      const huge = 'z'.repeat(MAX_MESSAGE_BYTES + 1);
      await expect(sql`SELECT length(${huge})`).rejects.toMatchObject({ code: '54000', message: expect.stringMatching(/exceeds the embedded database's limit/) });
      await expect(sql.unsafe(`SELECT '${huge}'`)).rejects.toMatchObject({ code: '54000' });
      // inside a transaction the error aborts it, as any error would
      await expect(
        sql.begin(async (tx) => {
          await tx`INSERT INTO w VALUES (99, ${huge})`;
        }),
      ).rejects.toMatchObject({ code: '54000' });
      expect(await sql`SELECT count(*)::int AS n FROM w WHERE id = 99`).toEqual([{ n: 0 }]);
      expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    } finally {
      await sql.end();
    }
  });

  it('refuses a statement of more than 32,767 parameters with an error, and goes on', async () => {
    // PGlite's parser reads the parameter count as signed 16 bits: 32,768 or more killed it
    const sql = client();
    try {
      await sql`CREATE TABLE six (a int, b int, c int, d int, e int, f int)`;
      const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ a: i, b: i, c: i, d: i, e: i, f: i }));
      await sql`INSERT INTO six ${sql(rows(5_461))}`; // 32,766 parameters
      await expect(sql`INSERT INTO six ${sql(rows(5_462))}`).rejects.toMatchObject({ code: '54000', message: expect.stringMatching(/32772 parameters/) });
      expect(await sql`SELECT count(*)::int AS n FROM six`).toEqual([{ n: 5_461 }]);
    } finally {
      await sql.end();
    }
  });

  it('runs COPY FROM STDIN, again from the cached statement, and inside a transaction', async () => {
    const sql = client();
    try {
      await sql`CREATE TABLE copied (a int, b text)`;
      const rows = (from: number, n: number) => Readable.from(Array.from({ length: n }, (_, i) => `${from + i}\tnote ${from + i}\n`));
      await pipeline(rows(0, 10_000), await sql`COPY copied (a, b) FROM STDIN`.writable());
      await pipeline(rows(10_000, 10), await sql`COPY copied (a, b) FROM STDIN`.writable());
      await sql.begin(async (tx) => {
        await pipeline(rows(20_000, 5), await tx`COPY copied (a, b) FROM STDIN`.writable());
      });
      expect(await sql`SELECT count(*)::int AS n, max(a) AS top FROM copied`).toEqual([{ n: 10_015, top: 20_004 }]);
      // bad data: nothing stored, the connection goes on (postgres.js never finishes a failed
      // COPY's stream, on a real server too, so only the write is awaited)
      const w = await sql`COPY copied (a, b) FROM STDIN`.writable();
      await new Promise<void>((resolve) => w.write('not a number\tx\n', () => resolve()));
      w.end();
      expect(await sql`SELECT count(*)::int AS n FROM copied`).toEqual([{ n: 10_015 }]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('leaves nothing of a client that vanished mid-transaction, mid-batch or mid-query', async () => {
    // mid-transaction: BEGIN, an INSERT, then the socket is gone without a Terminate
    const a = await RawClient.connect(db.url);
    await a.login();
    a.socket.write(query('BEGIN'));
    a.socket.write(query(`INSERT INTO w VALUES (1, 'uncommitted')`));
    await a.until(/Z.*Z.*Z$/);
    a.socket.destroy();
    // mid-batch: a failed Parse answered on Flush, the Sync never sent (PGlite then ignores
    // everything until a Sync)
    const b = await RawClient.connect(db.url);
    await b.login();
    b.socket.write(Buffer.concat([parse('broken', 'SELEC nothing'), describe_('broken'), flush()]));
    await b.until(/E$/);
    b.socket.destroy();
    // mid-query: the answer has nowhere to go
    const c = await RawClient.connect(db.url);
    await c.login();
    c.socket.write(query('SELECT pg_sleep(0.3), 42'));
    c.socket.destroy();

    const sql = client();
    try {
      expect(await sql`SELECT count(*)::int AS n FROM w`).toEqual([{ n: 0 }]); // in A's transaction it would be 1
      expect(await sql.unsafe(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'broken'`, [], { prepare: false })).toEqual([{ n: 0 }]);
      expect(await sql`SELECT current_setting('search_path') AS path, current_setting('client_min_messages') AS level`).toEqual([{ path: 'public', level: 'notice' }]);
      await sql.begin(async (tx) => {
        await tx`INSERT INTO w VALUES (2, 'committed')`;
      });
      expect(await sql`SELECT id FROM w`).toEqual([{ id: 2 }]);
    } finally {
      await sql.end();
    }
  });

  it('makes a second client wait its turn, and gives up on it with an error after the queue timeout', async () => {
    const first = client();
    const second = client({ connect_timeout: 10 });
    const third = client();
    try {
      await first`SELECT 1`; // holds the one connection
      const t0 = Date.now();
      await expect(second`SELECT 2`).rejects.toMatchObject({ code: '53300' });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(QUEUE_TIMEOUT_MS - 100);
      const waiting = third`SELECT 3 AS n`.execute(); // queued now (sent, not only built), admitted when the first leaves
      await until('the third client queued', async () => (await db.stats()).waiting === 1, 5_000);
      await first.end();
      expect(await waiting).toEqual([{ n: 3 }]);
    } finally {
      await Promise.all([first.end(), second.end(), third.end()]);
    }
  });

  it('declines SSL, then lets the client log in unencrypted', async () => {
    const raw = await RawClient.connect(db.url);
    const answer = new Promise<Buffer>((resolve) => raw.socket.once('data', resolve));
    const ssl = Buffer.alloc(8);
    ssl.writeInt32BE(8);
    ssl.writeInt32BE(80877103, 4);
    raw.socket.write(ssl);
    expect((await answer).toString()).toBe('N');
    raw.clear();
    raw.socket.write(startupPacket());
    expect(await raw.until(/^R.*KZ$/)).toMatch(/^RS+KZ$/); // AuthenticationOk, parameters, key, ready
    raw.socket.destroy();
  });
});

describe('a dying embedded database', () => {
  it('is reported once with PGlite\'s reason when PGlite fails, and stops listening', async () => {
    const reasons: Error[] = [];
    const doomed = await startEmbedded(undefined, { onFatal: (r) => reasons.push(r) });
    const sql = postgres(doomed.url, { max: 1, onnotice: () => {} });
    expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    doomed.crash();
    await expect.poll(() => reasons.length, { timeout: 10_000 }).toBe(1);
    expect(reasons[0]!.message).toMatch(/Aborted|unreachable|RuntimeError/);
    await expect(sql`SELECT 1`).rejects.toThrow();
    const { hostname, port } = new URL(doomed.url);
    await expect(
      new Promise((resolve, reject) => net.connect(Number(port), hostname).once('connect', resolve).once('error', reject)),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await doomed.stop(); // returns at once: nothing to stop
    await sql.end({ timeout: 0 });
    expect(reasons).toHaveLength(1);
  });

  it('is reported when its worker thread ends', async () => {
    const reasons: Error[] = [];
    const doomed = await startEmbedded(undefined, { onFatal: (r) => reasons.push(r) });
    await doomed.terminate();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]!.message).toMatch(/worker thread ended/);
  });

  it('is not reported on a clean stop', async () => {
    const reasons: Error[] = [];
    const fine = await startEmbedded(undefined, { onFatal: (r) => reasons.push(r) });
    await fine.stop();
    expect(reasons).toEqual([]);
  });

  it('logs one line saying the database stopped and why, and tells the owner', async () => {
    const lines: Array<{ level: number; msg: string; err?: { message: string } }> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const log = pino({ level: 'info' }, sink);
    const told: Error[] = [];
    const database = await openDatabase(loadConfig({}), log, { inMemory: true, migrate: false, onFatal: (r) => told.push(r) });
    database.embedded!.crash();
    await expect.poll(() => told.length, { timeout: 10_000 }).toBe(1);
    const fatalLines = lines.filter((l) => l.level >= 50);
    expect(fatalLines).toHaveLength(1);
    expect(fatalLines[0]).toMatchObject({ level: 60, msg: expect.stringMatching(/^the embedded database stopped: .*(Aborted|unreachable)/) });
    await database.close();
    expect(lines.filter((l) => l.level >= 50)).toHaveLength(1);
  });
});
