// Exact arithmetic and the published rounding: decimals in, decimals out, no binary float between.
import { describe, expect, it } from 'vitest';
import * as x from '../../../lib/methodology/exact.js';

const d = x.parseDecimal;

describe('exact decimals', () => {
  it('sum and multiply decimals with no float error', () => {
    // 0.1 + 0.2 is 0.30000000000000004 in binary floats
    expect(x.toDecimal(x.add(d('0.1'), d('0.2')))).toBe('0.3');
    expect(x.toDecimal(x.mul(d('103250000.12'), d('0.00012345')))).toBe('12746.212514814');
    expect(x.toDecimal(x.sum(['1.005', '2.0050', '-0.01'].map(d)))).toBe('3');
    expect(x.toDecimal(d('-0.000'))).toBe('0');
  });

  it('refuse anything but a plain decimal', () => {
    for (const bad of ['1e5', 'NaN', '', '1.', '.5', '0x10', '1,5', 'Infinity']) expect(() => d(bad), bad).toThrow(/plain decimal/);
  });

  it('compare and take medians exactly', () => {
    expect(x.compare(d('0.30000000000000001'), d('0.3'))).toBe(1);
    expect(x.compare(x.div(d('1'), d('3')), x.div(d('2'), d('6')))).toBe(0);
    expect(x.toDecimal(x.median(['3', '1', '2'].map(d)))).toBe('2');
    expect(x.toDecimal(x.median(['4', '1', '2', '3'].map(d)))).toBe('2.5');
  });
});

describe('rounding', () => {
  it('rounds half to even at the stated significant digit', () => {
    expect(x.toSignificant(d('1.25'), 2)).toBe('1.2');
    expect(x.toSignificant(d('1.35'), 2)).toBe('1.4');
    expect(x.toSignificant(d('-1.25'), 2)).toBe('-1.2');
    expect(x.toSignificant(d('1.2500000000001'), 2)).toBe('1.3');
    expect(x.toSignificant(d('999999999999.5'), 12)).toBe('1000000000000');
    expect(x.toSignificant(d('0.000123456789012345'), 12)).toBe('0.000123456789012');
    expect(x.toSignificant(d('123456789012345678'), 12)).toBe('123456789012000000');
    expect(x.toSignificant(x.div(d('2'), d('3')), 12)).toBe('0.666666666667');
    expect(x.toSignificant(x.ZERO, 12)).toBe('0');
  });

  it('finds the exponent exactly at powers of ten and just below them', () => {
    expect(x.toSignificant(d('1000'), 3)).toBe('1000');
    expect(x.toSignificant(d('999.95'), 4)).toBe('1000');
    expect(x.toSignificant(d('999.949999'), 4)).toBe('999.9');
    expect(x.toSignificant(d('0.001'), 1)).toBe('0.001');
    expect(x.toSignificant(x.div(d('1'), d('7')), 3)).toBe('0.143');
  });

  it('rounds to fixed places, padded when asked, never -0', () => {
    expect(x.toFixedPlaces(d('2.675'), 2)).toBe('2.68');
    expect(x.toFixedPlaces(d('2.665'), 2)).toBe('2.66');
    expect(x.toFixedPlaces(d('0.5'), 0)).toBe('0');
    expect(x.toFixedPlaces(d('1.5'), 0)).toBe('2');
    expect(x.toFixedPlaces(d('-0.001'), 2)).toBe('0');
    expect(x.toFixedPlaces(d('-0.001'), 2, true)).toBe('0.00');
    expect(x.toFixedPlaces(d('1.5'), 2, true)).toBe('1.50');
  });

  it('writes a scaled integer alike whether it comes as a BigInt or as a double holding it', () => {
    // the error-bounded figures (lib/methodology/estimate.ts) round to a double; the exact ones to a BigInt
    const cases: [bigint, number][] = [[0n, 2], [1n, 0], [-1n, 3], [5n, 1], [-10n, 1], [100n, -2], [1050n, 2], [-123456789n, 4], [2n ** 52n - 1n, 8], [-(2n ** 52n - 1n), 20]];
    for (let i = 0; i < 500; i++) cases.push([BigInt(Math.floor((Math.random() - 0.5) * 2 ** 53)), Math.floor(Math.random() * 24) - 3]);
    for (const [n, places] of cases) {
      for (const keep of [false, true]) expect(x.plain(Number(n), places, keep), `${n} ${places} ${keep}`).toBe(x.plain(n, places, keep));
    }
    expect(x.plain(-1234500n, 4)).toBe('-123.45');
    expect(x.plain(-1234500, 4, true)).toBe('-123.4500');
    expect(x.plain(7, 5)).toBe('0.00007');
    // a double that is no whole number, or past 2^53, has no exact digits to write
    for (const bad of [1.5, 2 ** 53, Number.NaN]) expect(() => x.plain(bad, 2)).toThrow(/not a safe integer/);
  });

  it('agrees with a reference digit-by-digit rounding on random quotients', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 2000; i++) {
      const n = BigInt(next()) * BigInt(next()) + 1n;
      const dd = BigInt(next()) + 1n;
      const digits = 1 + (next() % 15);
      // reference: long division to 40 digits, then round the digit string half-even by hand
      const q = x.rational(n, dd);
      const text = x.toSignificant(q, digits);
      const value = d(text);
      // |q - value| <= half a unit in the last kept place, and ties went to even
      const unitPlaces = text.includes('.') ? text.split('.')[1]!.length : 0;
      const e = (n / dd).toString().length; // digits before the point
      const places = digits - e;
      const ulp = x.rational(1n, 10n ** BigInt(Math.max(places, 0)));
      const halfUlp = places >= 0 ? x.div(ulp, x.rational(2n)) : x.rational(10n ** BigInt(-places), 2n);
      expect(x.compare(x.abs(x.sub(q, value)), halfUlp) <= 0, `${n}/${dd} to ${digits}: ${text}`).toBe(true);
      expect(unitPlaces).toBeLessThanOrEqual(Math.max(places, 0));
    }
  });
});
