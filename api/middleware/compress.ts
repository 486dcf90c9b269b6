// gzip for JSON bodies over 2 KB, when the client accepts it, at levels chosen for latency
// (docs/decisions.md, "Compression"). Bodies up to 64 KB are compressed right here at level 1
// (cheaper than a hop to zlib's thread pool and back); larger ones in the thread pool at level 4
// (close to level 9's size at a fraction of its time), so a large page never stalls the event loop.
// Accept-Encoding is read as RFC 9110 says: `gzip;q=0` or `*;q=0` refuse it, and an unknown or
// malformed header just means identity.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type Koa from 'koa';

const gzip = promisify(zlib.gzip);
const THRESHOLD_BYTES = 2_048;
const INLINE_MAX_BYTES = 65_536;
export const GZIP_LEVEL = 4;
const INLINE_GZIP_LEVEL = 1;

/** Whether an Accept-Encoding header allows gzip. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let answer = acceptsGzipSeen.get(header);
  if (answer === undefined) {
    answer = readAcceptsGzip(header);
    if (acceptsGzipSeen.size >= 256) acceptsGzipSeen.clear(); // bounded: clients send a handful of distinct headers
    acceptsGzipSeen.set(header, answer);
  }
  return answer;
}
const acceptsGzipSeen = new Map<string, boolean>();

function readAcceptsGzip(header: string): boolean {
  let gzipQ: number | undefined;
  let anyQ: number | undefined;
  for (const part of header.slice(0, 512).split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    if (coding === 'gzip' || coding === 'x-gzip') gzipQ = q;
    else if (coding === '*') anyQ = q;
  }
  return (gzipQ ?? anyQ ?? 0) > 0;
}

/**
 * The end of a JSON text that many answers share (GET /v1/rates/markets: every pair's rate, the
 * same for a second), deflated once. Such an answer is its own head plus this; gzipping it costs
 * the head stored as is (a few hundred bytes of meta) and a CRC, not a compression of the whole.
 */
export class SharedTail {
  readonly bytes: Buffer;
  private deflatedOnce: Buffer | undefined;

  constructor(readonly text: string) {
    this.bytes = Buffer.from(text);
  }

  /** Raw deflate, final block included: a stream that can follow any byte-aligned blocks. */
  get deflated(): Buffer {
    this.deflatedOnce ??= zlib.deflateRawSync(this.bytes, { level: GZIP_LEVEL });
    return this.deflatedOnce;
  }
}

/** A JSON answer as its own head and a shared tail (the route sets Content-Type). */
export class HeadAndSharedTail {
  constructor(
    readonly head: string,
    readonly tail: SharedTail,
  ) {}
}

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]); // deflate, no flags, no mtime, OS unknown
const STORED_BLOCK_MAX = 65_535;

/**
 * One gzip member (RFC 1952) of head + tail: the head as stored, non-final deflate blocks (RFC 1951
 * 3.2.4: byte-aligned, so the tail's own deflate stream can follow as it is), then the tail's, then
 * the CRC-32 and length of the whole.
 */
function gzipJoined(head: Buffer, tail: SharedTail): Buffer {
  const parts: Buffer[] = [GZIP_HEADER];
  for (let at = 0; at < head.length; at += STORED_BLOCK_MAX) {
    const chunk = head.subarray(at, at + STORED_BLOCK_MAX);
    const block = Buffer.alloc(5);
    block[0] = 0; // BFINAL 0, BTYPE 00 (stored)
    block.writeUInt16LE(chunk.length, 1);
    block.writeUInt16LE(~chunk.length & 0xffff, 3);
    parts.push(block, chunk);
  }
  parts.push(tail.deflated);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(zlib.crc32(tail.bytes, zlib.crc32(head)), 0);
  trailer.writeUInt32LE((head.length + tail.bytes.length) >>> 0, 4);
  parts.push(trailer);
  return Buffer.concat(parts);
}

/**
 * Gzips the body in place when it is JSON text or bytes over the threshold and the client accepts
 * gzip. Returns a promise only when the work goes to the thread pool, so a small answer costs no
 * await.
 */
export function compressBody(ctx: Koa.Context): Promise<void> | undefined {
  const body: unknown = ctx.body;
  if (body instanceof HeadAndSharedTail) {
    if (ctx.method !== 'HEAD' && acceptsGzip(ctx.get('Accept-Encoding'))) {
      ctx.body = gzipJoined(Buffer.from(body.head), body.tail);
      ctx.set('Content-Encoding', 'gzip');
    } else {
      ctx.body = body.head + body.tail.text;
    }
    return;
  }
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return;
  // measured before it is copied: most answers are small and leave as they are
  if ((typeof body === 'string' ? Buffer.byteLength(body) : body.length) < THRESHOLD_BYTES) return;
  if (ctx.method === 'HEAD' || ctx.response.get('Content-Encoding') || !acceptsGzip(ctx.get('Accept-Encoding'))) return;
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (bytes.length <= INLINE_MAX_BYTES) {
    ctx.body = zlib.gzipSync(bytes, { level: INLINE_GZIP_LEVEL });
    ctx.set('Content-Encoding', 'gzip');
    return;
  }
  return gzip(bytes, { level: GZIP_LEVEL }).then((zipped) => {
    ctx.body = zipped;
    ctx.set('Content-Encoding', 'gzip');
  });
}
