// Gives every request an id: in ctx.state, in the X-Request-Id header, in every meta and log line.
// Unique without a random draw per request: a random prefix per process (12 characters, 72 bits)
// and a counter, so ids from several API processes never collide, and each costs no system call.
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppState } from '../context.js';

export function requestId(): Koa.Middleware<AppState> {
  const prefix = `req_${crypto.randomBytes(9).toString('base64url')}`;
  let n = 0;
  return async function requestId(ctx, next) {
    ctx.state.requestId = `${prefix}${(n++).toString(36)}`;
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
