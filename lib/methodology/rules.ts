// The rules a rate is made and judged by (docs/methodology.md), in exact arithmetic: how venues
// combine into one VWAP, which venue is an outlier, the verification status against the
// synthetic cross-rate, data quality, confidence, and rounding. The pipeline (certificates,
// fixings), the live snapshot and the API's routes all use these; verify/ recomputes them alone.
import * as x from './exact.js';
import type { Arithmetic, Rational } from './exact.js';
import { param, thresholdsFor } from './parameters.js';

export type VerificationStatus = 'verified' | 'caution' | 'unverified';
export type DataQuality = 'high' | 'medium' | 'low' | 'stale';
/** Why a venue listed for a pair did not enter its rate. */
export type ExclusionReason = 'outlier' | 'stale' | 'no_trades';

export const FRESH_SECONDS = param('fresh_seconds');
export const STALE_SECONDS = param('stale_seconds');

/**
 * Whether a pair is live: its newest data is at most STALE_SECONDS old. The one rule behind
 * /v1/pairs availability.live, the pairs /v1/rates/markets lists, and what /v1/rates/live answers.
 */
export const isLive = (ageSeconds: number): boolean => ageSeconds <= STALE_SECONDS;

const dec = (v: number | string) => x.parseDecimal(String(v));
// the parameters these rules compare with, as exact values (read once: they are constants)
const OUTLIER_LIMIT = dec(param('outlier_limit'));

/** One venue's sums over a window: VWAP = pv / volume. */
export interface VenueSums {
  readonly exchange: string;
  /** sum(price x amount), exact */
  readonly pv: Rational;
  /** sum(amount), exact, > 0 */
  readonly volume: Rational;
  readonly trades: number;
}

export const vwapOf = (v: { pv: Rational; volume: Rational }): Rational => x.div(v.pv, v.volume);

/**
 * Venues combined into one rate: sum(pv) / sum(volume) over the venues kept, never an average of
 * their VWAPs. Outliers (below) are left out first; `wasOut` carries the live rate's memory.
 */
export function combineVenues<V extends VenueSums>(venues: readonly V[], wasOut: (v: V) => boolean = () => false) {
  const prices = venues.map(vwapOf);
  const out = new Set(outliers(prices, OUTLIER_LIMIT, (i) => wasOut(venues[i]!)));
  const used = venues.filter((_, i) => !out.has(i));
  const excluded = venues.filter((_, i) => out.has(i));
  const volume = x.sum(used.map((v) => v.volume));
  return {
    /** exact; null without any venue */
    rate: used.length > 0 ? x.div(x.sum(used.map((v) => v.pv)), volume) : null,
    volume,
    used,
    usedPrices: prices.filter((_, i) => !out.has(i)),
    excluded,
  };
}

/**
 * The median-of-the-others test: indexes of the venues to leave out. A venue is out when its price
 * deviates from the median of the others by more than `limit`, or, if it was out before (`wasOut`),
 * until it is back below half the limit (no flapping). Needs outlier_min_venues for a majority, and
 * never excludes a majority: then it is the market that moved. One venue at a time, the furthest
 * first, each step among the venues still in (a far-off venue pulls the median of the others
 * toward itself, so tested all at once every venue can look deviant); the venues left must then
 * agree within the limit, else nobody is out (two camps: no majority says which is right).
 */
export function outliers(prices: readonly Rational[], limit: Rational = OUTLIER_LIMIT, wasOut: (i: number) => boolean = () => false): number[] {
  const back = x.div(limit, x.rational(2n));
  const deviation = (i: number, among: readonly number[]) => {
    const others = x.median(among.filter((j) => j !== i).map((j) => prices[j]!));
    return x.div(x.abs(x.sub(prices[i]!, others)), others);
  };
  const kept = prices.map((_, i) => i);
  const out: number[] = [];
  while (kept.length >= param('outlier_min_venues') && (out.length + 1) * 2 < prices.length) {
    let furthest = -1;
    let furthestBy = x.ZERO;
    for (const i of kept) {
      const d = deviation(i, kept);
      const deviant = x.compare(d, limit) > 0 || (wasOut(i) && x.compare(d, back) >= 0);
      if (deviant && x.compare(d, furthestBy) > 0) {
        furthest = i;
        furthestBy = d;
      }
    }
    if (furthest < 0) break;
    out.push(furthest);
    kept.splice(kept.indexOf(furthest), 1);
  }
  const agreed = kept.length < 2 || kept.every((i) => x.compare(deviation(i, kept), limit) <= 0);
  return agreed ? out.sort((a, b) => a - b) : [];
}

/** A settled window's or candle's data quality, from how many venues traded in it. */
export const venuesQuality = (venues: number): Exclude<DataQuality, 'stale'> => (venues >= 2 ? 'high' : venues === 1 ? 'medium' : 'low');

export function dataQuality(freshSources: number, newestAgeSeconds: number, syntheticOnly: boolean): DataQuality {
  if (newestAgeSeconds > STALE_SECONDS) return 'stale';
  if (syntheticOnly || freshSources === 0) return 'low';
  return freshSources >= 2 ? 'high' : 'medium';
}

