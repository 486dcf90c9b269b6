// The API is this middleware list, in this order.
import bodyParser from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import type { AppDeps, AppState } from './context.js';
import { admit } from './middleware/auth.js';
import { envelope } from './middleware/envelope.js';
import { bodyError } from './middleware/errors.js';
import { observeRequests } from './middleware/metrics.js';
import { mountOpenApi } from './routes/openapi.js';
import { memoisedRouting } from './routing.js';
import { operations, routeModules } from './routes/index.js';
import { serveWeb, webRoute } from './web.js';


const HAS_BODY = ['POST', 'PUT', 'PATCH', 'DELETE'];
/** A connection's errors once the answer has begun that mean the client went away (a download cancelled): no fault of ours. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Whether a request carries a body: a length over zero, or chunks. */
function sendsBody(req: Koa.Request['req']): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * The JSON body parser, with every failure of its own (not JSON, too large, a Content-Encoding
 * that does not decode, a body cut short) a 400 validation_error: nothing a client sends as a
 * body is a server error. A body of another type is refused too: left unread, its fields (a new
 * key's label) would be dropped without a word.
 */
function readBody(parse: Koa.Middleware): Koa.Middleware<AppState> {
  // not async: a request without a body passes straight on, without a promise of its own
  return function readBody(ctx, next) {
    if (!HAS_BODY.includes(ctx.method)) return next();
    return Promise.resolve(parse(ctx as unknown as Koa.ParameterizedContext, async () => {})).then(
      () => {
        if (sendsBody(ctx.req) && (ctx.request as { rawBody?: string }).rawBody === undefined) throw bodyError({ status: 415 });
        return next();
      },
      (err: unknown) => {
        throw bodyError(err);
      },
    );
  };
}

export function createApp(deps: AppDeps): Koa<AppState> {
  const router = new Router<AppState>();
  for (const m of routeModules) m.mount(router, deps);
  // for the document: health is never limited; the web pages' endpoints have a per-minute limit of their own, no monthly quota
  mountOpenApi(router, deps, operations);

  const routing = memoisedRouting(router, operations);

  // behind N proxies: the client is the address the first of them saw, the N-th entry from the right
  const app = new Koa<AppState>({ proxy: deps.config.trustProxyHops > 0, maxIpsCount: deps.config.trustProxyHops });
  // simulated data is never passed off as real: every answer says so in a header
  const simulated = () => deps.config.market === 'simulated' || deps.snapshot.market === 'simulated';
  // counted under the route's template, or the web page's; anything else under one name
  const observe = deps.observer && observeRequests(deps.observer, (path, method) => routing.routeOf(path, method) ?? webRoute(path));
  app.use(envelope({ metrics: deps.metrics, log: deps.log, deadlineMs: deps.config.apiDeadlineMs, simulated, observe }));
  app.use(serveWeb()); // the web pages and their assets (web/dist): before keys and limits, which are the API's
  app.use(admit({ keys: deps.keys, gatewaySecret: deps.config.gatewaySecret, limiter: deps.limiter, routing }));
  app.use(readBody(bodyParser({ enableTypes: ['json'], jsonLimit: '16kb', encoding: 'utf-8', parsedMethods: HAS_BODY })));
  app.use(routing.routes);
  app.use(router.allowedMethods()); // 405 (or 501) with Allow: the envelope puts it in the error shape

  app.on('error', (err: unknown, ctx?: { state?: AppState }) => {
    const e = err as { headerSent?: boolean; code?: string } | null;
    if (e?.headerSent && CLIENT_GONE.has(e.code ?? '')) {
      deps.log.info({ requestId: ctx?.state?.requestId, code: e.code }, 'client left before the answer ended');
      return;
    }
    deps.log.error({ err, requestId: ctx?.state?.requestId }, 'request failed');
  });
  app.on('unavailable', (err: unknown, ctx?: { state?: AppState }) => {
    deps.log.warn({ err: (err as Error)?.message, requestId: ctx?.state?.requestId }, 'answered 503');
  });
  return app;
}
