// The figures the API publishes from stored sums, each computed here from its inputs by the rules of
// ./rules.ts (rounding, divergence, status, confidence): a candle's (historical, exports, and the
// end-of-day snapshot's VWAP), the spread, the premium (now and over time) and an index's change.
// The live rate is combined in lib/live/snapshot.ts, a certified rate and a fixing in ./window.ts,
// an index's value in sql/functions/90_indices.sql (rounded here) (ARCHITECTURE.md, "Where each published figure
// is computed").
import type { Arithmetic, Rational } from './exact.js';
import * as x from './exact.js';
import { param } from './parameters.js';
import { basisPoints, divergence, figureRules, percent, publishedRate, venuesQuality, verificationStatus, type VerificationStatus } from './rules.js';

/** What a candle's figures are made from: its sums, its USDT leg's and the FX rate, its venues' spread (candle_page's row). */
export interface CandleSums {
  readonly pv: string;
  readonly volume: string;
  readonly usd_pv: string | null;
  readonly usd_volume: string | null;
  readonly units_per_usd: string | null;
  /** How many venues traded in the bucket, and their VWAPs' lowest, highest and mean. */
  readonly venues: number;
  readonly venue_min: string | null;
  readonly venue_max: string | null;
  readonly venue_mean: string | null;
}

/**
 * A candle's published figures from its sums, in arithmetic A, as decimal text: VWAP = pv / volume
 * and synthetic price = usd_pv / usd_volume x units_per_usd, divided exactly from the sums (not
 * from PostgreSQL's quotient, which is already rounded to some scale) and rounded once as rates are
 * published; status from their divergence. `full` (Builder and up): also the confidence (the venue
 * dispersion from each venue's VWAP as the database divides it), divergence and synthetic price;
 * without it they are null and not worked out.
 */
export function candleFiguresIn<T>(A: Arithmetic<T>) {
  const v = figureRules(A);
  const parsed = (text: string | null) => A.decimal(text ?? '0');
  return (c: CandleSums, quote: string, full = true) => {
    const volume = A.decimal(c.volume);
    const vwap = A.positive(volume) ? A.div(A.decimal(c.pv), volume) : null;
    const usdVolume = c.usd_volume === null ? null : A.decimal(c.usd_volume);
    const synthetic =
      c.units_per_usd === null || c.usd_pv === null || !usdVolume || !A.positive(usdVolume) ? null : A.mul(A.div(A.decimal(c.usd_pv), usdVolume), A.decimal(c.units_per_usd));
    const div = vwap ? v.divergence(vwap, synthetic) : null;
    const published = vwap ? v.publishedRate(vwap) : null;
    const status = v.verificationStatus(div, quote);
    // object literals of one shape, never a spread: a page shapes 10,000 of these, and a spread
    // object is built property by property on V8's slow path (a third of a candle's figures' time)
    if (!full) return { vwap: published, status, confidence: null, divergence_pct: null, synthetic_price: null };
    const mean = parsed(c.venue_mean);
    const dispersion = c.venues < 2 || !A.positive(mean) ? A.ratio(0) : A.div(A.sub(parsed(c.venue_max), parsed(c.venue_min)), mean);
    return {
      vwap: published,
      status,
      confidence: v.confidence({ sources: c.venues, dispersion, divergence: div, quote, ageSeconds: 0 }),
      divergence_pct: div === null ? null : v.percentText(div),
      synthetic_price: synthetic ? v.publishedRate(synthetic) : null,
    };
  };
}

/** A candle's data quality: high with two venues or more, medium with one, low with none. */
export const candleDataQuality = venuesQuality;

/** A VWAP as published, from its sums (the end-of-day snapshot's: the day's candle). */
export const publishedVwap = (pv: string, volume: string): number => Number(publishedRate(x.div(x.parseDecimal(pv), x.parseDecimal(volume))));

