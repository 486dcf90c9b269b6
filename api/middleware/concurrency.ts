// Each customer's share of an API process, taken per request (the counts: api/limits/concurrency.ts):
// one slot, or the slots its operation says it takes (a page of candles: one per 2,500 candles; a
// page of more than one slot is bulk work, one at a time per customer).
// A request holds its slots until its route is done and, for an answer made as it is sent, until
// that is sent (or the client left); a live stream only while it is opened (the stream caps bound
// those).
import type Koa from 'koa';
import type { AppState } from '../context.js';
import { ApiError } from '../errors.js';
import { PAGE_SLOT_CANDLES, type InFlight, type Refused } from '../limits/concurrency.js';
import type { Routing } from '../routing.js';
import { TIER_RULES, tierLabel, type Tier } from '../../lib/tiers.js';

function refusal(tier: Tier, share: number, { held, asked, refusedFor, retryAfter }: Refused): ApiError {
  const slots = PAGE_SLOT_CANDLES.toLocaleString('en-US');
  if (refusedFor === 'bulk') {
    // its own policy: the share may have room, and a client reading "concurrency" would retry at once
    return new ApiError(429, 'rate_limit_exceeded', `At most one page of more than ${slots} candles at once per account; retry when the one in flight has been answered.`, {
      'Retry-After': String(retryAfter),
      'RateLimit-Policy': '"bulk";q=1',
      RateLimit: `"bulk";r=0;t=${retryAfter}`,
    });
  }
  // pages weighed by their size are named when they are why: this one, or those in flight
  const weighed = asked > 1 || held.slots > held.requests;
  const why = weighed ? ` A page of candles counts as one request per ${slots} candles, up to all ${share}: this one as ${asked}, with ${held.slots} taken.` : '';
  return new ApiError(429, 'rate_limit_exceeded', `At most ${share} requests at once per account on the ${tierLabel(tier)} tier; retry when one has been answered.${why}`, {
    'Retry-After': String(retryAfter),
    // the IETF headers name the "concurrency" policy, so a client can tell it from a spent minute
    'RateLimit-Policy': `"concurrency";q=${share}`,
    RateLimit: `"concurrency";r=${share - held.slots};t=${retryAfter}`,
  });
}

/** The customer's (ctx.state.customer, set by admit) share; requests without a customer are bounded by their per-address limits. */
export function concurrencyShares(inFlight: InFlight, routing: Pick<Routing, 'operationOf'>): Koa.Middleware<AppState> {
  return async function share(ctx, next) {
    const customer = ctx.state.customer;
    if (!customer) return next();
    const { concurrent } = TIER_RULES[customer.tier];
    const slots = routing.operationOf(ctx.path, ctx.method)?.slots?.(ctx.query, customer.tier) ?? 1;
    const release = inFlight.enter(customer.id, slots, concurrent);
    if (typeof release !== 'function') throw refusal(customer.tier, concurrent, release);
    try {
      await next();
    } finally {
      // The route is done (an answer given early, the deadline's 503, left it running till now).
      // A body made as it is sent (a stream, not a live stream's) holds the slots until the
      // connection is done with it; any other is written as soon as this returns.
      const body = ctx.body as { pipe?: unknown } | null | undefined;
      const sending = typeof body?.pipe === 'function' && ctx.response.type !== 'text/event-stream' && !(ctx.res.writableFinished || ctx.res.destroyed);
      if (sending) ctx.res.once('close', release);
      else release();
    }
  };
}
