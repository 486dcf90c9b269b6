// Counts every request against the caller's per-minute limit and monthly quota and sets the
// rate-limit headers (they stay on error responses rendered further out). Callers without a valid
// key are limited by address at the free tier's rate, which also slows down key guessing.
// GET /v1/health is not limited.
import type Koa from 'koa';
import type { AppState } from '../context.js';
import type { RateLimiter } from '../limits/limiter.js';

export function rateLimit(limiter: RateLimiter, unlimitedPaths: ReadonlySet<string>): Koa.Middleware<AppState> {
  return async function rateLimit(ctx, next) {
    if (unlimitedPaths.has(ctx.path)) return next();
    const subject = ctx.state.customer ?? { id: `ip:${ctx.ip}`, tier: 'free' as const };
    const { headers } = await limiter.consume(subject);
    ctx.set(headers);
    await next();
  };
}
