// Who is calling, and whether they may. X-API-Key, or, when GATEWAY_SECRET is set, a marketplace
// gateway that proves itself with X-RapidAPI-Proxy-Secret and names its user and plan.
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppState, Customer } from '../context.js';
import { ApiError } from '../errors.js';
import type { KeyStore } from '../keys/store.js';
import type { RateLimiter } from '../limits/limiter.js';
import { accessOf, featureOf, requireTier } from '../operation.js';
import type { Routing } from '../routing.js';
import type { Tier } from '../../lib/tiers.js';

const GATEWAY_PLANS: Record<string, Tier> = { BASIC: 'free', PRO: 'builder', ULTRA: 'professional', MEGA: 'enterprise' };

function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

function gatewayCustomer(ctx: Koa.Context, secret: string | undefined): Customer | null {
  const given = ctx.get('X-RapidAPI-Proxy-Secret');
  if (!secret || !given || !sameSecret(given, secret)) return null;
  const user = ctx.get('X-RapidAPI-User').slice(0, 128);
  if (!user) return null;
  const plan = ctx.get('X-RapidAPI-Subscription').toUpperCase();
  return { id: `gateway:${user}`, tier: GATEWAY_PLANS[plan] ?? 'free', name: user };
}

/**
 * Who is calling, and whether they may, as the operation asked for says (api/operation.ts: its
 * tier, or how it is limited without a key): the caller (a key's customer or a gateway user) in
 * ctx.state.customer; the request counted against their per-minute limit and monthly quota (the
 * rate-limit headers set; by address at the free tier's rate without a valid key, which also slows
 * down key guessing), or against the per-address limit of the public records, or none; then 401
 * without a valid key where one is needed, and 403 below the operation's tier. A path or method
 * that no route serves is counted as an anonymous request and goes on to the router's 404 or 405:
 * a wrong address is wrong whoever asks. One middleware for all of it: api/middleware/envelope.ts.
 */
export function admit(opts: {
  readonly keys: KeyStore;
  readonly gatewaySecret: string | undefined;
  readonly limiter: RateLimiter;
  readonly routing: Pick<Routing, 'operationOf'>;
}): Koa.Middleware<AppState> {
  return async function admit(ctx, next) {
    const op = opts.routing.operationOf(ctx.path, ctx.method);
    const access = op ? accessOf(op) : ({ key: null, limit: 'anonymous' } as const);
    const apiKey = ctx.get('X-API-Key');
    // compared as sent: Node's parser has already taken off the spaces and tabs around a header's
    // value (RFC 9110), and nothing else around a key (a no-break space) is part of the value
    const customer = apiKey ? await opts.keys.authenticate(apiKey) : gatewayCustomer(ctx as unknown as Koa.Context, opts.gatewaySecret);
    if (customer) ctx.state.customer = customer;
    if (access.key === null && access.limit === 'public') {
      ctx.set(await opts.limiter.consumePublic(ctx.ip));
    } else if (access.key !== null || access.limit === 'anonymous') {
      const { headers } = await opts.limiter.consume(customer ?? { id: `ip:${ctx.ip}`, tier: 'free' });
      ctx.set(headers);
    }
    if (op && access.key !== null) {
      if (!customer) throw new ApiError(401, 'unauthorized', apiKey ? 'The API key is invalid or revoked.' : 'Missing API key: send it in the X-API-Key header.');
      requireTier(ctx, access.key, featureOf(op));
    }
    await next();
  };
}
