// Placed first: renders every error as {error, message, status}. Logging happens on the app's
// 'error' event (api/app.ts), only for unexpected errors, never into the response.
import type Koa from 'koa';
import type { AppState } from '../context.js';
import { ApiError, notFound, toApiError } from '../errors.js';

export function renderErrors(): Koa.Middleware<AppState> {
  return async function renderErrors(ctx, next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw notFound(`No such endpoint: ${ctx.method} ${ctx.path}. See GET /v1/openapi.json.`);
      }
    } catch (err) {
      const apiError = toApiError(err instanceof ApiError ? err : bodyParserError(err) ?? err);
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
      ctx.body = { error: apiError.code, message: apiError.message, status: apiError.status };
      if (apiError.status >= 500 && apiError.code !== 'service_unavailable') ctx.app.emit('error', err, ctx);
      else if (apiError.code === 'service_unavailable') ctx.app.emit('unavailable', err, ctx);
    }
  };
}

// @koa/bodyparser throws http-errors (status 400/413/415) for bodies it cannot read.
function bodyParserError(err: unknown): ApiError | null {
  const e = err as { status?: number; type?: string } | null;
  if (!e || typeof e.status !== 'number' || e.status >= 500) return null;
  if (e.status === 413) return new ApiError(400, 'validation_error', 'the request body is too large');
  if (e.status === 415) return new ApiError(400, 'validation_error', 'the request body must be JSON (Content-Type: application/json)');
  if (e.status === 400) return new ApiError(400, 'validation_error', 'the request body is not valid JSON');
  return null;
}
