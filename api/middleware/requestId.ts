// Gives every request an id: in ctx.state, in the X-Request-Id header, in every meta and log line.
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppState } from '../context.js';

export function requestId(): Koa.Middleware<AppState> {
  return async function requestId(ctx, next) {
    ctx.state.requestId = `req_${crypto.randomBytes(9).toString('base64url')}`;
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
