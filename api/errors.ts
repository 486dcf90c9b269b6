// One error class for the whole API: it carries the contract's `error` code and HTTP status, is
// thrown anywhere, and is rendered by api/middleware/errors.ts (from the envelope) as {error, message, status}.
// Anything else thrown is a 500 whose message says nothing about the inside (no stack, no SQL).
import { isUnreachable } from '../lib/db/pool.js';

export type ErrorCode =
  | 'validation_error'
  | 'unauthorized'
  | 'tier_restricted'
  | 'interval_not_available'
  | 'history_limit_exceeded'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limit_exceeded'
  | 'monthly_quota_exceeded'
  | 'conflict'
  | 'service_unavailable'
  | 'request_timeout'
  | 'internal_error';

export class ApiError extends Error {
  readonly expose = true;
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const validationError = (message: string) => new ApiError(400, 'validation_error', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const unavailable = (message: string, retryAfterSeconds = 60) =>
  new ApiError(503, 'service_unavailable', message, { 'Retry-After': String(retryAfterSeconds) });

// PostgreSQL errors a client can cause and can act on; everything else is a 500.
const SQLSTATE_TO_ERROR: Readonly<Record<string, () => ApiError>> = {
  '23505': () => new ApiError(409, 'conflict', 'That already exists.'),
  '57014': () => new ApiError(503, 'service_unavailable', 'The query took too long; narrow the range or retry.', { 'Retry-After': '10' }),
};

/** Maps a thrown value to the error the client sees. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SQLSTATE_TO_ERROR[code]) return SQLSTATE_TO_ERROR[code]();
  if (isUnreachable(err)) {
    return unavailable('The database is unreachable; retry shortly.', 10);
  }
  return new ApiError(500, 'internal_error', 'Internal error; it has been logged.');
}
