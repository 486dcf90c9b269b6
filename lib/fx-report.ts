// An FX source's report at one moment, as the simulated market's history hands it out (sim/) and
// the backfill stores it (pipeline/): defined here, the one folder both may import.

/** One FX source's report at one moment: units of each currency per 1 USD (times in ms). */
export interface FxReport {
  /** The source's id as fx_rates.source names it ('exchangerate_api', 'coinbase'). */
  readonly source: string;
  /** When it was observed. */
  readonly observedAt: number;
  /** The source's own update time. */
  readonly updatedAt: number;
  readonly rates: Readonly<Record<string, number>>;
}