/** How far venue prices spread: (highest - lowest) / mean; 0 with fewer than two. */
export function dispersion(prices: readonly Rational[]): Rational {
  if (prices.length < 2) return x.ZERO;
  const sorted = [...prices].sort(x.compare);
  const mean = x.div(x.sum(prices), x.rational(BigInt(prices.length)));
  return mean.n > 0n ? x.div(x.sub(sorted.at(-1)!, sorted[0]!), mean) : x.ZERO;
}

/** What confidence is computed from. */
export interface ConfidenceInputs<T = Rational> {
  /** Exchange venues that went into the rate (after outliers); 0 = synthetic only. */
  readonly sources: number;
  /** (max - min) / mean of their prices. */
  readonly dispersion: T;
  /** Divergence from the synthetic price; null when there is none. */
  readonly divergence: T | null;
  readonly quote: string;
  readonly ageSeconds: number;
}

/**
 * The rules of a published figure (rounding, divergence, status, confidence), written once over an
 * Arithmetic: EXACT (rationals) defines them; ESTIMATE (./estimate.ts) reaches the same answers in
 * doubles or throws Undecided.
 */
export function figureRules<T>(A: Arithmetic<T>) {
  const HUNDRED = A.ratio(100);
  const ONE = A.ratio(1);
  const ZERO = A.ratio(0);
  const AGREEMENT = A.decimal(String(param('agreement')));
  const DISPERSION_SCALE = A.decimal(String(param('dispersion_scale')));
  const thresholds = new Map<string, { verified: T; caution: T }>();
  const thresholdsOf = (quote: string) => {
    let t = thresholds.get(quote);
    if (!t) {
      const { verified, caution } = thresholdsFor(quote);
      thresholds.set(quote, (t = { verified: A.decimal(String(verified)), caution: A.decimal(String(caution)) }));
    }
    return t;
  };

  const rules = {
    /** A rate as published: rounded half-even to rate_significant_digits, a plain decimal string. */
    publishedRate: (r: T): string => A.toSignificant(r, param('rate_significant_digits')),

    /** divergence = (rate - synthetic) / synthetic, a fraction; null without a synthetic price. */
    divergence: (rate: T, synthetic: T | null): T | null => (synthetic && A.positive(synthetic) ? A.div(A.sub(rate, synthetic), synthetic) : null),

    verificationStatus(div: T | null, quote: string, syntheticOnly = false): VerificationStatus {
      if (syntheticOnly || div === null) return 'unverified';
      const pct = A.mul(A.abs(div), HUNDRED);
      const t = thresholdsOf(quote);
      return A.compare(pct, t.verified) <= 0 ? 'verified' : A.compare(pct, t.caution) <= 0 ? 'caution' : 'unverified';
    },

    /** A fraction (a divergence, a premium, a change) as the percent the API shows: rounded half-even to divergence_pct_decimals, a plain decimal string. */
    percentText: (fraction: T): string => A.toFixedPlaces(A.mul(fraction, HUNDRED), param('divergence_pct_decimals')),

    /**
     * confidence = S x D x V x A, each factor in (0, 1], rounded half-even to confidence_decimals:
     * - S, sources:    1 - 0.5^(n + 1)          (0 -> 0.5, 1 -> 0.75, 2 -> 0.875, 3 -> 0.9375)
     * - D, dispersion: 1 up to `agreement` spread, then 1 / (1 + excess / dispersion_scale)
     * - V, divergence: 1 / (1 + (|div| in percent / caution threshold)^2), 0.5 without a synthetic price
     * - A, age:        1 up to age_grace_seconds, then exp(-(age - grace) / age_decay_seconds)
     * S, D and V are exact; A is 1 for certificates and fixings (their age is 0), so theirs is exact
     * too. Each factor is monotone: better inputs never lower confidence.
     */
    confidence(i: ConfidenceInputs<T>): number {
      const s = A.sub(ONE, A.ratio(1, 2 ** (Math.max(0, i.sources) + 1)));
      const excess = A.sub(i.dispersion, AGREEMENT);
      const d = A.compare(excess, ZERO) > 0 ? A.div(ONE, A.add(ONE, A.div(excess, DISPERSION_SCALE))) : ONE;
      let v = A.ratio(1, 2);
      if (i.divergence !== null) {
        const ratio = A.div(A.mul(A.abs(i.divergence), HUNDRED), thresholdsOf(i.quote).caution);
        v = A.div(ONE, A.add(ONE, A.mul(ratio, ratio)));
      }
      const exact = A.mul(A.mul(s, d), v);
      const grace = param('age_grace_seconds');
      if (i.ageSeconds <= grace) return Number(A.toFixedPlaces(exact, param('confidence_decimals')));
      const a = Math.exp(-(i.ageSeconds - grace) / param('age_decay_seconds'));
      const f = 10 ** param('confidence_decimals');
      return Math.round(Number(A.toSignificant(exact, 17)) * a * f) / f;
    },
  };
  return {
    ...rules,
    percent: (fraction: T): number => Number(rules.percentText(fraction)),
    /** A fraction in basis points, to the same precision as a percent (two places fewer). */
    basisPoints: (fraction: T): number => Number(A.toFixedPlaces(A.mul(fraction, A.ratio(10_000)), param('divergence_pct_decimals') - 2)),
  };
}

export const { publishedRate, divergence, verificationStatus, percent, basisPoints, confidence } = figureRules(x.EXACT);
