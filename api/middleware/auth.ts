// Who is calling. X-API-Key, or, when GATEWAY_SECRET is set, a marketplace gateway that proves
// itself with X-RapidAPI-Proxy-Secret and names its user and plan. Sets ctx.state.customer;
// requireKey (below) turns its absence into 401 for every endpoint that needs a key.
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { AppState, Customer } from '../context.js';
import { ApiError } from '../errors.js';
import type { KeyStore } from '../keys/store.js';
import type { Tier } from '../tiers.js';

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

export function authenticate(keys: KeyStore, gatewaySecret: string | undefined): Koa.Middleware<AppState> {
  return async function authenticate(ctx, next) {
    const apiKey = ctx.get('X-API-Key');
    const customer = apiKey ? await keys.authenticate(apiKey.trim()) : gatewayCustomer(ctx as unknown as Koa.Context, gatewaySecret);
    if (customer) ctx.state.customer = customer;
    await next();
  };
}

/**
 * 401 for a request without a valid key, to a route that needs one. A path or method that no
 * route serves goes on to the router's 404 or 405: a wrong address is wrong whoever asks.
 */
export function requireKey(publicPaths: ReadonlySet<string>, isRoute: (path: string, method: string) => boolean): Koa.Middleware<AppState> {
  return async function requireKey(ctx, next) {
    if (!ctx.state.customer && !publicPaths.has(ctx.path) && isRoute(ctx.path, ctx.method)) {
      throw new ApiError(401, 'unauthorized', ctx.get('X-API-Key') ? 'The API key is invalid or revoked.' : 'Missing API key: send it in the X-API-Key header.');
    }
    await next();
  };
}
