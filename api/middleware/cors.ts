// Cross-origin access for browsers: any origin may call the API (keys travel in a header, never in
// cookies), and read the rate-limit, quota, request-id and data-label headers. The CORS headers go
// only on requests that carry an Origin, which is every request a browser makes across origins:
// a server-to-server caller has no use for them, and they would be a third of each small answer's
// headers. Vary: Origin (set on every answer by api/middleware/envelope.ts) tells caches the two
// kinds of answer apart.
import type Koa from 'koa';

const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
const EXPOSE_HEADERS = [
  'X-Afrates-Data', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy',
  'Retry-After', 'X-Request-Id', 'X-Quota-Limit', 'X-Quota-Remaining', 'Link',
  'X-Has-More', 'X-Next-Cursor', 'X-Export-Complete', 'Content-Disposition', 'Content-Digest',
].join(', ');
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * Sets the CORS headers of a request with an Origin. A preflight (OPTIONS with
 * Access-Control-Request-Method) is answered here, 204: returns true, and nothing else runs.
 */
export function applyCors(ctx: Koa.Context): boolean {
  if (!ctx.get('Origin')) return false;
  ctx.set('Access-Control-Allow-Origin', '*');
  if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
    ctx.set('Access-Control-Allow-Methods', ALLOW_METHODS);
    const asked = ctx.get('Access-Control-Request-Headers');
    if (asked) ctx.set('Access-Control-Allow-Headers', asked);
    ctx.set('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
    ctx.status = 204;
    return true;
  }
  ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
  return false;
}
