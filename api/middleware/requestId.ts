// Every request's id: in ctx.state, in the X-Request-Id header, in every meta and log line.
// Unique without a random draw per request: a random prefix per process (12 characters, 72 bits)
// and a counter, so ids from several API processes never collide, and each costs no system call.
import crypto from 'node:crypto';

/** A source of request ids for one process. */
export function requestIds(): () => string {
  const prefix = `req_${crypto.randomBytes(9).toString('base64url')}`;
  let n = 0;
  return () => `${prefix}${(n++).toString(36)}`;
}
