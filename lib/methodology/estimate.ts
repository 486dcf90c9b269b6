// Error-bounded doubles: the Arithmetic of the published figures (./exact.ts) in floating point,
// each value carrying a bound on its distance from the exact rational. A rounding or comparison is
// answered only when every number within the bound gives the same answer, which is then the exact
// answer; otherwise it throws Undecided and the caller computes exactly. So the figures are the
// exact ones, reached in doubles for nearly every candle (a page of history, a month's file) at a
// fraction of the cost of BigInt rationals.
import { plain, type Arithmetic } from './exact.js';

/** A double `v` and a bound `e` on |exact - v|. */
export interface Estimate {
  readonly v: number;
  readonly e: number;
}

/** Thrown where a double cannot tell the exact answer (a tie, a comparison of near-equal values). */
export class Undecided extends Error {
  constructor() {
    super('undecided in doubles');
  }
}

/** The unit roundoff of a double, and a bound several times it for each operation's own error. */
const U = 2 ** -53;
const STEP = 4 * U;
/** Bounds grow by this much besides, for the rounding of the bound's own arithmetic. */
const SAFE = 1 + 16 * U;
/** Past this, a double no longer holds every integer, and scaled values are no longer exact to split. */
const WHOLE_MAX = 2 ** 52;
/** 10^k for 0 <= k <= 22, each exact in a double. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** One instance, thrown each time: an Error's stack is costly to capture, and this one's says nothing. */
const UNDECIDED = new Undecided();
const undecided = (): never => {
  throw UNDECIDED;
};

const bounded = (v: number, e: number): Estimate => {
  if (!Number.isFinite(v) || !Number.isFinite(e)) undecided();
  return { v, e: (e + Math.abs(v) * STEP) * SAFE };
};

/**
 * `a` x 10^k rounded half-even to an integer, when every value within its bound rounds alike
 * (only a tie, x.5, can go either way: on either side of a whole number the nearest is the same).
 */
function roundScaled(a: Estimate, k: number): number {
  const p = POW10[Math.abs(k)] ?? undecided();
  const s = k >= 0 ? a.v * p : a.v / p;
  const e = ((k >= 0 ? a.e * p : a.e / p) + Math.abs(s) * STEP) * SAFE;
  if (!(Math.abs(s) < WHOLE_MAX)) undecided();
  const whole = Math.floor(s);
  const fraction = s - whole; // exact below 2^52
  if (Math.abs(fraction - 0.5) <= e + STEP) undecided(); // STEP: the subtraction's own error, below 1
  return fraction > 0.5 ? whole + 1 : whole;
}

export const ESTIMATE: Arithmetic<Estimate> = {
  decimal(text) {
    const v = Number(text); // correctly rounded: within half an ulp
    if (!Number.isFinite(v) || text.length === 0) throw new RangeError(`not a plain decimal: ${JSON.stringify(text.slice(0, 40))}`);
    return { v, e: Math.abs(v) * U };
  },
  ratio: (n, d = 1) => ({ v: n / d, e: Math.abs(n / d) * U }),
  add: (a, b) => bounded(a.v + b.v, a.e + b.e),
  sub: (a, b) => bounded(a.v - b.v, a.e + b.e),
  mul: (a, b) => bounded(a.v * b.v, Math.abs(a.v) * b.e + Math.abs(b.v) * a.e + a.e * b.e),
  div(a, b) {
    const m = Math.abs(b.v);
    if (!(m > 2 * b.e)) undecided(); // the divisor's sign, and a bound on its size, must be known
    return bounded(a.v / b.v, (Math.abs(a.v) * b.e + m * a.e) / (m * (m - b.e)));
  },
  abs: (a) => (a.v < 0 ? { v: -a.v, e: a.e } : a),
  compare(a, b) {
    const d = a.v - b.v;
    if (Math.abs(d) <= (a.e + b.e + Math.abs(d) * STEP) * SAFE) {
      if (a.e === 0 && b.e === 0 && d === 0) return 0; // both exact and equal
      undecided();
    }
    return d < 0 ? -1 : 1;
  },
  positive(a) {
    if (Math.abs(a.v) <= a.e) {
      if (a.v === 0 && a.e === 0) return false;
      undecided();
    }
    return a.v > 0;
  },
  toFixedPlaces: (a, places) => plain(roundScaled(a, places), places),
  toSignificant(a, digits) {
    if (a.v === 0 && a.e === 0) return '0';
    const m = Math.abs(a.v);
    // the exponent: 10^k <= |exact| < 10^(k+1) for every value within the bound
    const k = Math.floor(Math.log10(m));
    const low = POW10[Math.abs(k)] ?? undecided();
    const high = POW10[Math.abs(k + 1)] ?? undecided();
    const [lo, hi] = k >= 0 ? [low, high] : [1 / low, 1 / high]; // 1/10^j is within an ulp: allowed for below
    const slack = (a.e + m * STEP) * SAFE + Math.max(lo, hi) * STEP;
    if (!(m - slack >= lo && m + slack < hi)) undecided();
    const places = digits - 1 - k;
    return plain(roundScaled(a, places), places);
  },
};
