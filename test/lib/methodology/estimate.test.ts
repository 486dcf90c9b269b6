// The published figures in error-bounded doubles (lib/methodology/estimate.ts) are the exact ones or
// nothing: over realistic candles, and over candles built to sit on a rounding tie or a status
// threshold, every figure ESTIMATE gives equals EXACT's, and where doubles cannot tell it says so.
import { describe, expect, it } from 'vitest';
import { candleFiguresIn } from '../../../lib/methodology/figures.js';
import type { PageRow } from '../../../api/queries/candles.js';
import { ESTIMATE, Undecided } from '../../../lib/methodology/estimate.js';
import * as x from '../../../lib/methodology/exact.js';
import { figureRules } from '../../../lib/methodology/rules.js';
import { prng } from '../../../sim/rng.js';

const decimalOf = (rnd: () => number, whole: number, places: number) => `${Math.floor(rnd() * 10 ** whole)}.${String(Math.floor(rnd() * 10 ** places)).padStart(places, '0')}`;

/** A candle as candle_page gives it: prices near `price`, sums as the database keeps them. */
function candle(rnd: () => number, price: number): PageRow {
  const volume = decimalOf(rnd, 2, 8);
  const pv = x.toDecimal(x.mul(x.parseDecimal(volume), x.parseDecimal((price * (0.9 + rnd() * 0.2)).toFixed(2))));
  const usdVolume = decimalOf(rnd, 1, 8);
  const usdPrice = (price / 1500) * (0.95 + rnd() * 0.1);
  const venues = Math.floor(rnd() * 4);
  const lo = price * (1 - rnd() * 0.02);
  return {
    t: '2026-08-01T00:00:00+00:00',
    open: price.toFixed(2),
    high: price.toFixed(2),
    low: price.toFixed(2),
    close: price.toFixed(2),
    pv,
    volume,
    usd_pv: rnd() < 0.1 ? null : x.toDecimal(x.mul(x.parseDecimal(usdVolume), x.parseDecimal(usdPrice.toFixed(4)))),
    usd_volume: usdVolume,
    units_per_usd: rnd() < 0.1 ? null : `${(1400 + rnd() * 200).toFixed(4)}000000000000`,
    venues,
    venue_min: venues ? lo.toFixed(10) : null,
    venue_max: venues ? (lo * (1 + rnd() * 0.03)).toFixed(10) : null,
    venue_mean: venues ? (lo * 1.01).toFixed(12) : null,
    settled: true,
  };
}

const inDoubles = candleFiguresIn(ESTIMATE);
const exactly = candleFiguresIn(x.EXACT);
/** ESTIMATE's figures, or 'undecided'. */
function estimated<A extends unknown[], R>(f: (...args: A) => R, ...args: A): R | 'undecided' {
  try {
    return f(...args);
  } catch (err) {
    if (err instanceof Undecided) return 'undecided';
    throw err;
  }
}

describe('published figures in doubles', () => {
  it('are the exact figures for realistic candles, deciding nearly all of them', () => {
    const rnd = prng(26); // seeded: a failure names the candle it failed on
    let undecided = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const c = candle(rnd, [142_000_000, 1_700, 3_700, 0.55, 250][i % 5]! * (0.5 + rnd()));
      const quote = ['NGN', 'ZAR', 'KES', 'GHS', 'UGX'][i % 5]!;
      const fast = estimated(inDoubles, c, quote);
      if (fast === 'undecided') undecided++;
      else expect(fast, JSON.stringify(c)).toEqual(exactly(c, quote));
    }
    // those left undecided are mostly exact ties (two venues, no synthetic price: confidence 0.4375)
    expect(undecided / n).toBeLessThan(0.02);
  });

  it('give up on a rate that lies on a rounding tie, or a hair beside one, where the exact rule decides', () => {
    const fast = figureRules(ESTIMATE);
    const exact = figureRules(x.EXACT);
    const volume = '0.73640061';
    // 141933200.8345 is half-way between two 12-digit rates: half-even keeps ...834
    for (const [rate, expected] of [
      ['141933200.8345', '141933200.834'],
      ['141933200.8355', '141933200.836'],
      ['141933200.83450000000000001', '141933200.835'],
      ['141933200.83449999999999999', '141933200.834'],
    ] as const) {
      const pv = x.toDecimal(x.mul(x.parseDecimal(rate), x.parseDecimal(volume)));
      const exactRate = x.div(x.parseDecimal(pv), x.parseDecimal(volume));
      expect(exact.publishedRate(exactRate)).toBe(expected);
      expect(estimated(fast.publishedRate, ESTIMATE.div(ESTIMATE.decimal(pv), ESTIMATE.decimal(volume)))).toBe('undecided');
    }
    // far from a tie it answers, and the answer is the exact one
    const pv = x.toDecimal(x.mul(x.parseDecimal('141933200.8341'), x.parseDecimal(volume)));
    expect(fast.publishedRate(ESTIMATE.div(ESTIMATE.decimal(pv), ESTIMATE.decimal(volume)))).toBe('141933200.834');
  });

  it('give up on a divergence at a status threshold or a percent tie', () => {
    const fast = figureRules(ESTIMATE);
    // NGN's verified threshold is 5 %: a divergence of exactly 0.05 is verified, a hair above is caution
    expect(figureRules(x.EXACT).verificationStatus(x.parseDecimal('0.05'), 'NGN')).toBe('verified');
    expect(estimated(fast.verificationStatus, ESTIMATE.decimal('0.05'), 'NGN')).toBe('undecided');
    expect(estimated(fast.verificationStatus, ESTIMATE.decimal('0.050000000000000001'), 'NGN')).toBe('undecided');
    expect(fast.verificationStatus(ESTIMATE.decimal('0.0499'), 'NGN')).toBe('verified');
    // 1.23455 % is a tie at 4 decimals
    expect(estimated(fast.percent, ESTIMATE.decimal('0.0123455'))).toBe('undecided');
    expect(fast.percent(ESTIMATE.decimal('0.0123456'))).toBe(1.2346);
  });

  it('give up on a rate at a power of ten, where the significant digits start', () => {
    const fast = figureRules(ESTIMATE);
    expect(estimated(fast.publishedRate, ESTIMATE.decimal('1000'))).toBe('undecided');
    expect(estimated(fast.publishedRate, ESTIMATE.decimal('999.9999999999999999'))).toBe('undecided');
    expect(fast.publishedRate(ESTIMATE.decimal('999.99999'))).toBe(figureRules(x.EXACT).publishedRate(x.parseDecimal('999.99999')));
  });
});
