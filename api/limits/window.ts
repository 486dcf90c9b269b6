// Fixed windows aligned to their length (a minute, an hour), and the headers that tell a client
// where it stands in one: X-RateLimit-Limit, -Remaining, -Reset (the contract's) and the IETF
// draft's RateLimit and RateLimit-Policy. One definition for every limit the API counts.

export interface FixedWindow {
  /** which window (ms since the epoch / its length): part of the counter's key */
  readonly n: number;
  /** when it ends, Unix seconds */
  readonly reset: number;
  /** whole seconds until then, at least 1 */
  readonly secondsLeft: number;
  /** how long its counter is kept (one window more) */
  readonly expiresAt: number;
}

export function fixedWindow(now: number, lengthMs: number): FixedWindow {
  const n = Math.floor(now / lengthMs);
  const reset = ((n + 1) * lengthMs) / 1000;
  return { n, reset, secondsLeft: Math.max(1, reset - Math.floor(now / 1000)), expiresAt: (n + 2) * lengthMs };
}

/**
 * The headers of `used` requests against `limit` in a window named `name` (RateLimit's policy
 * name); `policy`: the RateLimit-Policy, when it names more windows than this one.
 */
export function limitHeaders(name: string, limit: number, used: number, w: FixedWindow, lengthSeconds: number, policy?: string): Record<string, string> {
  const remaining = Math.max(0, limit - used);
  return {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(w.reset),
    'RateLimit-Policy': policy ?? `"${name}";q=${limit};w=${lengthSeconds}`,
    RateLimit: `"${name}";r=${remaining};t=${w.secondsLeft}`,
  };
}

/** The same headers, with Retry-After, for the 429 of a spent window. */
export const refusalHeaders = (name: string, limit: number, w: FixedWindow, lengthSeconds: number, policy?: string) => ({
  ...limitHeaders(name, limit, limit, w, lengthSeconds, policy),
  'Retry-After': String(w.secondsLeft),
});
