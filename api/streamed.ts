// Answers sent while they are made (a CSV page, a month's file): bytes pulled from their source a
// piece at a time, as the connection takes them, so a slow client holds back the database reads
// instead of the server holding the answer in memory. Once the status and headers are sent a
// failure cannot become an error answer: the connection is cut, and the client sees a body that
// ended early (no final chunk, no digest) rather than a short file that looks whole.
import { createHash, type Hash } from 'node:crypto';
import { Readable, Transform, pipeline } from 'node:stream';
import zlib from 'node:zlib';
import type { AppContext } from './context.js';
import { GZIP_LEVEL, acceptsGzip } from './middleware/compress.js';

/** Bytes buffered ahead of the connection before the next piece is asked for. */
const AHEAD_BYTES = 64 * 1024;

/** A byte stream of what `pieces` yields, each piece asked for once the one before has mostly gone. */
export function byteStream(pieces: AsyncIterable<string | Buffer>): Readable {
  return Readable.from(pieces, { objectMode: false, highWaterMark: AHEAD_BYTES });
}

/** `source` through `step`; an error in either ends both, and is the returned stream's. */
export function through(source: Readable, step: Transform): Readable {
  return pipeline(source, step, () => {}); // the error is the returned stream's, handled by sendStream
}

/**
 * `body` gzipped on its way (Content-Encoding) when the client accepts gzip, as every answer over
 * 2 KB is (api/middleware/compress.ts, which leaves streams alone).
 */
export function gzipEncoded(ctx: AppContext, body: Readable): Readable {
  if (ctx.method === 'HEAD' || !acceptsGzip(ctx.get('Accept-Encoding'))) return body;
  ctx.set('Content-Encoding', 'gzip');
  return through(body, zlib.createGzip({ level: GZIP_LEVEL }));
}

/** Sends `body` as the answer; a failure in it cuts the connection (before Koa, which would leave it hanging). */
export function sendStream(ctx: AppContext, body: Readable): void {
  body.once('error', () => ctx.res.destroy());
  ctx.body = body;
}

/** RFC 9530: `sha-256=:<base64>:` */
const contentDigest = (hash: Hash) => `sha-256=:${hash.digest('base64')}:`;

/**
 * `body` passed through while its SHA-256 is taken, sent as an RFC 9530 Content-Digest trailer
 * after the last byte (announced in the Trailer header; HTTP/1.1 chunked answers carry trailers).
 */
export function withDigestTrailer(ctx: AppContext, body: Readable): Readable {
  const hash = createHash('sha256');
  ctx.set('Trailer', 'Content-Digest');
  return through(
    body,
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
      flush(done) {
        ctx.res.addTrailers({ 'Content-Digest': contentDigest(hash) });
        done();
      },
    }),
  );
}

/** The Content-Digest of bytes at hand. */
export const bytesDigest = (bytes: Buffer): string => contentDigest(createHash('sha256').update(bytes));

/** Reads `body` to its end: its length and Content-Digest, what a HEAD answers in headers. */
export async function digestOf(body: Readable): Promise<{ length: number; digest: string }> {
  const hash = createHash('sha256');
  let length = 0;
  for await (const chunk of body) {
    hash.update(chunk as Buffer);
    length += (chunk as Buffer).length;
  }
  return { length, digest: contentDigest(hash) };
}
