// Exact arithmetic for published numbers: rationals of BigInts, made from the decimal strings the
// database stores (numeric), so sums, quotients and comparisons are exact and a rate rounds the
// same way in any language that recomputes it (verify/ does, in JavaScript and Python).

export interface Rational {
  /** numerator, any sign */
  readonly n: bigint;
  /** denominator, always > 0 */
  readonly d: bigint;
}

const gcd = (a: bigint, b: bigint): bigint => {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
};

/** n / d, the sign carried by n. Not reduced: sums of decimals keep power-of-ten denominators (see add). */
export function rational(n: bigint, d: bigint = 1n): Rational {
  if (d === 0n) throw new RangeError('division by zero');
  return d < 0n ? { n: -n, d: -d } : { n, d };
}

/** In lowest terms. */
export function reduce(r: Rational): Rational {
  const g = gcd(r.n, r.d);
  return g > 1n ? { n: r.n / g, d: r.d / g } : r;
}

/** Denominators past this are reduced after an addition; below it reducing costs more than it saves. */
const REDUCE_ABOVE = 10n ** 120n;

/** The powers of ten kept: enough for any decimal the venues send and its products. */
const POWERS = Array.from({ length: 128 }, (_, k) => 10n ** BigInt(k));
/** 10^k, k >= 0. */
export const pow10 = (k: number): bigint => POWERS[k] ?? 10n ** BigInt(k);

export const ZERO = rational(0n);
export const ONE = rational(1n);

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** A plain decimal string ("123.4500", "-0.1", "7") as an exact rational; anything else throws. */
export function parseDecimal(text: string): Rational {
  const m = DECIMAL.exec(text.trim());
  if (!m) throw new RangeError(`not a plain decimal: ${JSON.stringify(text.slice(0, 40))}`);
  const fraction = m[3] ?? '';
  const n = BigInt(m[2]! + fraction) * (m[1] === '-' ? -1n : 1n);
  return rational(n, pow10(fraction.length));
}

/** a + b; when one denominator divides the other (decimals: powers of ten) the larger is kept, so long sums stay small. */
export function add(a: Rational, b: Rational): Rational {
  if (a.d === b.d) return { n: a.n + b.n, d: a.d };
  if (a.d % b.d === 0n) return { n: a.n + b.n * (a.d / b.d), d: a.d };
  if (b.d % a.d === 0n) return { n: a.n * (b.d / a.d) + b.n, d: b.d };
  const d = a.d * b.d;
  const n = a.n * b.d + b.n * a.d;
  return d > REDUCE_ABOVE ? reduce({ n, d }) : { n, d };
}
export const neg = (a: Rational): Rational => ({ n: -a.n, d: a.d });
export const sub = (a: Rational, b: Rational) => add(a, neg(b));
export const mul = (a: Rational, b: Rational) => rational(a.n * b.n, a.d * b.d);
export const div = (a: Rational, b: Rational) => rational(a.n * b.d, a.d * b.n);
export const abs = (a: Rational) => (a.n < 0n ? neg(a) : a);
/** -1, 0 or 1 as a < b, a = b, a > b. */
export const compare = (a: Rational, b: Rational) => {
  const x = a.n * b.d;
  const y = b.n * a.d;
  return x < y ? -1 : x > y ? 1 : 0;
};
export const sum = (values: readonly Rational[]) => values.reduce(add, ZERO);

/** The median: the middle value, or the mean of the two middle ones. */
export function median(values: readonly Rational[]): Rational {
  if (values.length === 0) throw new RangeError('median of nothing');
  const sorted = [...values].sort(compare);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : div(add(sorted[mid - 1]!, sorted[mid]!), rational(2n));
}

/** n / d rounded to an integer, ties to the even neighbour. */
function roundHalfEven(n: bigint, d: bigint): bigint {
  const negative = n < 0n;
  const a = negative ? -n : n;
  let q = a / d;
  const twice = 2n * (a % d);
  if (twice > d || (twice === d && q % 2n === 1n)) q += 1n;
  return negative ? -q : q;
}

/**
 * An integer scaled by 10^-places, written as a plain decimal, without trailing zeros unless
 * `keepZeros` ("1.5", "-2", "0.0001"). The integer may be a double holding a safe integer (the
 * error-bounded figures' rounding, ./estimate.ts), whose text is its digits as a BigInt's is.
 */
