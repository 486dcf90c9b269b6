// Serialises JSON bodies once, here, so compression (which needs the length) doesn't stringify
// the body a second time just to measure it.
import type Koa from 'koa';
import type { AppState } from '../context.js';

export function serializeJson(): Koa.Middleware<AppState> {
  return async function serializeJson(ctx, next) {
    await next();
    const body: unknown = ctx.body;
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function') {
      ctx.body = JSON.stringify(body);
      ctx.type = 'application/json';
    }
  };
}
