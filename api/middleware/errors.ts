// Every error as the contract's {error, message, status}. Logging happens on the app's 'error'
// event (api/app.ts), only for unexpected errors, never into the response.
import type Koa from 'koa';
import { ApiError, notFound, toApiError } from '../errors.js';

/** An answer no route gave: the router's bare 404, or its 405 for a method a path does not take (Allow is already set). */
export function checkAnswered(ctx: Koa.Context): void {
  if (ctx.body !== undefined && ctx.body !== '') return;
  if (ctx.status === 404) throw notFound(`No such endpoint: ${ctx.method.slice(0, 20)} ${ctx.path.slice(0, 100)}. See GET /v1/openapi.json.`);
  if (ctx.status === 405 || ctx.status === 501) {
    throw new ApiError(405, 'method_not_allowed', `${ctx.path.slice(0, 100)} does not take ${ctx.method.slice(0, 20)}; it takes ${ctx.response.get('Allow') || 'other methods'}. See GET /v1/openapi.json.`);
  }
}

/** Renders an error as the answer: its status and headers, and {error, message, status}. */
export function renderError(ctx: Koa.Context, err: unknown): void {
  const apiError = toApiError(err);
  ctx.status = apiError.status;
  for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
  ctx.body = { error: apiError.code, message: apiError.message, status: apiError.status };
  if (apiError.status >= 500 && apiError.code !== 'service_unavailable') ctx.app.emit('error', err, ctx);
  else if (apiError.code === 'service_unavailable') ctx.app.emit('unavailable', err, ctx);
}
