// Wire formats the contract fixes: timestamps with a +00:00 offset (never Z), dates YYYY-MM-DD,
// numbers as JSON numbers (the database hands numeric back as exact strings).

export function timestamp(d: Date | number): string {
  const ms = typeof d === 'number' ? d : d.getTime();
  if (ms === lastTimestamp.ms) return lastTimestamp.text; // every answer's meta asks for now: many share a millisecond
  const iso = new Date(ms).toISOString(); // 2026-01-01T00:00:00.000Z
  const text = iso.endsWith('.000Z') ? `${iso.slice(0, 19)}+00:00` : `${iso.slice(0, 23)}+00:00`;
  lastTimestamp = { ms, text };
  return text;
}
let lastTimestamp = { ms: NaN, text: '' };

export function date(d: Date | number): string {
  return new Date(d).toISOString().slice(0, 10);
}

/** numeric text -> number, null stays null. Rounded to 12 significant digits: honest precision. */
export function num(v: string | number | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  if (!Number.isFinite(n)) return null;
  if (n === 0) return 0; // never -0
  // text of at most 12 significant digits is already what the rounding would give back (such a
  // decimal round-trips through a double), and a page of candles is mostly such prices: skipping
  // toPrecision for them halves the cost of shaping 10,000 candles
  return typeof v === 'string' && significantDigits(v) <= 12 ? n : Number(n.toPrecision(12));
}

/**
 * numeric text -> the text JSON writes for num(text): String(num(text)), without the double
 * between when the text is short (a page of candles is mostly such numbers, and turning a double
 * back into text is the costliest step of writing one as CSV). A plain decimal of at most 12
 * significant digits reads back to the double nearest it, which JavaScript writes with those
 * digits: the text less its surplus zeros, unless JavaScript would write an exponent.
 */
export function numberText(v: string): string {
  const point = v.indexOf('.');
  const end = point < 0 ? v.length : point;
  const negative = v.charCodeAt(0) === 45;
  let start = negative ? 1 : 0;
  while (start < end - 1 && v.charCodeAt(start) === 48) start++; // leading zeros, one kept
  let last = v.length;
  if (point >= 0) {
    while (last > point + 1 && v.charCodeAt(last - 1) === 48) last--; // trailing zeros
    if (last === point + 1) last = point;
  }
  const whole = end - start;
  // JavaScript writes an exponent from 1e21 up and below 1e-6; past 12 digits num() rounds
  const zeroWhole = whole === 1 && v.charCodeAt(start) === 48;
  const fractionZeros = zeroWhole && point >= 0 ? leadingZeros(v, point + 1, last) : 0;
  if (whole > 21 || fractionZeros >= 6 || significantDigits(v) > 12 || !/^-?\d+(\.\d+)?$/.test(v)) return String(num(v));
  const text = v.slice(start, last);
  if (text === '0') return '0'; // never -0
  return negative ? `-${text}` : text;
}

const leadingZeros = (v: string, from: number, to: number) => {
  let i = from;
  while (i < to && v.charCodeAt(i) === 48) i++;
  return i - from;
};

/** Digits of a plain decimal's text, leading zeros not counted; 99 for an exponent. */
function significantDigits(text: string): number {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (c !== 48 || digits > 0) digits++;
    } else if (c === 101 || c === 69) {
      return 99;
    }
  }
  return digits;
}

/** numeric text -> number, for values the contract requires (a null here is a bug upstream). */
export function numeric(v: string | number): number {
  const n = num(v);
  if (n === null) throw new Error(`expected a number, got ${String(v)}`);
  return n;
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Start of a UTC day given as YYYY-MM-DD. */
export function dayStart(day: string): Date {
  return new Date(`${day}T00:00:00Z`);
}

/**
 * Parses the +00:00 (or Z) timestamps we hand out; null when it is not one. A '+' sent unencoded
 * in a URL arrives as a space, so ' 00:00' is read as '+00:00'. Only real instants to the
 * millisecond: JavaScript's Date rolls 2026-02-29 over to 1 March and T24:00 to the next day, and
 * drops digits past the millisecond, each of which named another instant than the one asked for.
 */
export function parseTimestamp(raw: string): Date | null {
  const text = raw.replace(/ 00:00$/, '+00:00');
  // years 2000-2099, like dates (api/validate.ts DATE); digits past the millisecond must be zeros
  const m = /^(20\d{2}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,3})0{0,3})?(?:\+00:00|Z)$/.exec(text);
  if (!m) return null;
  const ms = (m[2] ?? '').padEnd(3, '0');
  const d = new Date(`${m[1]}.${ms}Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString() === `${m[1]}.${ms}Z` ? d : null;
}

/** A certificate's id, as the contract shapes it: CERT-<pair>-<YYYYMMDDTHHMMSSZ> of its bucket's start. */
export function certificateId(pair: string, bucket: Date): string {
  return `CERT-${pair}-${bucket.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z')}`;
}

/** A restatement's id, in the API, its webhook event and its transparency log entry alike: RST-<its number>. */
export const restatementId = (n: number | string) => `RST-${n}`;
