// What the alert detectors (pipeline/webhooks/detect.ts) read about one pair after a cycle: made by
// pipeline/webhooks/observations.ts from the live snapshot and the venues' health (lib/live/),
// passed in by pipeline/process.ts, so the detectors depend on neither.
export interface PairObservation {
  readonly pair: string;
  /** The live rate; null: none (no data within 24 hours). */
  readonly rate: number | null;
  /** The synthetic cross-rate it is checked against; null: none. */
  readonly synthetic: number | null;
  /** (rate - synthetic) / synthetic in percent; null: nothing to compare (no synthetic, or the rate is the synthetic). */
  readonly divergencePct: number | null;
  /** Seconds since the newest data behind the rate; null: no data. */
  readonly ageSeconds: number | null;
  /** Venues failing for this pair (their last fetch failed, or silent for 15 minutes). */
  readonly sourcesFailing: readonly string[];
  /** When it was observed. */
  readonly at: Date;
}
