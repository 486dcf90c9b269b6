// Verification rules: thresholds by quote currency, data quality, and a confidence that never
// drops when the inputs get better.
import { describe, expect, it } from 'vitest';
import { parseDecimal, type Rational } from '../../../lib/methodology/exact.js';
import * as rules from '../../../lib/methodology/rules.js';
import { dataQuality } from '../../../lib/methodology/rules.js';

/** The rules take exact rationals; these tests speak in numbers (their decimal text is exact). */
const q = (n: number): Rational => parseDecimal(n.toFixed(20).replace(/\.?0+$/, ''));
const verificationStatus = (div: number | null, quote: string, syntheticOnly?: boolean) => rules.verificationStatus(div === null ? null : q(div), quote, syntheticOnly);
interface ConfidenceInputs {
  sources: number;
  dispersion: number;
  divergence: number | null;
  quote: string;
  ageSeconds: number;
}
const confidence = (i: ConfidenceInputs) => rules.confidence({ ...i, dispersion: q(i.dispersion), divergence: i.divergence === null ? null : q(i.divergence) });
const dispersion = (prices: number[]) => Number(rules.dispersion(prices.map(q)).n) / Number(rules.dispersion(prices.map(q)).d);
const outliers = (prices: number[], limit = 0.05, wasOut?: (i: number) => boolean) => rules.outliers(prices.map(q), q(limit), wasOut);

describe('status', () => {
  it('uses 2% / 5%, and 5% / 10% for NGN', () => {
    expect(verificationStatus(0.019, 'ZAR')).toBe('verified');
    expect(verificationStatus(-0.04, 'ZAR')).toBe('caution');
    expect(verificationStatus(0.06, 'ZAR')).toBe('unverified');
    expect(verificationStatus(0.045, 'NGN')).toBe('verified');
    expect(verificationStatus(0.09, 'NGN')).toBe('caution');
    expect(verificationStatus(0.11, 'NGN')).toBe('unverified');
    expect(verificationStatus(null, 'ZAR')).toBe('unverified');
    expect(verificationStatus(0, 'ZAR', true)).toBe('unverified');
  });
});

describe('data quality', () => {
  it('is high with two fresh sources, medium with one, low synthetic-only, stale after an hour', () => {
    expect(dataQuality(2, 60, false)).toBe('high');
    expect(dataQuality(1, 60, false)).toBe('medium');
    expect(dataQuality(0, 1200, false)).toBe('low');
    expect(dataQuality(0, 60, true)).toBe('low');
    expect(dataQuality(3, 3700, false)).toBe('stale');
  });
});

describe('confidence', () => {
  const base: ConfidenceInputs = { sources: 2, dispersion: 0.004, divergence: 0.01, quote: 'ZAR', ageSeconds: 120 };
  it('is in [0, 1] and not a three-step constant', () => {
    const values = new Set<number>();
    for (const sources of [0, 1, 2, 3, 5]) for (const d of [0, 0.002, 0.01, 0.05]) for (const div of [null, 0, 0.01, 0.03, 0.2]) for (const age of [0, 300, 900, 4000]) {
      const c = confidence({ sources, dispersion: d, divergence: div, quote: 'ZAR', ageSeconds: age });
      expect(c).toBeGreaterThanOrEqual(0);
      expect(c).toBeLessThanOrEqual(1);
      values.add(c);
    }
    expect(values.size).toBeGreaterThan(50);
  });

  it('never drops with more sources, less dispersion, less divergence or fresher data', () => {
    for (let s = 0; s < 6; s++) expect(confidence({ ...base, sources: s + 1 })).toBeGreaterThanOrEqual(confidence({ ...base, sources: s }));
    for (let d = 0.05; d > 0; d -= 0.005) expect(confidence({ ...base, dispersion: d - 0.005 })).toBeGreaterThanOrEqual(confidence({ ...base, dispersion: d }));
    for (let v = 0.2; v > 0; v -= 0.01) {
      expect(confidence({ ...base, divergence: v - 0.01 })).toBeGreaterThanOrEqual(confidence({ ...base, divergence: v }));
      expect(confidence({ ...base, divergence: -(v - 0.01) })).toBeGreaterThanOrEqual(confidence({ ...base, divergence: -v }));
    }
    for (let a = 7200; a > 0; a -= 300) expect(confidence({ ...base, ageSeconds: a - 300 })).toBeGreaterThanOrEqual(confidence({ ...base, ageSeconds: a }));
  });

  it('never drops when an agreeing source (within 0.5%) is added', () => {
    for (let n = 1; n < 6; n++) {
      expect(confidence({ ...base, sources: n + 1, dispersion: 0.005 })).toBeGreaterThanOrEqual(confidence({ ...base, sources: n, dispersion: 0 }));
    }
  });

  it('measures dispersion as (max - min) / mean', () => {
    expect(dispersion([100])).toBe(0);
    expect(dispersion([99, 101])).toBeCloseTo(0.02, 12);
  });
});

describe('outliers', () => {
  it('leave out one deviant source among three however far off it is: 6 %, 11 %, 100x, a hundredth', () => {
    // a far-off source drags the median of the two others toward itself; tested all at once,
    // every source looked deviant above ~10.5 % and none was left out
    for (const bad of [1_696_000, 1_776_000, 160_000_000, 16_000]) {
      expect(outliers([1_600_000, 1_601_000, bad]), String(bad)).toEqual([2]);
      expect(outliers([bad, 1_600_000, 1_601_000]), String(bad)).toEqual([0]);
    }
  });

  it('leave out nobody within the limit, nobody with two sources, and never a majority', () => {
    expect(outliers([1_600_000, 1_620_000, 1_640_000])).toEqual([]);
    expect(outliers([1_600_000, 160_000_000])).toEqual([]);
    // two of four far off the other two: no majority to say which is right
    expect(outliers([100, 101, 200, 201])).toEqual([]);
    // two of five far off: both out, the furthest first
    expect(outliers([100, 101, 102, 1_000, 10_000])).toEqual([3, 4]);
  });

  it('keep one that was out until it is back under half the limit', () => {
    const wasOut = (i: number) => i === 2;
    expect(outliers([1_000_000, 1_001_000, 1_040_000], 0.05, wasOut)).toEqual([2]); // 4 %: still out
    expect(outliers([1_000_000, 1_001_000, 1_010_000], 0.05, wasOut)).toEqual([]); // 1 %: back in
  });
});

