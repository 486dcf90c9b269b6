// The alert detectors: pure functions from one cycle's observations (lib/webhooks/observation.ts),
// each endpoint's thresholds and the alerts in force to the events to send and the alerts in force
// after. An alert starts the first time its condition holds and ends only once the condition has
// been clearly over (below a lower bound: hysteresis) for CALM_TO_END evaluations in a row, so a
// value hovering at the threshold sends one alert, not one per cycle.
import { eventTime, type EventType, type NewEvent } from '../../lib/webhooks/events.js';
import type { PairObservation } from '../../lib/webhooks/observation.js';

/** Evaluations in a row the condition must be clearly over before an alert ends. */
export const CALM_TO_END = 2;
/** A divergence alert ends below this share of its threshold. */
const DIVERGENCE_CLEAR_RATIO = 0.8;
/** A staleness alert ends once the data is younger than this share of its limit. */
const STALE_CLEAR_RATIO = 0.5;

export type AlertKind = Extract<EventType, 'pair.divergence' | 'pair.stale' | 'source.failing'>;
export const ALERT_KINDS: readonly AlertKind[] = ['pair.divergence', 'pair.stale', 'source.failing'];

/** Where a condition stands: past its threshold, between the bounds, clearly over, or not known (no data). */
export type Reading = 'beyond' | 'near' | 'clear' | 'unknown';

/** An alert in force. */
export interface Alert {
  readonly since: Date;
  /** evaluations in a row it has been clear */
  readonly calm: number;
}

export interface Step {
  readonly alert: Alert | null;
  readonly change: 'started' | 'ended' | null;
}

/** One evaluation of one condition. */
export function step(alert: Alert | null, reading: Reading, at: Date): Step {
  switch (reading) {
    case 'unknown':
      return { alert, change: null };
    case 'beyond':
      return alert ? { alert: alert.calm === 0 ? alert : { since: alert.since, calm: 0 }, change: null } : { alert: { since: at, calm: 0 }, change: 'started' };
    case 'near':
      return { alert: alert && alert.calm !== 0 ? { since: alert.since, calm: 0 } : alert, change: null };
    case 'clear':
      if (!alert) return { alert: null, change: null };
      return alert.calm + 1 >= CALM_TO_END ? { alert: null, change: 'ended' } : { alert: { since: alert.since, calm: alert.calm + 1 }, change: null };
  }
}

function divergenceReading(o: PairObservation, thresholdPct: number): Reading {
  if (o.divergencePct === null) return 'unknown';
  const d = Math.abs(o.divergencePct);
  return d > thresholdPct ? 'beyond' : d <= thresholdPct * DIVERGENCE_CLEAR_RATIO ? 'clear' : 'near';
}

function staleReading(o: PairObservation, staleSeconds: number): Reading {
  if (o.ageSeconds === null) return 'unknown';
  return o.ageSeconds > staleSeconds ? 'beyond' : o.ageSeconds <= staleSeconds * STALE_CLEAR_RATIO ? 'clear' : 'near';
}

const sourceReading = (o: PairObservation, exchange: string): Reading => (o.sourcesFailing.includes(exchange) ? 'beyond' : 'clear');

/** An endpoint's alert settings. */
export interface EndpointRule {
  readonly id: number;
  /** the alert kinds it subscribes to (and its tier allows) */
  readonly kinds: readonly AlertKind[];
  /** null: every pair */
  readonly pairs: readonly string[] | null;
  readonly divergencePct: number;
  readonly staleSeconds: number;
}

/** Alerts shared by every subscriber (a source failing) are kept under this endpoint id. */
export const SHARED = 0;

export const alertKey = (endpointId: number, kind: AlertKind, subject: string): string => `${endpointId}|${kind}|${subject}`;

export interface Evaluation {
  readonly events: NewEvent[];
  /** every alert in force after this evaluation, by alertKey */
  readonly alerts: Map<string, Alert>;
}

const seconds = (from: Date, to: Date) => Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000));

/**
 * Evaluates every endpoint's pair alerts and the shared source alerts. `before`: the alerts in
 * force (by alertKey); alerts of endpoints not in `endpoints` are dropped without an event.
 */
export function evaluate(observations: readonly PairObservation[], endpoints: readonly EndpointRule[], before: ReadonlyMap<string, Alert>): Evaluation {
  const events: NewEvent[] = [];
  const alerts = new Map<string, Alert>();
  const apply = (key: string, reading: Reading, at: Date, event: (change: 'started' | 'ended', since: Date) => NewEvent) => {
    const s = step(before.get(key) ?? null, reading, at);
    if (s.alert) alerts.set(key, s.alert);
    if (s.change) events.push(event(s.change, s.change === 'started' ? at : before.get(key)!.since));
  };
  for (const o of observations) {
    const at = o.at;
    for (const e of endpoints) {
      if (e.pairs && !e.pairs.includes(o.pair)) continue;
      // an endpoint's own event about the pair: its state, the readings, since when, how long
      const pairEvent =
        (type: 'pair.divergence' | 'pair.stale', readings: Record<string, unknown>) =>
        (state: 'started' | 'ended', since: Date): NewEvent => ({
          type,
          pair: o.pair,
          endpointId: e.id,
          at,
          data: { state, ...readings, since: eventTime(since), ...(state === 'ended' ? { duration_seconds: seconds(since, at) } : {}) },
        });
      if (e.kinds.includes('pair.divergence')) {
        const readings = { divergence_pct: o.divergencePct, threshold_pct: e.divergencePct, rate: o.rate, synthetic_price: o.synthetic };
        apply(alertKey(e.id, 'pair.divergence', o.pair), divergenceReading(o, e.divergencePct), at, pairEvent('pair.divergence', readings));
      }
      if (e.kinds.includes('pair.stale')) {
        const readings = { age_seconds: o.ageSeconds, threshold_seconds: e.staleSeconds };
        apply(alertKey(e.id, 'pair.stale', o.pair), staleReading(o, e.staleSeconds), at, pairEvent('pair.stale', readings));
      }
    }
    // shared: every source failing now or with an alert in force for this pair
    const prefix = alertKey(SHARED, 'source.failing', `${o.pair}/`);
    const exchanges = new Set(o.sourcesFailing);
    for (const key of before.keys()) if (key.startsWith(prefix)) exchanges.add(key.slice(prefix.length));
    for (const exchange of exchanges) {
      apply(alertKey(SHARED, 'source.failing', `${o.pair}/${exchange}`), sourceReading(o, exchange), at, (state, since) => ({
        type: 'source.failing',
        pair: o.pair,
        at,
        data: { state, exchange, since: eventTime(since), ...(state === 'ended' ? { duration_seconds: seconds(since, at) } : {}) },
      }));
    }
  }
  // a pair not observed this time keeps its alerts as they are
  const observed = new Set(observations.map((o) => o.pair));
  const evaluated = new Set(endpoints.map((e) => e.id));
  for (const [key, alert] of before) {
    const [endpoint, , subject] = key.split('|');
    const pair = subject!.split('/')[0]!;
    if (!observed.has(pair) && !alerts.has(key) && (Number(endpoint) === SHARED || evaluated.has(Number(endpoint)))) alerts.set(key, alert);
  }
  return { events, alerts };
}
