// A certified rate over one window of time (a 5-minute bucket for certificates, the hour before a
// fixing), computed from its inputs exactly as docs/methodology.md states and as the verifiers in
// verify/ recompute it from a replication bundle: each venue's trades summed, outliers left out,
// the kept venues combined, the synthetic cross-rate from the USDT leg and the FX rate in force,
// divergence, status, confidence and data quality. Pure: the inputs are read by the pipeline.
import * as x from './exact.js';
import type { Rational } from './exact.js';
import { combineVenues, confidence, dispersion, divergence, percent, publishedRate, venuesQuality, verificationStatus, type DataQuality, type ExclusionReason, type VerificationStatus } from './rules.js';

/** A trade exactly as stored: decimal strings, the venue's own id and time. */
export interface TradeRecord {
  readonly exchange: string;
  readonly trade_id: string;
  /** ISO 8601, +00:00, microseconds as stored */
  readonly time: string;
  readonly price: string;
  readonly amount: string;
  readonly side: 'buy' | 'sell' | null;
}

/** A venue listed for the pair, and how far it had collected when the window was certified. */
export interface ListedVenue {
  readonly exchange: string;
  readonly collected_through: string | null;
}

/** One venue's sums of the USDT leg over the window (from its 5-minute candles). */
export interface LegVenue {
  readonly exchange: string;
  readonly pv: string;
  readonly volume: string;
  readonly trades: number;
}

export interface FxObservation {
  readonly source: string;
  readonly units_per_usd: string;
  readonly time: string;
  readonly source_updated_at: string;
}

/** The FX rate in force at the start of the window's hour, as the synthetic price used it. */
export interface FxInForce {
  readonly currency: string;
  readonly hour: string;
  readonly units_per_usd: string;
  readonly source_updated_at: string;
  /** 0: no source was fresh, the newest observation was used (fx_stale) */
  readonly fresh_sources: number;
  /** each source's newest observation at or before the hour (within fx_fresh_hours) */
  readonly observations: readonly FxObservation[];
}

export interface WindowInputs {
  readonly pair: string;
  readonly base: string;
  readonly quote: string;
  readonly start: Date;
  readonly end: Date;
  readonly trades: readonly TradeRecord[];
  readonly venues: readonly ListedVenue[];
  /** BASE/USDT per venue; null when the base is a USD coin (1 USDT = 1 USDC = 1 USD) */
  readonly usdtLeg: { readonly pair: string; readonly venues: readonly LegVenue[] } | null;
  readonly fx: FxInForce | null;
}

export interface VenueResult {
  readonly exchange: string;
  readonly trades: number;
  /** sum of amounts, exact */
  readonly volume: string;
}

export interface WindowResult {
  /** null when no venue traded in the window (minimum-data rule: no rate) */
  readonly rate: string | null;
  readonly exactRate: Rational | null;
  readonly sources: readonly VenueResult[];
  readonly excluded: readonly { readonly exchange: string; readonly reason: ExclusionReason }[];
  readonly syntheticPrice: string | null;
  readonly divergencePct: number | null;
  readonly status: VerificationStatus;
  readonly confidence: number | null;
  readonly dataQuality: DataQuality;
}

const byExchange = (a: { exchange: string }, b: { exchange: string }) => (a.exchange < b.exchange ? -1 : a.exchange > b.exchange ? 1 : 0);

/** The synthetic cross-rate: the USDT leg's VWAP across its venues x USD/QUOTE; null without either. */
export function syntheticPrice(w: Pick<WindowInputs, 'usdtLeg' | 'fx'>): Rational | null {
  if (!w.fx) return null;
  const fx = x.parseDecimal(w.fx.units_per_usd);
  if (!w.usdtLeg) return fx;
  const legs = w.usdtLeg.venues;
  const volume = x.sum(legs.map((v) => x.parseDecimal(v.volume)));
  if (volume.n === 0n) return null;
  return x.mul(x.div(x.sum(legs.map((v) => x.parseDecimal(v.pv))), volume), fx);
}

export function computeWindow(w: WindowInputs): WindowResult {
  const sums = new Map<string, { exchange: string; pv: Rational; volume: Rational; trades: number }>();
  for (const t of w.trades) {
    const price = x.parseDecimal(t.price);
    const amount = x.parseDecimal(t.amount);
    const s = sums.get(t.exchange) ?? { exchange: t.exchange, pv: x.ZERO, volume: x.ZERO, trades: 0 };
    sums.set(t.exchange, { exchange: t.exchange, pv: x.add(s.pv, x.mul(price, amount)), volume: x.add(s.volume, amount), trades: s.trades + 1 });
  }
  const traded = [...sums.values()].sort(byExchange);
  const combined = combineVenues(traded);
  const excluded: { exchange: string; reason: ExclusionReason }[] = combined.excluded.map((v) => ({ exchange: v.exchange, reason: 'outlier' as const }));
  for (const v of w.venues) {
    if (sums.has(v.exchange)) continue;
    // without trades: quiet if it had collected past the window's end, else it was behind
    const caughtUp = v.collected_through !== null && Date.parse(v.collected_through) >= w.end.getTime();
    excluded.push({ exchange: v.exchange, reason: caughtUp ? 'no_trades' : 'stale' });
  }
  excluded.sort(byExchange);
  const synthetic = syntheticPrice(w);
  const rate = combined.rate;
  const div = rate ? divergence(rate, synthetic) : null;
  const sources = combined.used.map((v) => ({ exchange: v.exchange, trades: v.trades, volume: x.toDecimal(v.volume) }));
  return {
    rate: rate ? publishedRate(rate) : null,
    exactRate: rate,
    sources,
    excluded,
    syntheticPrice: synthetic ? publishedRate(synthetic) : null,
    divergencePct: div === null ? null : percent(div),
    status: verificationStatus(div, w.quote, rate === null),
    confidence: rate ? confidence({ sources: sources.length, dispersion: dispersion(combined.usedPrices), divergence: div, quote: w.quote, ageSeconds: 0 }) : null,
    dataQuality: venuesQuality(sources.length),
  };
}
