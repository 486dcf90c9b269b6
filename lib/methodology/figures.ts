// The figures the API publishes from stored sums, each computed here from its inputs by the rules of
// ./rules.ts (rounding, divergence, status, confidence): a candle's (historical, exports, and the
// end-of-day snapshot's VWAP), the spread, the premium (now and over time) and an index's change.
// The live rate is combined in lib/live/snapshot.ts, a certified rate and a fixing in ./window.ts,
// an index's value in sql/functions/90_indices.sql (ARCHITECTURE.md, "Where each published figure
// is computed").
import type { Arithmetic, Rational } from './exact.js';
import * as x from './exact.js';
import { divergence, figureRules, percent, publishedRate, venuesQuality, verificationStatus, type VerificationStatus } from './rules.js';
import { num, round } from '../format.js';

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
    const shown = { vwap: vwap ? v.publishedRate(vwap) : null, status: v.verificationStatus(div, quote) };
    if (!full) return { ...shown, confidence: null, divergence_pct: null, synthetic_price: null };
    const mean = parsed(c.venue_mean);
    const dispersion = c.venues < 2 || !A.positive(mean) ? A.ratio(0) : A.div(A.sub(parsed(c.venue_max), parsed(c.venue_min)), mean);
    return {
      ...shown,
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

const PREMIUM_PCT_DECIMALS = 4;

/** A premium series' percentages as published (4 decimals), and over the whole range: the average weighted by observations, the extremes. */
export function premiumSeriesFigures(rows: readonly PremiumBucket[]) {
  const points = rows.reduce((n, r) => n + Number(r.data_points), 0);
  const avg = points ? rows.reduce((s, r) => s + Number(r.avg_premium_pct) * Number(r.data_points), 0) / points : null;
  return {
    buckets: rows.map((r) => ({
      avg_premium_pct: round(Number(r.avg_premium_pct), PREMIUM_PCT_DECIMALS),
      max_premium_pct: round(Number(r.max_premium_pct), PREMIUM_PCT_DECIMALS),
      min_premium_pct: round(Number(r.min_premium_pct), PREMIUM_PCT_DECIMALS),
      data_points: Number(r.data_points),
    })),
    overall: {
      avg_premium_pct: avg === null ? null : round(avg, PREMIUM_PCT_DECIMALS),
      max_premium_pct: rows.length ? round(Math.max(...rows.map((r) => Number(r.max_premium_pct))), PREMIUM_PCT_DECIMALS) : null,
      min_premium_pct: rows.length ? round(Math.min(...rows.map((r) => Number(r.min_premium_pct))), PREMIUM_PCT_DECIMALS) : null,
      data_points: points,
    },
  };
}

/**
 * The spread (GET /v1/rates/spread) from the bucket's low (bid) and high (ask) across venues and its
 * synthetic price: mid, spread, spread in basis points (2 decimals), premium of the mid over the
 * synthetic price, absolute and in percent (4 decimals).
 */
export function spreadFigures(bidText: string, askText: string, syntheticText: string) {
  const bid = Number(bidText);
  const ask = Number(askText);
  const mid = (bid + ask) / 2;
  const synthetic = Number(syntheticText);
  const premiumPct = ((mid - synthetic) / synthetic) * 100;
  return { bid, ask, mid, spread: ask - bid, spread_bps: round(((ask - bid) / mid) * 10_000, 2), synthetic, premium: mid - synthetic, premiumPct, premium_pct: round(premiumPct, 4) };
}

/** An index's change over 24 hours (GET /v1/indices), absolute and in percent (4 decimals); null without both values. */
export function indexChange(value: number | null, previous: number | null): { change_24h: number | null; change_pct_24h: number | null } {
  const change = value !== null && previous !== null ? value - previous : null;
  return { change_24h: change === null ? null : num(change), change_pct_24h: change === null || !previous ? null : round((change / previous) * 100, 4) };
}
