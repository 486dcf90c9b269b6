// The published figures that lib/methodology/figures.ts computes from the database's decimals:
// exact, rounded once, half-even (docs/methodology.md, section 12), where doubles would differ.
import { describe, expect, it } from 'vitest';
import { indexFigures, premiumSeriesFigures, spreadFigures } from '../../../lib/methodology/figures.js';

describe('spread figures', () => {
  it('rounds the spread in basis points half-even from the exact quotient', () => {
    // 0.08 / 10.24 = 78.125 bp exactly: half-even gives 78.12 (doubles and Math.round gave 78.13)
    const f = spreadFigures('10.2', '10.28', '10.24');
    expect(f).toMatchObject({ bid: 10.2, ask: 10.28, mid: 10.24, spread: 0.08, spread_bps: 78.12, synthetic: 10.24, premium: 0, premium_pct: 0 });
  });

  it('writes mid, spread and premium as exact decimals', () => {
    // in doubles 0.3 - 0.1 = 0.19999999999999998 and 0.2 - 0.16 = 0.04000000000000001
    const f = spreadFigures('0.1', '0.3', '0.16');
    expect(f.spread).toBe(0.2);
    expect(f.mid).toBe(0.2);
    expect(f.premium).toBe(0.04);
    expect(f.premium_pct).toBe(25);
  });

  it('publishes the premium percentage to four places, half-even', () => {
    // (100.00005 - 100) / 100 = 0.00005 % exactly: a tie, to the even 0.0000 (doubles: 0.0001)
    expect(spreadFigures('100.0000', '100.0001', '100').premium_pct).toBe(0);
    // 0.00015 %: a tie, to the even 0.0002
    expect(spreadFigures('100.0002', '100.0001', '100').premium_pct).toBe(0.0002);
  });
});

describe('premium series figures', () => {
  it('averages the buckets weighted by observations, exactly', () => {
    const rows = [
      { avg_premium_pct: '0.1', max_premium_pct: '0.3', min_premium_pct: '-0.2', data_points: 1 },
      { avg_premium_pct: '0.2', max_premium_pct: '0.25', min_premium_pct: '-0.35', data_points: '2' },
    ];
    // (0.1 + 2 x 0.2) / 3 = 0.1666..., in doubles 0.5 / 3 too; the extremes are taken from the decimals
    const s = premiumSeriesFigures(rows);
    expect(s.overall).toEqual({ avg_premium_pct: 0.1667, max_premium_pct: 0.3, min_premium_pct: -0.35, data_points: 3 });
    expect(s.buckets[1]).toEqual({ avg_premium_pct: 0.2, max_premium_pct: 0.25, min_premium_pct: -0.35, data_points: 2 });
  });

  it('rounds a tie half-even where doubles round it up', () => {
    // 1.00005 is stored in a double as 1.0000500000000001, so doubles give 1.0001
    const [b] = premiumSeriesFigures([{ avg_premium_pct: '1.00005', max_premium_pct: '1.00015', min_premium_pct: '-1.00005', data_points: 4 }]).buckets;
    expect(b).toEqual({ avg_premium_pct: 1, max_premium_pct: 1.0002, min_premium_pct: -1, data_points: 4 });
  });

  it('has no overall figures without buckets', () => {
    expect(premiumSeriesFigures([]).overall).toEqual({ avg_premium_pct: null, max_premium_pct: null, min_premium_pct: null, data_points: 0 });
  });
});

describe('index figures', () => {
  it('computes the change and its percentage from the decimals', () => {
    // 1000.3 - 1000.1 is 0.1999999999999318 in doubles
    expect(indexFigures('1000.3', '1000.1')).toEqual({ value: 1000.3, change_24h: 0.2, change_pct_24h: 0.02 });
  });

  it('rounds the value to the published significant digits, half-even', () => {
    // 12 significant digits of a tie: to the even digit (doubles round 2.000000000005 up)
    expect(indexFigures('2.000000000005', null)).toEqual({ value: 2, change_24h: null, change_pct_24h: null });
    expect(indexFigures('1000.000000125', '1000').value).toBe(1000.00000012);
  });

  it('has no change without both values, and no percentage from zero', () => {
    expect(indexFigures(null, '5')).toEqual({ value: null, change_24h: null, change_pct_24h: null });
    expect(indexFigures('5', '0')).toEqual({ value: 5, change_24h: 5, change_pct_24h: null });
  });
});
