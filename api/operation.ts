// A route's description, kept beside its handler in each api/routes/<resource>.ts: the one place
// that says who may call it (api/middleware/auth.ts admits by it) and what the OpenAPI document
// (api/routes/openapi.ts) shows of it.
import type { AppContext, AppDeps, AppRouter, PairInfo } from './context.js';
import { ApiError, validationError, type ErrorCode } from './errors.js';
import { timestamp } from '../lib/format.js';
import { TIER_RULES, atLeast, tierLabel, type Tier } from '../lib/tiers.js';
import type { IntervalName } from '../lib/intervals.js';
import type { ObjectSchema } from './validate.js';

export interface Operation {
  readonly method: 'get' | 'post' | 'delete';
  /** Koa path, e.g. /v1/certificates/:pair */
  readonly path: string;
  readonly summary: string;
  /** More than the summary says (formats, headers): the document's description, before the key and limit notes. */
  readonly description?: string;
  /** Lowest tier allowed (a key of it or above); null = no API key needed (then `access` says how it is limited). */
  readonly tier: Tier | null;
  /**
   * Without a key (tier null): 'anonymous' counts against the caller address's budget at the free
   * tier's limits (the default), 'public' against the per-address limit of the public pages and
   * records (RateLimiter.consumePublic: a minute's window, no monthly quota), 'open' against none.
   */
  readonly access?: 'anonymous' | 'public' | 'open';
  /** How a refusal names what needs a higher tier (default: the method and path). */
  readonly feature?: string;
  readonly query?: ObjectSchema;
  readonly params?: ObjectSchema;
  readonly body?: ObjectSchema;
  readonly response: object;
  readonly status?: number;
  /** The success response's media type (default application/json; text/event-stream for streams). */
  readonly contentType?: string;
  /** Other media types the success may come in (CSV beside JSON, Parquet beside gzipped CSV): the schema of each. */
  readonly otherContent?: Readonly<Record<string, object>>;
  /** Headers of the success beyond those every answer has, by name. */
  readonly successHeaders?: Readonly<Record<string, { readonly description: string; readonly schema: object }>>;
  /** OpenAPI operationId; default: the method and the path's words in camelCase (getCertificatesPairTimestamp). */
  readonly operationId?: string;
  /**
   * Errors the handler itself answers beyond those its shape implies (validation_error with any input,
   * unauthorized with a tier, tier_restricted above Free, the 429s when rate limited, service_unavailable
   * always): e.g. not_found, conflict, tier_restricted for a gated parameter. Documented in OpenAPI.
   */
  readonly errors?: readonly ErrorCode[];
  /**
   * How many of its customer's concurrent slots a request takes, from its query as sent and the
   * customer's tier, before the route validates it (api/limits/concurrency.ts); default one.
   */
  readonly slots?: (query: Readonly<Record<string, string | string[] | undefined>>, tier: Tier) => number;
}

export interface RouteModule {
  readonly operations: readonly Operation[];
  mount(router: AppRouter, deps: AppDeps): void;
}

/** How a request to an operation is admitted: a key of its tier, or how it is limited without one. */
export type Access = { readonly key: Tier } | { readonly key: null; readonly limit: 'anonymous' | 'public' | 'open' };

export function accessOf(op: Operation): Access {
  return op.tier !== null ? { key: op.tier } : { key: null, limit: op.access ?? 'anonymous' };
}

/** 403 tier_restricted unless the caller's tier is at least `needed` (an operation's, or a gated parameter's). */
export function requireTier(ctx: Pick<AppContext, 'state'>, needed: Tier, what: string): void {
  const tier = ctx.state.customer?.tier ?? 'free';
  if (!atLeast(tier, needed)) {
    throw new ApiError(403, 'tier_restricted', `${what} requires the ${tierLabel(needed)} tier or higher; this key is ${tierLabel(tier)}.`);
  }
}

const features = new WeakMap<Operation, string>();

/** What a tier refusal names: the operation's feature, or its method and path (made once an operation: admit asks on every request). */
export function featureOf(op: Operation): string {
  let feature = features.get(op);
  if (feature === undefined) features.set(op, (feature = op.feature ?? `${op.method.toUpperCase()} ${op.path.replace(/:(\w+)/g, '{$1}')}`));
  return feature;
}

/** 403 interval_not_available unless the caller's tier has candles of `interval`. */
export function requireInterval(ctx: AppContext, interval: IntervalName): void {
  const tier = ctx.state.customer?.tier ?? 'free';
  const { intervals } = TIER_RULES[tier];
  if (!intervals.includes(interval)) {
    throw new ApiError(403, 'interval_not_available', `The ${interval} interval is not available on the ${tierLabel(tier)} tier (${intervals.join(', ')}).`);
  }
}

/** A public pair identifier (case-insensitive), or 400 naming the parameter. */
export function knownPair(deps: AppDeps, raw: string, param: string): PairInfo {
  const info = deps.pairs.get(raw.toUpperCase());
  if (!info) throw validationError(`unknown pair '${raw.slice(0, 20)}' in '${param}'; GET /v1/pairs lists the supported pairs`);
  return info;
}

export function meta(ctx: AppContext, started: number): { request_id: string; timestamp: string; latency_ms: number } {
  return { request_id: ctx.state.requestId, timestamp: timestamp(Date.now()), latency_ms: Math.round(performance.now() - started) };
}