export function plain(scaled: bigint | number, places: number, keepZeros = false): string {
  if (typeof scaled === 'number' && !Number.isSafeInteger(scaled)) throw new RangeError(`not a safe integer: ${scaled}`);
  const negative = scaled < 0;
  let digits = String(negative ? -scaled : scaled);
  if (places > 0) {
    if (digits.length <= places) digits = digits.padStart(places + 1, '0');
    const point = digits.length - places;
    let end = digits.length;
    if (!keepZeros) while (end > point && digits.charCodeAt(end - 1) === 48) end--;
    digits = end > point ? `${digits.slice(0, point)}.${digits.slice(point, end)}` : digits.slice(0, point);
  } else if (places < 0) {
    digits = digits === '0' ? '0' : digits + '0'.repeat(-places);
  }
  return negative ? `-${digits}` : digits; // a negative integer has a digit other than 0
}

/** Rounded half-even to `places` digits after the point, as a plain decimal string (`pad`: all of them, "1.50"). */
export function toFixedPlaces(r: Rational, places: number, pad = false): string {
  return plain(roundHalfEven(r.n * pow10(places), r.d), places, pad);
}

/**
 * Rounded half-even to `digits` significant digits, as a plain decimal string without exponent
 * or trailing zeros. The exponent is found exactly: 10^e <= |r| < 10^(e+1).
 */
export function toSignificant(r: Rational, digits: number): string {
  if (r.n === 0n) return '0';
  const a = abs(r);
  // first guess from the lengths of numerator and denominator, corrected by at most one step
  let e = a.n.toString().length - a.d.toString().length;
  if (!atLeastPow(a, e)) e -= 1;
  else if (atLeastPow(a, e + 1)) e += 1;
  const places = digits - 1 - e;
  return plain(places >= 0 ? roundHalfEven(r.n * pow10(places), r.d) : roundHalfEven(r.n, r.d * pow10(-places)), places);
}

/** a >= 10^k, for a > 0. */
const atLeastPow = (a: Rational, k: number) => (k >= 0 ? a.n >= a.d * pow10(k) : a.n * pow10(-k) >= a.d);

/** A rational as a JavaScript number (for JSON): through its shortest decimal, never a float sum. */
export const toNumber = (r: Rational, digits = 17) => Number(toSignificant(r, digits));

/** A terminating decimal (denominator 2^a x 5^b, as every sum of decimals is) written exactly. */
export function toDecimal(value: Rational): string {
  const r = reduce(value);
  let d = r.d;
  let places = 0;
  let twos = 0;
  let fives = 0;
  while (d % 2n === 0n) [d, twos] = [d / 2n, twos + 1];
  while (d % 5n === 0n) [d, fives] = [d / 5n, fives + 1];
  if (d !== 1n) throw new RangeError('not a terminating decimal');
  places = Math.max(twos, fives);
  return plain((r.n * pow10(places)) / r.d, places);
}

/**
 * The operations the published figures are computed with (lib/methodology/rules.ts), over some kind
 * of number T: exact rationals here, error-bounded doubles in ./estimate.ts (which give up,
 * throwing Undecided, where a double cannot tell the exact answer).
 */
export interface Arithmetic<T> {
  /** A plain decimal string. */
  decimal(text: string): T;
  /** n / d, small integers (exact in a double). */
  ratio(n: number, d?: number): T;
  add(a: T, b: T): T;
  sub(a: T, b: T): T;
  mul(a: T, b: T): T;
  div(a: T, b: T): T;
  abs(a: T): T;
  /** -1, 0 or 1 as a < b, a = b, a > b. */
  compare(a: T, b: T): -1 | 0 | 1;
  /** a > 0 */
  positive(a: T): boolean;
  toFixedPlaces(a: T, places: number): string;
  toSignificant(a: T, digits: number): string;
}

/** Exact arithmetic: every answer is the rational one. */
export const EXACT: Arithmetic<Rational> = {
  decimal: parseDecimal,
  ratio: (n, d = 1) => rational(BigInt(n), BigInt(d)),
  add,
  sub,
  mul,
  div,
  abs,
  compare,
  positive: (a) => a.n > 0n,
  toFixedPlaces: (a, places) => toFixedPlaces(a, places),
  toSignificant,
};
