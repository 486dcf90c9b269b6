// The numbers customers read: every price, volume and synthetic price passes through num(), which
// rounds to 12 significant digits. Its shortcut for short decimals must give exactly what the
// plain rounding gives, for the kinds of text PostgreSQL's numeric produces.
import { describe, expect, it } from 'vitest';
import { num, numberText, parseTimestamp } from '../../lib/format.js';

const rounded = (text: string) => Number(Number(text).toPrecision(12));

/** Seeded: the same texts every run. */
function* decimals(count: number): Generator<string> {
  let seed = 7;
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < count; i++) {
    const intDigits = Math.floor(rand() * 12);
    const fracDigits = Math.floor(rand() * 22);
    let text = intDigits === 0 ? '0' : String(1 + Math.floor(rand() * 9));
    for (let d = 1; d < intDigits; d++) text += String(Math.floor(rand() * 10));
    if (fracDigits > 0) {
      text += '.';
      // runs of zeros and nines: where rounding carries
      const digit = rand() < 0.3 ? '0' : rand() < 0.5 ? '9' : null;
      for (let d = 0; d < fracDigits; d++) text += digit ?? String(Math.floor(rand() * 10));
    }
    yield rand() < 0.1 ? `-${text}` : text;
  }
}

describe('num', () => {
  it('gives the 12-significant-digit rounding of any decimal text, short or long', () => {
    const edges = ['0', '0.0', '142000000', '1700000.50', '0.000123456789012345', '999999999999.5', '99999999999.95', '1234567890123', '0.1', '1e-7', '1.5E+20', '-0.00001'];
    let long = 0;
    for (const text of [...edges, ...decimals(50_000)]) {
      expect(num(text), text).toBe(rounded(text));
      if (text.replace(/[^0-9]/g, '').replace(/^0+/, '').length > 12) long++;
    }
    expect(long).toBeGreaterThan(10_000); // the slow path is exercised as much as the shortcut
  });

  it('keeps null, and refuses what is not a finite number', () => {
    expect(num(null)).toBeNull();
    expect(num(undefined)).toBeNull();
    expect(num('NaN')).toBeNull();
    expect(num('Infinity')).toBeNull();
    expect(num(1 / 3)).toBe(0.333333333333);
  });
});

describe('numberText', () => {
  it('is the text JSON writes for num(text), for short and long decimals, zeros, signs and tiny values', () => {
    const edges = ['0', '-0', '0.000', '-0.000', '00012.500', '100', '123.4500', '0.000001', '0.0000001', '0.00000012', '-0.5', '999999999999', '9999999999999', '1234567890123456789012', '0.1000000000001', '1e-7', '1.5E+20', 'abc'];
    for (const text of [...edges, ...decimals(50_000)]) expect(numberText(text), text).toBe(String(num(text)));
  });
});

describe('parseTimestamp', () => {
  it('reads the instants we hand out, with Z, +00:00 or a space for an unencoded +', () => {
    for (const text of ['2026-11-20T10:05:00+00:00', '2026-11-20T10:05:00Z', '2026-11-20T10:05:00 00:00', '2026-11-20T10:05:00.000+00:00', '2026-11-20T10:05:00.000000Z']) {
      expect(parseTimestamp(text)?.toISOString(), text).toBe('2026-11-20T10:05:00.000Z');
    }
    expect(parseTimestamp('2028-02-29T23:59:59.999Z')?.toISOString()).toBe('2028-02-29T23:59:59.999Z');
  });

  it('refuses what names no real instant, or one finer than a millisecond, instead of reading another', () => {
    // each of these Date would read as a different instant: 1 March, the next day, 08:10:00.000
    for (const text of ['2026-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-11-22T24:00:00+00:00', '2026-11-20T10:60:00Z', '2026-11-20T10:05:60Z', '2026-11-20T08:10:00.0009+00:00', '2026-11-20T10:05:00+01:00', '1999-12-31T23:59:59Z']) {
      expect(parseTimestamp(text), text).toBeNull();
    }
  });
});

