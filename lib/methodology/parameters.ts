// The methodology's parameters: every number the published rates are made by, defined here once.
// docs/methodology.md states each in its parameter table (test/lib/methodology/document.test.ts
// fails when they disagree), GET /v1/methodology serves them, the SQL reads its own through
// methodology_parameter() (generated from this table by lib/db/migrate.ts), and every replication
// bundle carries the ones its rate was made with.

/** Semantic version: a parameter change is minor, a formula change major (docs/methodology.md). */
export const METHODOLOGY_VERSION = '1.0.0';
/** The day (UTC) from which this version applies. */
export const METHODOLOGY_EFFECTIVE = '2026-11-24';

export interface Parameter {
  readonly value: number | string;
  readonly unit: string;
  readonly description: string;
  /** Read by SQL through methodology_parameter(name) (numbers only). */
  readonly sql?: true;
}

export const PARAMETERS = {
  bucket_seconds: { value: 300, unit: 'seconds', description: 'Width of a candle bucket and of a certified rate window (5 minutes, aligned to UTC).' },
  rate_significant_digits: { value: 12, unit: 'digits', description: 'A certified rate, fixing or live rate is rounded to this many significant digits.' },
  rounding: { value: 'half_even', unit: 'rule', description: 'Rounding of every published decimal: to the nearest, ties to the even digit.' },
  divergence_pct_decimals: { value: 4, unit: 'digits', description: 'Decimal places of every published percentage: divergence_pct, premiums and changes in percent (a spread in basis points has two fewer).' },
  confidence_decimals: { value: 3, unit: 'digits', description: 'Decimal places of confidence.' },
  outlier_limit: { value: 0.05, unit: 'fraction', description: "A venue whose VWAP deviates from the median of the other venues' VWAPs by more than this is left out (live rates: it comes back once below half of this, so it does not flap)." },
  outlier_min_venues: { value: 3, unit: 'venues', description: 'The outlier test runs only with at least this many venues; a majority is never left out.' },
  verified_pct: { value: 2, unit: 'percent', description: 'Status verified while |divergence| is at most this (quote currencies other than NGN).' },
  caution_pct: { value: 5, unit: 'percent', description: 'Status caution while |divergence| is at most this, unverified above (other than NGN).' },
  verified_pct_ngn: { value: 5, unit: 'percent', description: "NGN's verified threshold (the parallel-market premium)." },
  caution_pct_ngn: { value: 10, unit: 'percent', description: "NGN's caution threshold." },
  fresh_seconds: { value: 900, unit: 'seconds', description: "A venue is fresh while its newest trade is at most this old (data_quality counts fresh venues)." },
  stale_seconds: { value: 3600, unit: 'seconds', description: 'Newest data older than this: data_quality stale; live rates use only venues that traded within it when any did.' },
  live_window_hours: { value: 24, unit: 'hours', description: "A venue's newest 5-minute candle counts for the live rate while it is at most this old.", sql: true },
  synthetic_lookback_hours: { value: 1, unit: 'hours', description: "The live synthetic price uses the USDT leg's newest 5-minute candle at most this old.", sql: true },
  fx_fresh_hours: { value: 36, unit: 'hours', description: "An FX source counts while its own update time is at most this old; the rate is the median of those that count.", sql: true },
  fx_fallback_hours: { value: 720, unit: 'hours', description: 'With no fresh FX source, the newest observation at most this old is used and flagged fx_stale.', sql: true },
  agreement: { value: 0.005, unit: 'fraction', description: 'Confidence: venues whose prices spread by at most this agree and cost nothing.' },
  dispersion_scale: { value: 0.01, unit: 'fraction', description: 'Confidence: the dispersion factor halves at this much spread beyond agreement.' },
  age_grace_seconds: { value: 300, unit: 'seconds', description: 'Confidence: data up to this old costs nothing.' },
  age_decay_seconds: { value: 3600, unit: 'seconds', description: 'Confidence: beyond the grace, the age factor decays as exp(-excess / this).' },
  restatement_threshold_pct: { value: 0.2, unit: 'percent', description: 'A settled value that late trades move by more than this (from the value published) is restated.' },
  restatement_window_hours: { value: 24, unit: 'hours', description: 'Late trades restate a settled value only within this long after its window ends; later, they are counted, not restated.' },
  fixing_local_time: { value: '16:00', unit: 'local time', description: "Each pair's daily fixing at this time of its quote currency's home zone (IANA zone, section 14)." },
  fixing_utc_time: { value: '00:00', unit: 'UTC', description: 'Each pair\'s second daily fixing, at this time UTC.' },
  fixing_window_minutes: { value: 60, unit: 'minutes', description: 'A fixing is the certified rate of the trades of this long before the fixing time.' },
  fixing_lookback_hours: { value: 48, unit: 'hours', description: 'A fixing not yet published (the service was down) is still published from the stored trades if its time is at most this old.' },
  settle_after_seconds: { value: 900, unit: 'seconds', description: 'A bucket settles when every venue has collected past its end, or at the latest this long after it ends (operator setting SETTLE_AFTER_SECONDS; the value in force is served).' },
} as const satisfies Record<string, Parameter>;

export type ParameterName = keyof typeof PARAMETERS;

/** A parameter's value (numbers as numbers). */
export const param = <K extends ParameterName>(name: K): (typeof PARAMETERS)[K]['value'] => PARAMETERS[name].value;

/** Each quote currency's home time zone (IANA), where its daily local fixing is taken. */
export const QUOTE_ZONES: Readonly<Record<string, string>> = {
  NGN: 'Africa/Lagos',
  ZAR: 'Africa/Johannesburg',
  KES: 'Africa/Nairobi',
  GHS: 'Africa/Accra',
  UGX: 'Africa/Kampala',
};

/** |divergence| thresholds in percent for a quote currency. */
export function thresholdsFor(quote: string): { verified: number; caution: number } {
  return quote === 'NGN'
    ? { verified: param('verified_pct_ngn'), caution: param('caution_pct_ngn') }
    : { verified: param('verified_pct'), caution: param('caution_pct') };
}

/** Every parameter's value in force: the table above, with the operator's settlement lag. */
export function parametersInForce(settleAfterSeconds: number): Record<ParameterName, number | string> {
  const values = Object.fromEntries(Object.entries(PARAMETERS).map(([name, p]) => [name, p.value])) as Record<ParameterName, number | string>;
  return { ...values, settle_after_seconds: settleAfterSeconds };
}