/** The premium now (GET /v1/premium's `current`): the live rate against its synthetic price, exact; null without a positive synthetic price. */
export function premiumNow(rate: Rational, synthetic: Rational, quote: string): { premium: number; premium_pct: number; status: VerificationStatus } | null {
  const div = divergence(rate, synthetic);
  if (!div) return null;
  return { premium: Number(publishedRate(x.sub(rate, synthetic))), premium_pct: percent(div), status: verificationStatus(div, quote) };
}

/** One bucket of premium_series (sql/functions/50_premium_series.sql), as numeric text. */
export interface PremiumBucket {
  readonly avg_premium_pct: string;
  readonly max_premium_pct: string;
  readonly min_premium_pct: string;
  readonly data_points: string | number;
}

/** A percentage the database computed (numeric text) as published: rounded half-even to divergence_pct_decimals. */
const publishedPct = (pct: Rational): number => Number(x.toFixedPlaces(pct, param('divergence_pct_decimals')));

/** A premium series' percentages as published, and over the whole range: the average weighted by observations, the extremes; exact. */
export function premiumSeriesFigures(rows: readonly PremiumBucket[]) {
  const buckets = rows.map((r) => ({ avg: x.parseDecimal(r.avg_premium_pct), max: x.parseDecimal(r.max_premium_pct), min: x.parseDecimal(r.min_premium_pct), points: Number(r.data_points) }));
  const points = buckets.reduce((n, b) => n + b.points, 0);
  const weighted = x.sum(buckets.map((b) => x.mul(b.avg, x.rational(BigInt(b.points)))));
  const extreme = (pick: (b: (typeof buckets)[number]) => Rational, sign: 1 | -1) =>
    buckets.length ? publishedPct(buckets.map(pick).reduce((a, b) => (x.compare(b, a) === sign ? b : a))) : null;
  return {
    buckets: buckets.map((b) => ({ avg_premium_pct: publishedPct(b.avg), max_premium_pct: publishedPct(b.max), min_premium_pct: publishedPct(b.min), data_points: b.points })),
    overall: {
      avg_premium_pct: points ? publishedPct(x.div(weighted, x.rational(BigInt(points)))) : null,
      max_premium_pct: extreme((b) => b.max, 1),
      min_premium_pct: extreme((b) => b.min, -1),
      data_points: points,
    },
  };
}

/**
 * The spread (GET /v1/rates/spread) from the bucket's low (bid) and high (ask) across venues and its
 * synthetic price (positive), exact: mid, spread and the premium of the mid over the synthetic price as rates
 * are published; the spread in basis points of the mid and the premium in percent as percentages
 * are (lib/methodology/rules.ts).
 */
export function spreadFigures(bidText: string, askText: string, syntheticText: string) {
  const bid = x.parseDecimal(bidText);
  const ask = x.parseDecimal(askText);
  const synthetic = x.parseDecimal(syntheticText);
  const mid = x.div(x.add(bid, ask), x.rational(2n));
  const spread = x.sub(ask, bid);
  return {
    bid: Number(publishedRate(bid)),
    ask: Number(publishedRate(ask)),
    mid: Number(publishedRate(mid)),
    spread: Number(publishedRate(spread)),
    spread_bps: basisPoints(x.div(spread, mid)),
    synthetic: Number(publishedRate(synthetic)),
    premium: Number(publishedRate(x.sub(mid, synthetic))),
    premium_pct: percent(x.div(x.sub(mid, synthetic), synthetic)),
  };
}

/** An index's value and its change over 24 hours (GET /v1/indices) from the two values as numeric text, exact: value and change as rates are published, the change in percent as percentages are; null where a value is missing. */
export function indexFigures(valueText: string | null | undefined, previousText: string | null | undefined) {
  const value = valueText == null ? null : x.parseDecimal(valueText);
  const previous = previousText == null ? null : x.parseDecimal(previousText);
  const change = value && previous ? x.sub(value, previous) : null;
  return {
    value: value ? Number(publishedRate(value)) : null,
    change_24h: change ? Number(publishedRate(change)) : null,
    change_pct_24h: change && previous && previous.n !== 0n ? percent(x.div(change, previous)) : null,
  };
}
