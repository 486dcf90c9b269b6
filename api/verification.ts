// How much to trust a rate: status against the synthetic cross-rate, data quality, and confidence.
// Definitions follow docs/decisions.md ("Verification, confidence, quality"); the same functions
// serve live rates, historical candles and certificates.

export type VerificationStatus = 'verified' | 'caution' | 'unverified';
export type DataQuality = 'high' | 'medium' | 'low' | 'stale';

/** |divergence| thresholds in percent, per quote currency (NGN: the parallel-market premium). */
export const THRESHOLDS: Readonly<Record<string, { verified: number; caution: number }>> = {
  default: { verified: 2, caution: 5 },
  NGN: { verified: 5, caution: 10 },
};

export const thresholdsFor = (quote: string) => THRESHOLDS[quote] ?? THRESHOLDS.default!;

/** A source is fresh while its newest trade is at most this old. */
export const FRESH_SECONDS = 15 * 60;
/** Newest data older than this is stale (and a live request for only such pairs is a 503). */
export const STALE_SECONDS = 60 * 60;

/**
 * Whether a pair is live: its newest data is at most STALE_SECONDS old. The one rule behind
 * /v1/pairs availability.live, the pairs /v1/rates/markets lists, and what /v1/rates/live answers.
 */
export const isLive = (ageSeconds: number): boolean => ageSeconds <= STALE_SECONDS;

/**
 * Venues combined into one rate: sum(pv) / sum(volume) over them, never an average of their VWAPs
 * (the live rate and certificates; the SQL's is vwap() in sql/views/20_candles.sql).
 */
export function combinedVwap(venues: readonly { pv: number; volume: number }[]): { rate: number; volume: number } {
  let pv = 0;
  let volume = 0;
  for (const v of venues) {
    pv += v.pv;
    volume += v.volume;
  }
  return { rate: pv / volume, volume };
}

/** divergence = (vwap - synthetic) / synthetic, as a fraction; null without a synthetic price. */
export function divergence(vwap: number, synthetic: number | null): number | null {
  return synthetic && synthetic > 0 ? (vwap - synthetic) / synthetic : null;
}

export function verificationStatus(div: number | null, quote: string, syntheticOnly = false): VerificationStatus {
  if (syntheticOnly || div === null) return 'unverified';
  const pct = Math.abs(div) * 100;
  const t = thresholdsFor(quote);
  return pct <= t.verified ? 'verified' : pct <= t.caution ? 'caution' : 'unverified';
}

export function dataQuality(freshSources: number, newestAgeSeconds: number, syntheticOnly: boolean): DataQuality {
  if (newestAgeSeconds > STALE_SECONDS) return 'stale';
  if (syntheticOnly || freshSources === 0) return 'low';
  return freshSources >= 2 ? 'high' : 'medium';
}

/** Sources whose prices spread by at most this fraction agree. */
export const AGREEMENT = 0.005;

export interface ConfidenceInputs {
  /** Exchange sources that went into the rate (after outlier exclusion); 0 = synthetic only. */
  readonly sources: number;
  /** (max - min) / mean of the source prices, as a fraction; 0 with one source. */
  readonly dispersion: number;
  /** Divergence from the synthetic price as a fraction; null when there is none. */
  readonly divergence: number | null;
  readonly quote: string;
  readonly ageSeconds: number;
}

/**
 * confidence = S x D x V x A, each factor in (0, 1], rounded to 3 decimals:
 * - S, sources:    1 - 0.5^(n + 1)          (0 -> 0.5, 1 -> 0.75, 2 -> 0.875, 3 -> 0.9375)
 * - D, dispersion: 1 up to 0.5% spread between sources (they agree), then 1 / (1 + excess / 1%)
 * - V, divergence: 1 / (1 + (|div| / caution threshold)^2), 0.5 when there is no synthetic price
 * - A, age:        1 up to 5 minutes, then exp(-(age - 300 s) / 1 h)
 * Each factor is monotone, so more agreeing sources, less dispersion, less divergence and fresher
 * data never lower confidence.
 */
export function confidence(i: ConfidenceInputs): number {
  const s = 1 - 0.5 ** (Math.max(0, i.sources) + 1);
  // Sources within AGREEMENT of each other count as agreeing and cost nothing, so adding an
  // agreeing source (S up) can never lower confidence through D.
  const d = 1 / (1 + Math.max(0, i.dispersion - AGREEMENT) / 0.01);
  const v = i.divergence === null ? 0.5 : 1 / (1 + ((Math.abs(i.divergence) * 100) / thresholdsFor(i.quote).caution) ** 2);
  const a = i.ageSeconds <= 300 ? 1 : Math.exp(-(i.ageSeconds - 300) / 3600);
  return Math.round(s * d * v * a * 1000) / 1000;
}

/** How far source prices spread: (highest - lowest) / mean; 0 with fewer than two. */
export function dispersion(prices: readonly number[]): number {
  if (prices.length < 2) return 0;
  return dispersionOf(prices.length, Math.min(...prices), Math.max(...prices), prices.reduce((a, b) => a + b, 0) / prices.length);
}

/** The same, from a count, lowest, highest and mean (aggregated in SQL for a page of candles). */
export function dispersionOf(n: number, lowest: number, highest: number, mean: number): number {
  return n < 2 || mean <= 0 ? 0 : (highest - lowest) / mean;
}

/** A source's deviation from the median of the others: more than this and it is left out. */
export const OUTLIER_LIMIT = 0.05;

/**
 * The median-of-the-others test: indexes of the sources to leave out of the VWAP. A source is out
 * when it deviates from the median of the others by more than `limit`, or, if it was out before
 * (`wasOut`), until it is back below half the limit (no flapping). Needs three sources for a
 * majority, and never excludes a majority: then it is the market that moved, not the sources.
 * One source at a time, the furthest first, each step among the sources still in: a far-off source
 * pulls the median of the others (with three sources, the mean of two) toward itself, so tested
 * all at once every source looked deviant and none was left out (a venue 100x off, or just 11 %,
 * among three went into the rate and the certificates). The sources left must then agree within
 * the limit (two camps of two: nobody is out).
 */
export function outliers(prices: readonly number[], limit = OUTLIER_LIMIT, wasOut: (i: number) => boolean = () => false): number[] {
  const kept = prices.map((_, i) => i);
  const out: number[] = [];
  while (kept.length >= 3 && (out.length + 1) * 2 < prices.length) {
    let furthest = -1;
    let furthestBy = 0;
    for (const i of kept) {
      const others = median(kept.filter((j) => j !== i).map((j) => prices[j]!));
      const deviation = Math.abs(prices[i]! - others) / others;
      const deviant = deviation > limit || (wasOut(i) && deviation >= limit / 2);
      if (deviant && deviation > furthestBy) {
        furthest = i;
        furthestBy = deviation;
      }
    }
    if (furthest < 0) break;
    out.push(furthest);
    kept.splice(kept.indexOf(furthest), 1);
  }
  // what is left must agree within the limit; if not, no majority says which sources are right
  const agreed = kept.every((i) => {
    const others = median(kept.filter((j) => j !== i).map((j) => prices[j]!));
    return Math.abs(prices[i]! - others) / others <= limit;
  });
  return agreed ? out.sort((a, b) => a - b) : [];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const percent = (fraction: number, digits = 4) => Math.round(fraction * 100 * 10 ** digits) / 10 ** digits;
