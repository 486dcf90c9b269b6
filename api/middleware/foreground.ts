// A request is in the foreground (lib/foreground.ts) from when it has arrived whole (its body read:
// a client sending slowly is not yet work for this process) until its answer is made, or until the
// route says the rest is bulk work (ctx.state.leaveForeground); the envelope leaves it at the end.
// Not async: it adds no promise of its own to a request.
import type Koa from 'koa';
import { enterForeground } from '../../lib/foreground.js';
import type { AppState } from '../context.js';

export function inForeground(): Koa.Middleware<AppState> {
  return function inForeground(ctx, next) {
    ctx.state.leaveForeground = enterForeground();
    return next();
  };
}
