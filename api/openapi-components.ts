// The reusable parts of the OpenAPI document that api/routes/openapi.ts assembles: the headers
// responses carry, one error response per status, the error codes, the security schemes, the tags.
// Each says what the code sends: X-Request-Id and X-Afrates-Data (api/middleware/envelope.ts), the
// rate-limit headers (api/limits/limiter.ts via api/middleware/auth.ts), 405 with Allow
// (api/app.ts), the error codes (api/errors.ts) and the HTTP parser's own answers (api/server.ts).
import type { ErrorCode } from './errors.js';
import { TIER_RULES } from '../lib/tiers.js';

const ref = (kind: 'headers' | 'responses' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const INT = { type: 'integer' } as const;
const STR = { type: 'string' } as const;

/**
 * components.headers. Only Retry-After is `required` (on 429 and 503, always): the others are on
 * every response of their kind except a few the description names, so a client must not count
 * on them blindly.
 */
export const HEADERS = {
  'X-Request-Id': {
    description: "This request's id, as in meta.request_id and the service's logs: quote it when asking about a response. On every response except the HTTP parser's own 400, 408 and 431.",
    schema: { type: 'string', pattern: '^req_[A-Za-z0-9_-]{12}$' },
  },
  'X-RateLimit-Limit': {
    description: "Requests allowed in the current window: the minute (on POST /v1/auth/free-key's 429 for too many keys, the hour: 5 keys an hour per address). On every response of a rate-limited endpoint (all but GET /v1/health), except a 503 answered before the request was counted.",
    schema: INT,
  },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window (as X-RateLimit-Limit).', schema: INT },
  'X-RateLimit-Reset': { description: 'When the current window ends, in Unix seconds (as X-RateLimit-Limit).', schema: INT },
  'RateLimit-Policy': { description: 'IETF draft form of the windows, e.g. `"minute";q=30;w=60, "month";q=25000;w=2592000` (as X-RateLimit-Limit).', schema: STR },
  RateLimit: {
    description:
      'IETF draft form of what is left, e.g. `"minute";r=29;t=42, "month";r=24990;t=1209600` (as X-RateLimit-Limit). On a 429 its first entry names the window that refused: `"minute"` (wait until X-RateLimit-Reset), `"month"`, `"streams"` (a stream cap: close an open stream; waiting alone does not help), `"issue"` (free keys an hour per address) or `"public"` (the public pages\' endpoints, per address).',
    schema: STR,
  },
  'X-Quota-Limit': { description: 'Requests allowed this calendar month (UTC), with X-RateLimit-Limit where a monthly quota applies (every tier but Enterprise).', schema: INT },
  'X-Quota-Remaining': { description: 'Requests left this calendar month (as X-Quota-Limit).', schema: INT },
  'Retry-After': { required: true, description: 'Seconds to wait before retrying.', schema: INT },
  Allow: { description: 'On 405: the methods the path takes.', schema: STR },
  'X-Afrates-Data': { description: '`simulated` when the data come from the simulated market (make demo), never from real venues; absent otherwise.', schema: { type: 'string', enum: ['simulated'] } },
} as const;

type HeaderName = keyof typeof HEADERS;
const LIMIT_HEADERS: readonly HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit', 'X-Quota-Limit', 'X-Quota-Remaining'];

/** The header references of a response: the request id, the rate-limit headers where counted, the simulated label. */
export function headersOf(opts: { limited: boolean; extra?: readonly HeaderName[] }): Record<string, { $ref: string }> {
  const names: HeaderName[] = ['X-Request-Id', ...(opts.extra ?? []), ...(opts.limited ? LIMIT_HEADERS : []), 'X-Afrates-Data'];
  return Object.fromEntries(names.map((n) => [n, ref('headers', n)]));
}

/** Every error code (api/errors.ts), its status and when it is answered: listing them all is checked by the compiler. */
export const ERROR_CODES = {
  validation_error: { status: 400, when: 'a parameter or the body is invalid; the message names it' },
  unauthorized: { status: 401, when: 'the API key is missing, unknown or revoked' },
  tier_restricted: { status: 403, when: 'the endpoint, or a parameter given, needs a higher tier' },
  interval_not_available: { status: 403, when: `the interval is not on the key's tier (Free has ${TIER_RULES.free.intervals.join(', ')}; the others need Builder or higher)` },
  history_limit_exceeded: { status: 403, when: "`start` lies before the tier's history (Free: the last 30 days)" },
  not_found: { status: 404, when: 'there is no such thing: a day without trades or not over yet, a certificate not issued, a key not in this account' },
  method_not_allowed: { status: 405, when: 'the path does not take this method; Allow lists those it takes' },
  request_timeout: { status: 408, when: 'the request took over 30 s to arrive (answered by the HTTP parser), or its body had not all arrived by the API deadline; the connection is then closed' },
  conflict: { status: 409, when: "it exists already or would break a rule: an active free key for this email, an account's last key or one key too many" },
  rate_limit_exceeded: { status: 429, when: 'too many requests in the window; wait Retry-After seconds' },
  monthly_quota_exceeded: { status: 429, when: "the month's quota is used up; it renews on the 1st (UTC)" },
  service_unavailable: { status: 503, when: 'no fresh data yet, or the database is unreachable or too slow; retry after Retry-After seconds' },
  internal_error: { status: 500, when: 'a fault of the service, logged' },
} as const satisfies Record<ErrorCode, { status: number; when: string }>;

/**
 * components.responses: one per status an operation lists, each in the error shape. '4XX' gathers
 * what no operation causes by itself: a method the path does not take, and the HTTP parser's own
 * answers to a request it cannot read.
 */
export const ERROR_RESPONSES: Readonly<Record<string, { name: string; extra?: readonly HeaderName[]; description?: string }>> = {
  '400': { name: 'BadRequest' },
  '401': { name: 'Unauthorized' },
  '403': { name: 'Forbidden' },
  '404': { name: 'NotFound' },
  '409': { name: 'Conflict' },
  '429': { name: 'TooManyRequests', extra: ['Retry-After'] },
  '503': { name: 'ServiceUnavailable', extra: ['Retry-After'] },
  '4XX': {
    name: 'ClientError',
    extra: ['Allow'],
    description:
      'Any other client error, in the same shape: 405 method_not_allowed (with Allow) for a method the path does not take; and, from the HTTP parser before ' +
      'the request reaches the API (so with no other header): 400 validation_error for a request that is not valid HTTP, 408 request_timeout when it takes ' +
      'over 30 s to arrive, 431 validation_error for headers over 16 KB.',
  },
};

/** The response (key of ERROR_RESPONSES) an error status is documented under. */
export const responseKeyOf = (status: number): string => (ERROR_RESPONSES[String(status)] ? String(status) : '4XX');

/** What a list of codes means, for a response description: "`not_found`: there is no such data". */
export const describeCodes = (codes: readonly ErrorCode[]): string => codes.map((c) => `\`${c}\`: ${ERROR_CODES[c].when}.`).join(' ');

export const ERROR_SCHEMA_REF = ref('schemas', 'Error');
export const responseRef = (name: string) => ref('responses', name);

export const SECURITY_SCHEMES = {
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key, `afr_live_` and 32 letters or digits. POST /v1/auth/free-key issues a Free one at once.' },
} as const;

/** With GATEWAY_SECRET set: a marketplace gateway authenticates its users instead of X-API-Key (api/middleware/auth.ts). */
export const GATEWAY_SCHEMES = {
  gatewaySecret: { type: 'apiKey', in: 'header', name: 'X-RapidAPI-Proxy-Secret', description: "The marketplace gateway's shared secret; with X-RapidAPI-User it stands in for X-API-Key." },
  gatewayUser: {
    type: 'apiKey',
    in: 'header',
    name: 'X-RapidAPI-User',
    description: "The gateway's user, whose limits apply; X-RapidAPI-Subscription names the plan: BASIC Free, PRO Builder, ULTRA Professional, MEGA Enterprise (anything else Free).",
  },
} as const;

/** Tag (a path's first word after /v1) -> description; a tag not here gets a generic one. */
export const TAGS: Readonly<Record<string, string>> = {
  auth: 'API keys: a Free key at once, no account.',
  rates: 'Live rates, OHLCV candles, end-of-day snapshots, spread and every active market.',
  premium: 'The premium of exchange prices over the synthetic cross-rate (CRYPTO/USDT x USD/FIAT).',
  indices: 'Composite indices MXNCI and ACLI.',
  pairs: 'The supported pairs and their data availability.',
  status: 'Data freshness and failing sources per pair.',
  health: 'Service health.',
  certificates: 'Signed certificates of published rates, and the public key that verifies them.',
  board: 'The public rate board behind the web pages.',
  transparency: 'The append-only transparency log of every certificate, fixing and restatement (RFC 9162): signed tree heads, inclusion and consistency proofs.',
};

/** The licence of the API and this document: proprietary until terms are published (docs/decisions.md). */
export const LICENSE = { name: 'Proprietary', identifier: 'LicenseRef-afrates-proprietary' } as const;
