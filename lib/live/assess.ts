// How a snapshot entry stands at a moment: its age, verification status, data quality,
// confidence, divergence from the synthetic price and flags, by the methodology's rules. They move
// with the clock between rebuilds, so they are worked out when read: by the API for each answer
// (api/live/present.ts) and by the webhook alerts after each cycle.
import type { Rational } from '../methodology/exact.js';
import * as v from '../methodology/rules.js';
import type { LiveEntry } from './snapshot.js';

export interface Assessment {
  readonly ageSeconds: number;
  readonly status: v.VerificationStatus;
  readonly quality: v.DataQuality;
  readonly confidence: number;
  /** exact; null without a synthetic price, and for a synthetic-only rate */
  readonly divergence: Rational | null;
  readonly flags: string[];
}

export function assess(e: LiveEntry, now: Date): Assessment {
  const ageSeconds = Math.max(0, Math.floor((now.getTime() - e.time.getTime()) / 1000));
  const syntheticOnly = e.calculation === 'synthetic';
  const fresh = e.used.filter((s) => now.getTime() - s.lastTradeAt.getTime() <= v.FRESH_SECONDS * 1000).length;
  const divergence = syntheticOnly ? null : v.divergence(e.exactRate, e.synthetic?.exact ?? null);
  const quality = v.dataQuality(fresh, ageSeconds, syntheticOnly);
  const flags: string[] = [];
  if (syntheticOnly) flags.push('synthetic_only');
  if (e.used.length === 1) flags.push('single_source');
  if (e.excluded.length > 0) flags.push('outlier_excluded');
  if (quality === 'stale') flags.push('stale');
  if (e.synthetic?.fxStale) flags.push('fx_stale');
  if (!syntheticOnly && !e.synthetic) flags.push('synthetic_unavailable');
  return {
    ageSeconds,
    status: v.verificationStatus(divergence, e.quote, syntheticOnly),
    quality,
    confidence: v.confidence({
      sources: e.used.length,
      dispersion: v.dispersion(e.used.map((s) => s.vwap)),
      divergence,
      quote: e.quote,
      ageSeconds,
    }),
    divergence,
    flags,
  };
}
