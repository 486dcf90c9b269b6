// The API is this middleware list, in this order.
import bodyParser from '@koa/bodyparser';
import cors from '@koa/cors';
import Router from '@koa/router';
import Koa from 'koa';
import type { AppDeps, AppState } from './context.js';
import { authenticate, requireKey } from './middleware/auth.js';
import { compress } from './middleware/compress.js';
import { deadline } from './middleware/deadline.js';
import { bodyError, renderErrors } from './middleware/errors.js';
import { serializeJson } from './middleware/json.js';
import { measure } from './middleware/metrics.js';
import { rateLimit } from './middleware/rateLimit.js';
import { requestId } from './middleware/requestId.js';
import { mountOpenApi } from './routes/openapi.js';
import { operations, routeModules } from './routes/index.js';
import { serveWeb } from './web.js';

// the web pages' public endpoints have a per-address limit of their own (api/public-limit.ts)
const PUBLIC_WEB = ['/v1/board', '/v1/board/stream', '/v1/status/public'];
const NO_KEY = new Set(['/v1/health', '/v1/auth/free-key', '/v1/openapi.json', '/v1/certificates/keys', ...PUBLIC_WEB]);
const NOT_LIMITED = new Set(['/v1/health', ...PUBLIC_WEB]);

/** Simulated data is never passed off as real: every response says so in a header. */
function labelSimulated(deps: AppDeps): Koa.Middleware<AppState> {
  return async function labelSimulated(ctx, next) {
    if (deps.config.market === 'simulated' || deps.snapshot.market === 'simulated') ctx.set('X-Afrates-Data', 'simulated');
    await next();
  };
}

/**
 * The JSON body parser, with every failure of its own (not JSON, too large, a Content-Encoding
 * that does not decode, a body cut short) a 400 validation_error: nothing a client sends as a
 * body is a server error.
 */
function readBody(parse: Koa.Middleware): Koa.Middleware<AppState> {
  return async function readBody(ctx, next) {
    try {
      await parse(ctx as unknown as Koa.ParameterizedContext, async () => {});
    } catch (err) {
      throw bodyError(err);
    }
    await next();
  };
}

/** Whether a route serves a method and path: memoised, since it is asked on every request. */
function routeExists(router: Router<AppState>): (path: string, method: string) => boolean {
  const known = new Map<string, boolean>();
  return (path, method) => {
    const key = `${method} ${path}`;
    let exists = known.get(key);
    if (exists === undefined) {
      exists = router.match(path, method).route;
      if (known.size >= 10_000) known.clear(); // bounded: paths carry parameters
      known.set(key, exists);
    }
    return exists;
  };
}

export function createApp(deps: AppDeps): Koa<AppState> {
  const router = new Router<AppState>();
  for (const m of routeModules) m.mount(router, deps);
  // for the document: health is never limited; the web pages' endpoints have a per-minute limit of their own, no monthly quota
  mountOpenApi(router, deps, operations, { notLimited: new Set([...NOT_LIMITED].filter((p) => !PUBLIC_WEB.includes(p))), noMonthlyQuota: new Set(PUBLIC_WEB) });

  // behind N proxies: the client is the address the first of them saw, the N-th entry from the right
  const app = new Koa<AppState>({ proxy: deps.config.trustProxyHops > 0, maxIpsCount: deps.config.trustProxyHops });
  app.use(requestId());
  app.use(labelSimulated(deps));
  app.use(measure(deps.metrics, deps.log));
  app.use(renderErrors());
  app.use(deadline(deps.config.apiDeadlineMs));
  app.use(cors({ allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'], exposeHeaders: ['X-Afrates-Data', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id', 'X-Quota-Limit', 'X-Quota-Remaining'] }));
  app.use(compress());
  app.use(serveWeb()); // the web pages and their assets (web/dist): before keys and limits, which are the API's
  app.use(serializeJson());
  app.use(authenticate(deps.keys, deps.config.gatewaySecret));
  app.use(rateLimit(deps.limiter, NOT_LIMITED));
  app.use(requireKey(NO_KEY, routeExists(router)));
  app.use(readBody(bodyParser({ enableTypes: ['json'], jsonLimit: '16kb', encoding: 'utf-8' })));
  app.use(router.routes());
  app.use(router.allowedMethods()); // 405 (or 501) with Allow: renderErrors puts it in the error shape

  app.on('error', (err: unknown, ctx?: { state?: AppState }) => {
    deps.log.error({ err, requestId: ctx?.state?.requestId }, 'request failed');
  });
  app.on('unavailable', (err: unknown, ctx?: { state?: AppState }) => {
    deps.log.warn({ err: (err as Error)?.message, requestId: ctx?.state?.requestId }, 'answered 503');
  });
  return app;
}
