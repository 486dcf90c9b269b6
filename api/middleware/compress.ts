// gzip for JSON bodies over 2 KB, when the client accepts it, at levels chosen for latency. Bodies
// up to 64 KB are compressed right here at level 1 (about 8 us for a markets answer: cheaper than a
// hop to zlib's thread pool and back, and half of level 4's time for a few more bytes); larger ones
// in the thread pool at level 4 (within a few percent of level 9's size on this JSON at a fraction
// of the time), so a 3 MB page never stalls the event loop. Accept-Encoding is read as RFC 9110 says: `gzip;q=0` or
// `*;q=0` refuse it, and an unknown or malformed header just means identity.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type Koa from 'koa';
import type { AppState } from '../context.js';

const gzip = promisify(zlib.gzip);
const THRESHOLD_BYTES = 2_048;
const INLINE_MAX_BYTES = 65_536;
export const GZIP_LEVEL = 4;
const INLINE_GZIP_LEVEL = 1;

/** Whether an Accept-Encoding header allows gzip. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
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

export function compress(): Koa.Middleware<AppState> {
  return async function compress(ctx, next) {
    ctx.vary('Accept-Encoding');
    await next();
    const body: unknown = ctx.body;
    if (typeof body !== 'string' && !Buffer.isBuffer(body)) return;
    if (ctx.method === 'HEAD' || ctx.response.get('Content-Encoding') || !acceptsGzip(ctx.get('Accept-Encoding'))) return;
    // measured before it is copied: most answers are small and leave as they are
    if ((typeof body === 'string' ? Buffer.byteLength(body) : body.length) < THRESHOLD_BYTES) return;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    ctx.body = bytes.length <= INLINE_MAX_BYTES ? zlib.gzipSync(bytes, { level: INLINE_GZIP_LEVEL }) : await gzip(bytes, { level: GZIP_LEVEL });
    ctx.set('Content-Encoding', 'gzip');
  };
}
