// Each customer's share of an API process, taken per request (the counts: api/limits/concurrency.ts).
// A request holds its slot until its route is done and its answer is sent (or the client left),
// whichever is later; a live stream only while it is opened (the stream caps bound those).
import type Koa from 'koa';
import type { AppState } from '../context.js';
import { ApiError } from '../errors.js';
import type { InFlight } from '../limits/concurrency.js';
import { TIER_RULES, tierLabel } from '../../lib/tiers.js';

/** Retry-After of a refused request, in seconds: a share frees up as soon as a request ends. */
const RETRY_AFTER_SECONDS = 1;

/** The customer's (ctx.state.customer, set by admit) share; requests without a customer are bounded by their per-address limits. */
export function concurrencyShares(inFlight: InFlight): Koa.Middleware<AppState> {
  return async function share(ctx, next) {
    const customer = ctx.state.customer;
    if (!customer) return next();
    const { concurrent } = TIER_RULES[customer.tier];
    const release = inFlight.enter(customer.id, concurrent, () =>
      new ApiError(429, 'rate_limit_exceeded', `At most ${concurrent} requests at once per account on the ${tierLabel(customer.tier)} tier; retry when one has been answered.`, {
        'Retry-After': String(RETRY_AFTER_SECONDS),
        // the IETF headers name the "concurrency" policy, so a client can tell it from a spent minute
        'RateLimit-Policy': `"concurrency";q=${concurrent}`,
        RateLimit: `"concurrency";r=0;t=${RETRY_AFTER_SECONDS}`,
      }),
    );
    // released when both the route is done and the answer is sent: an answer given early (the
    // deadline's 503) leaves the route's work still running, and a streamed body is still being made
    let waiting = 2;
    const done = () => {
      if (--waiting === 0) release();
    };
    if (ctx.res.writableFinished || ctx.res.destroyed) done();
    else ctx.res.once('close', done);
    try {
      await next();
    } finally {
      done();
      if (ctx.response.type === 'text/event-stream') release(); // a stream's slot ends with its opening
    }
  };
}
