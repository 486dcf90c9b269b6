// The request body: read as text (at most 16 KB once decoded, JSON media types only, identity,
// gzip or deflate), then parsed here, within bounds of our own, into ctx.request.body. Every
// failure is a 400 validation_error: nothing a client sends as a body is a server error.
import bodyParser from '@koa/bodyparser';
import type Koa from 'koa';
import type { AppState } from '../context.js';
import { ApiError } from '../errors.js';

/** Methods whose requests may carry a body. */
export const HAS_BODY = ['POST', 'PUT', 'PATCH', 'DELETE'];
/** The largest body read, once decoded. */
const MAX_BODY = '16kb';
/**
 * The deepest nesting of arrays and objects a body may have. No route's body goes past 2; a
 * deeper one is refused before JSON.parse, so nothing after it (the clone, the schema check) can
 * recurse out of stack on thousands of levels.
 */
export const MAX_BODY_DEPTH = 16;

/** The media types read as JSON (@koa/bodyparser's JSON list, read by it as text and parsed here). */
const JSON_TYPES = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json', 'application/scim+json'];

/** Whether a request carries a body: a length over zero, or chunks. */
function sendsBody(req: Koa.Request['req']): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** The deepest nesting of brackets and braces outside strings, stopping as soon as it passes `max`. */
function depthOver(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const invalid = (message: string) => new ApiError(400, 'validation_error', message);

/**
 * A body's text as JSON: an object or array (an empty body is {}), no deeper than MAX_BODY_DEPTH,
 * no `__proto__` key (it would become an object's prototype wherever the body is copied).
 */
export function parseJsonBody(text: string): unknown {
  if (text === '') return {};
  if (!/^[\x20\x09\x0a\x0d]*[[{]/.test(text)) {
    // valid JSON, but not an object (`null`, a number, a string), or not JSON at all
    try {
      JSON.parse(text);
    } catch {
      throw unreadable();
    }
    throw invalid('the request body must be a JSON object');
  }
  if (depthOver(text, MAX_BODY_DEPTH)) throw invalid(`the request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels of arrays and objects)`);
  try {
    return JSON.parse(text, (key, value: unknown) => {
      if (key === '__proto__') throw invalid("the request body may not have a '__proto__' key");
      return value;
    });
  } catch (err) {
    throw err instanceof ApiError ? err : unreadable();
  }
}

const unreadable = () => invalid('the request body could not be read: it must be JSON, complete, and encoded as its Content-Encoding says');

/** What reading the body threw, as the client's error: too large, not JSON, or unreadable. */
export function bodyError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { status?: number } | null;
  if (e?.status === 413) return invalid(`the request body is too large (at most ${MAX_BODY.replace('kb', ' KB')})`);
  if (e?.status === 415) return invalid('the request body must be JSON (Content-Type: application/json), in identity, gzip or deflate encoding');
  return unreadable();
}

/**
 * The body middleware. A body of another media type is refused too: left unread, its fields (a
 * new key's label) would be dropped without a word.
 */
export function readBody(): Koa.Middleware<AppState> {
  // JSON types read as text (every other type left unread): the parse is ours, with its bounds
  const read = bodyParser({ enableTypes: ['text'], extendTypes: { text: JSON_TYPES }, textLimit: MAX_BODY, encoding: 'utf-8', parsedMethods: HAS_BODY }) as unknown as Koa.Middleware;
  // not async: a request without a body passes straight on, without a promise of its own
  return function readBody(ctx, next) {
    if (!HAS_BODY.includes(ctx.method)) return next();
    return Promise.resolve(read(ctx as unknown as Koa.ParameterizedContext, async () => {})).then(
      () => {
        const request = ctx.request as { body?: unknown; rawBody?: string };
        if (request.rawBody === undefined) {
          if (sendsBody(ctx.req)) throw bodyError({ status: 415 });
          request.body = {};
        } else request.body = parseJsonBody(request.rawBody);
        return next();
      },
      (err: unknown) => {
        throw bodyError(err);
      },
    );
  };
}
