// Turns a snapshot entry into the contract's Live rate object for one tier, at request time:
// ages, quality, status and confidence move with the clock even between snapshot refreshes.
// A field the tier may not see is absent, never null.
import * as x from '../../lib/methodology/exact.js';
import { METHODOLOGY_VERSION } from '../../lib/methodology/parameters.js';
import * as v from '../../lib/methodology/rules.js';
import type { CertificateSigner } from '../../lib/signer.js';
import { signedRatePayload } from '../../lib/signer.js';
import type { LiveRate } from '../schemas.js';
import { numeric, timestamp } from '../../lib/format.js';
import { atLeast, type Tier } from '../../lib/tiers.js';
import { assess, type Assessment } from '../../lib/live/assess.js';
import type { LiveEntry } from '../../lib/live/snapshot.js';

export interface PresentOptions {
  readonly tier: Tier;
  readonly includeSynthetic?: boolean;
  readonly includeSources?: boolean;
  readonly includeAudit?: boolean;
  readonly now: Date;
  readonly signer: CertificateSigner;
  /** Where the data came from: a simulated rate's audit payload says so. */
  readonly market?: 'real' | 'simulated';
}

function notes(e: LiveEntry, a: Assessment): string {
  if (e.calculation === 'synthetic') {
    return `No exchange trades in the last 24 hours: rate is the synthetic cross-rate ${e.base}/USDT x USD/${e.quote}.`;
  }
  const names = e.used.map((s) => s.exchange).join(', ');
  const parts = [`VWAP of ${e.used.length} exchange${e.used.length === 1 ? '' : 's'} (${names}).`];
  if (a.divergence !== null) {
    const pct = x.toFixedPlaces(x.abs(x.mul(a.divergence, x.rational(100n))), 2);
    parts.push(`${pct}% ${a.divergence.n >= 0n ? 'above' : 'below'} the synthetic cross-rate.`);
  }
  if (e.excluded.length) parts.push(`Left out as outliers: ${e.excluded.map((s) => s.exchange).join(', ')}.`);
  return parts.join(' ');
}

export function auditPayload(e: LiveEntry, market: 'real' | 'simulated' = 'real'): string {
  const sources = e.calculation === 'synthetic' ? ['synthetic'] : e.used.map((s) => s.exchange);
  return signedRatePayload(e.pair, e.rateText, sources, timestamp(e.time), market);
}

/** `assessment`: pass it when the caller already made one for this entry and moment. */
export function presentLive(e: LiveEntry, o: PresentOptions, assessment?: Assessment): LiveRate {
  const a = assessment ?? assess(e, o.now);
  const sources =
    e.calculation === 'synthetic'
      ? [{ exchange: 'synthetic', rate: numeric(e.rate), time: timestamp(e.time) }]
      : e.used.map((s) => ({ exchange: s.exchange, rate: numeric(s.price), time: timestamp(s.lastTradeAt) }));
  const out: LiveRate = {
    rate: numeric(e.rate),
    calculation: e.calculation,
    data_freshness_seconds: a.ageSeconds,
    sources,
    status: a.status,
    data_quality: a.quality,
    methodology_version: METHODOLOGY_VERSION,
  };
  if (!atLeast(o.tier, 'builder')) return out;

  out.confidence = a.confidence;
  // a synthetic-only rate is the synthetic price itself: 0 divergence (flag synthetic_only says why);
  // null only when there is no synthetic price to compare with (flag synthetic_unavailable)
  const shown = e.calculation === 'synthetic' ? x.ZERO : a.divergence;
  out.synthetic_divergence_pct = shown === null ? null : v.percent(shown);
  out.notes = notes(e, a);
  out.flags = a.flags;
  if (o.includeSources || o.includeSynthetic) {
    const pricing: NonNullable<LiveRate['pricing']> = {};
    if (o.includeSources) {
      pricing.exchange = {
        method: e.calculation === 'vwap' ? 'vwap' : 'synthetic',
        price: numeric(e.rate),
        sources: e.used.map((s) => ({
          exchange: s.exchange,
          price: numeric(s.price),
          weight: numeric(s.weight),
          last_update: timestamp(s.lastTradeAt),
          trades: s.trades,
          volume: x.toDecimal(s.volume),
        })),
        excluded: e.excluded.map((s) => ({ exchange: s.exchange, reason: s.reason })),
      };
    }
    // with a synthetic price there is always a divergence (0 for a synthetic-only rate)
    if (o.includeSynthetic && e.synthetic && shown !== null) {
      pricing.synthetic = {
        method: 'cross_rate',
        price: numeric(e.synthetic.price),
        divergence: x.toNumber(shown, 12),
        divergence_pct: `${x.toFixedPlaces(x.mul(shown, x.rational(100n)), 2, true)}%`,
      };
    }
    out.pricing = pricing;
  }
  if (o.includeAudit && atLeast(o.tier, 'enterprise')) {
    out.audit = { signature: `sha256:${o.signer.hmac(auditPayload(e, o.market))}` };
  }
  return out;
}
