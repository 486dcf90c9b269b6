// How a delivery is signed, as Stripe signs its webhooks: the header
//   Afrates-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the endpoint's secret>
// The timestamp is the attempt's, so a receiver can refuse an old replay; the body (and its event
// id) is the same on every attempt, so a receiver de-duplicates by `id` (also in Afrates-Event-Id).
// After a rotation the header carries a v1 for the new secret and one for the previous secret
// until that expires, so a receiver can switch secrets without losing a delivery.
import crypto from 'node:crypto';

export const SIGNATURE_HEADER = 'Afrates-Signature';
export const EVENT_ID_HEADER = 'Afrates-Event-Id';
export const EVENT_TYPE_HEADER = 'Afrates-Event-Type';

const hmac = (secret: string, t: number, body: string) => crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/** The header's value for this body at unix time `t`, one v1 per secret (the current one first). */
export function signatureHeader(secrets: readonly string[], body: string, t: number): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${hmac(s, t, body)}`)].join(',');
}

export interface VerifyOptions {
  /** How old a signature may be, in seconds (default 300); 0: not checked. */
  readonly toleranceSeconds?: number;
  readonly now?: () => number;
}

/**
 * Whether the header signs this exact body with this secret, recently: what a receiver does with
 * the raw body before parsing it (README, "Webhooks", has the same in a few lines).
 */
export function verifySignature(secret: string, header: string, body: string, opts: VerifyOptions = {}): boolean {
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return false;
  const tolerance = opts.toleranceSeconds ?? 300;
  if (tolerance > 0 && Math.abs(Math.floor((opts.now ?? Date.now)() / 1000) - t) > tolerance) return false;
  const expected = Buffer.from(hmac(secret, t, body), 'hex');
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v) && crypto.timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
