// The API is this middleware list, in this order.
import Router from '@koa/router';
import Koa from 'koa';
import type { AppDeps, AppState } from './context.js';
import { admit } from './middleware/auth.js';
import { concurrencyShares } from './middleware/concurrency.js';
import { envelope } from './middleware/envelope.js';
import { readBody } from './middleware/body.js';
import { inForeground } from './middleware/foreground.js';
import { observeRequests } from './middleware/metrics.js';
import { mountOpenApi } from './routes/openapi.js';
import { memoisedRouting } from './routing.js';
import { operations, routeModules } from './routes/index.js';
import { serveWeb, webRoute } from './web.js';


/** A connection's errors once the answer has begun that mean the client went away (a download cancelled): no fault of ours. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

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
  app.use(concurrencyShares(deps.limiter.inFlight, routing)); // each customer's share of this process: 429 past it
  app.use(readBody()); // JSON bodies, bounded in size and depth (api/middleware/body.ts)
  app.use(inForeground()); // small requests before bulk work (lib/foreground.ts)
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
