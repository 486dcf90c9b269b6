// What every answer gets, in the order it happens: an id, the simulated-data label, the headers
// every answer has (api/middleware/headers.ts), the Host checked, CORS headers, the handler within its deadline, errors rendered in the contract's shape, JSON serialised once,
// gzip, then the request's metrics and access log line. One middleware rather than one for each:
// every async middleware frame adds a promise, a closure and a turn of the microtask queue to each
// request, a real share of an answer from memory (docs/decisions.md, "The API's middleware").
import type Koa from 'koa';
import type { Logger } from '../../lib/log.js';
import type { AppState } from '../context.js';
import { compressBody } from './compress.js';
import { applyCors } from './cors.js';
import { withinDeadline } from './deadline.js';
import { ApiError } from '../errors.js';
import { checkAnswered, renderError } from './errors.js';
import { setAnswerHeaders, setErrorHeaders } from './headers.js';
import { serializeJson } from './json.js';
import { recordRequest, type ObserveRequest, type RequestMetrics } from './metrics.js';
import { requestIds } from './requestId.js';

const VARY = 'Accept-Encoding, Origin';
const notInForeground = () => {};

/**
 * RFC 9112 (3.2): an HTTP/1.1 request has exactly one Host header, and no request has two (they
 * could name two different sites to us and to a proxy in front). Node's own check, for a missing
 * one, answers outside the error shape: it is off (api/server.ts) and made here.
 */
function checkHost(req: Koa.Request['req']): void {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.length === 4 && req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) throw new ApiError(400, 'validation_error', 'The request has more than one Host header.');
  if (hosts === 0 && req.httpVersion === '1.1') throw new ApiError(400, 'validation_error', 'The request has no Host header (HTTP/1.1 requires one).');
}

export interface EnvelopeOptions {
  readonly metrics: RequestMetrics;
  readonly log: Logger;
  readonly deadlineMs: number;
  /** Whether the data served is the simulated market's (every answer then says so). */
  readonly simulated: () => boolean;
  /** The service's metrics hear of every answer (when they are on). */
  readonly observe?: ObserveRequest;
}

export function envelope(opts: EnvelopeOptions): Koa.Middleware<AppState> {
  const nextId = requestIds();
  return async function envelope(ctx, next) {
    const started = process.hrtime.bigint();
    ctx.state.leaveForeground = notInForeground; // until the request has arrived whole (api/middleware/foreground.ts)
    ctx.state.requestId = nextId();
    // straight onto the response (nothing has been sent yet): Koa's ctx.set would check that first
    const res = ctx.res;
    res.setHeader('X-Request-Id', ctx.state.requestId);
    if (opts.simulated()) res.setHeader('X-Afrates-Data', 'simulated');
    res.setHeader('Vary', VARY); // gzip by Accept-Encoding; CORS headers only with an Origin
    setAnswerHeaders(ctx);
    try {
      try {
        checkHost(ctx.req);
        if (!applyCors(ctx)) {
          await withinDeadline(next(), opts.deadlineMs, ctx.req);
          checkAnswered(ctx);
        }
        // inside: a body that cannot be serialised or compressed is an error like any other
        serializeJson(ctx);
        await compressBody(ctx);
      } catch (err) {
        renderError(ctx, err);
        setErrorHeaders(ctx);
        serializeJson(ctx); // {error, message, status}: small, never compressed
      }
    } finally {
      ctx.state.leaveForeground();
      // Answered before the client sent all of its body (a slow upload at the deadline, a 401 to
      // an upload): the rest would be read as this connection's next request, or run into Node's
      // request timeout and an unasked-for 408 after this answer. The connection ends with it.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      recordRequest(opts.metrics, opts.log, ctx, started, opts.observe);
    }
  };
}
