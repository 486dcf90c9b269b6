// Which route serves a request, looked up once per method and path. @koa/router, on every request,
// checks the host, tests every route's pattern and composes the matched route into a new chain: a
// real share of the CPU a live rate costs (bench/README.md, api.bench.ts). A path without
// parameters meets the same one-handler route every time, so that handler is found once and called
// directly; a path with parameters, several layers, or no route at all goes through the router's
// own dispatch (its params, its 404 and 405 via allowedMethods). The same lookup names the route a
// request is counted under in the service's metrics: its template, never the path a client sent.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppState } from './context.js';
import type { Operation } from './operation.js';

interface Found {
  /** the operation it is (what says who may call it) */
  readonly operation: Operation | undefined;
  /** the handler to call directly, or null: the router's own dispatch */
  readonly handler: Router.Middleware<AppState> | null;
  /** the template of the route serving it (or, for a 405, of the route at that path); null: none */
  readonly route: string | null;
}

/** The template of the last route (not router.use middleware) among `layers`. */
function template(layers: readonly Router.Layer[]): string | null {
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!;
    if (layer.methods.length > 0 && typeof layer.path === 'string') return layer.path;
  }
  return null;
}

export interface Routing {
  /** The operation a request is for, when a route serves it. */
  operationOf(path: string, method: string): Operation | undefined;
  /** The template of the route at this path (`/v1/certificates/:pair/:timestamp`), or null. */
  routeOf(path: string, method: string): string | null;
  readonly routes: Koa.Middleware<AppState>;
}

export function memoisedRouting(router: Router<AppState>, operations: readonly Operation[]): Routing {
  const byRoute = new Map(operations.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op]));
  const found = new Map<string, Found>();
  // a request asks three times (admit, its share, the router): the last answer is kept apart
  let lastPath = '';
  let lastMethod = '';
  let lastFound: Found | undefined;
  const lookup = (path: string, method: string): Found => {
    if (lastFound !== undefined && path === lastPath && method === lastMethod) return lastFound;
    const key = `${method} ${path}`;
    let f = found.get(key);
    if (f === undefined) {
      const { route, pathAndMethod, path: atPath } = router.match(path, method);
      const only = pathAndMethod.length === 1 ? pathAndMethod[0]! : null;
      const asked = method === 'HEAD' ? 'GET' : method;
      const operation = route ? pathAndMethod.map((l) => byRoute.get(`${asked} ${l.path}`)).find((op) => op !== undefined) : undefined;
      f = {
        operation,
        handler: only && only.paramNames.length === 0 && only.stack.length === 1 ? (only.stack[0] as Router.Middleware<AppState>) : null,
        route: template(pathAndMethod) ?? template(atPath),
      };
      if (found.size >= 10_000) found.clear(); // bounded: paths carry parameters, and whatever a client sends
      found.set(key, f);
    }
    lastPath = path;
    lastMethod = method;
    lastFound = f;
    return f;
  };
  const dispatch = router.routes() as unknown as Koa.Middleware<AppState>;
  return {
    operationOf: (path, method) => lookup(path, method).operation,
    routeOf: (path, method) => lookup(path, method).route,
    routes(ctx, next) {
      const { handler } = lookup(ctx.path, ctx.method);
      return handler ? handler(ctx as Parameters<typeof handler>[0], next) : dispatch(ctx, next);
    },
  };
}
