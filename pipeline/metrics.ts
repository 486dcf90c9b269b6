// What the pipeline tells its observer (the service's Prometheus metrics, built in lib/metrics.ts),
// as plain calls: the pipeline knows nothing of how they are counted or exposed.
import type { VenueRun } from './venue-session.js';

export interface PipelineMetrics {
  /** A venue's collection run ended (a run skipped while the venue pauses after failures is not one). */
  venueRun(venue: string, run: VenueRun): void;
  /**
   * A publish or an FX cycle ended, after `seconds`; `failed`: the publish steps (settle, refresh,
   * fx, fixings, restate, transparency, storage) or FX sources that failed in it.
   */
  cycle(kind: 'publish' | 'fx', seconds: number, failed: readonly string[]): void;
  /** Every pair's settled_through as recorded (at start, then after each settlement recorded). */
  settled(through: ReadonlyMap<string, Date>): void;
  /** Settled values restated in a publish (late trades moved them beyond the threshold). */
  restated(count: number): void;
}
