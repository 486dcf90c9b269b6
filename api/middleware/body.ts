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

/**
 * What is wrong with a body's structure before it is parsed: nesting past `max`, or a name given
 * twice in one object. JSON.parse keeps a repeated name's last value without a word, where a proxy
 * or gateway in front may have judged the first. Null when neither; broken JSON is JSON.parse's to say.
 */
function structureProblem(text: string, max: number): string | null {
  const open: (Set<string> | null)[] = []; // per open bracket: an object's names so far, or null for an array
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      // to the string's end: a backslash escapes the character after it
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      if (!nameNext) continue;
      nameNext = false;
      let name: string;
      try {
        name = JSON.parse(text.slice(start, i + 1)) as string; // its escapes read: "\u0065mail" is "email"
      } catch {
        return null;
      }
      const names = open.at(-1)!;
      if (names.has(name)) return `the request body gives '${name.slice(0, 40)}' twice in one object`;
      names.add(name);
    } else if (c === 0x7b || c === 0x5b) {
      if (open.push(c === 0x7b ? new Set() : null) > max) return `the request body is nested too deeply (at most ${max} levels of arrays and objects)`;
      nameNext = c === 0x7b;
    } else if (c === 0x5d || c === 0x7d) {
      open.pop();
      nameNext = false;
    } else if (c === 0x2c) nameNext = open.at(-1) instanceof Set;
  }
  return null;
}

const invalid = (message: string) => new ApiError(400, 'validation_error', message);

/**
 * A body's text as JSON: an object or array (an empty body is {}), no deeper than MAX_BODY_DEPTH,
 * no name twice in one object, no `__proto__` key (it would become an object's prototype wherever
 * the body is copied).
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
  const problem = structureProblem(text, MAX_BODY_DEPTH);
  if (problem) throw invalid(problem);
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
