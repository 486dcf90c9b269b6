// The alert detectors over sequences of cycles: an alert starts once when its condition holds and
// ends once when it has clearly gone (hysteresis), so a value hovering at the threshold sends one
// alert, not one per cycle; each endpoint's own threshold and pairs; a source's failure shared by
// every subscriber. And through the database: alerts in force survive a restart (no second start).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/connect.js';
import type { PairObservation } from '../../../lib/webhooks/observation.js';
import { createSecretBox } from '../../../lib/webhooks/secrets.js';
import { detectAlerts, runAlerts } from '../../../pipeline/webhooks/alerts.js';
import { CALM_TO_END, evaluate, type Alert, type EndpointRule } from '../../../pipeline/webhooks/detect.js';
import { openTestDatabase, testLog } from '../../support/db.js';
import { addCustomer, addEndpoint } from '../../support/webhooks.js';

const MIN = 60_000;
const t0 = Date.parse('2026-11-24T10:00:00Z');
const obs = (i: number, o: Partial<PairObservation> = {}): PairObservation => ({
  pair: 'BTCNGN',
  rate: 150_000_000,
  synthetic: 149_000_000,
  divergencePct: 0.5,
  ageSeconds: 30,
  sourcesFailing: [],
  at: new Date(t0 + i * MIN),
  ...o,
});
const rule = (o: Partial<EndpointRule> = {}): EndpointRule => ({ id: 1, kinds: ['pair.divergence', 'pair.stale'], pairs: null, divergencePct: 2, staleSeconds: 600, ...o });

/** Runs cycles of observations through evaluate, carrying the alerts in force; returns each cycle's events as `type state endpoint`. */
function run(cycles: PairObservation[][], rules: EndpointRule[]): string[][] {
  let alerts: Map<string, Alert> = new Map();
  return cycles.map((observations) => {
    const e = evaluate(observations, rules, alerts);
    alerts = e.alerts;
    return e.events.map((ev) => `${ev.type} ${String(ev.data.state)} ${ev.endpointId ?? '*'}${ev.data.exchange ? ` ${String(ev.data.exchange)}` : ''}`);
  });
}

describe('the divergence detector', () => {
  it('starts once past the threshold and ends only once clearly back, however the value hovers', () => {
    // threshold 2 %, clear at 1.6 % or less
    const divergences = [1.0, 2.1, 1.9, 2.2, 1.95, 2.01, 1.7, 1.5, 2.05, 1.5, 1.0, 0.5];
    const events = run(divergences.map((d, i) => [obs(i, { divergencePct: d })]), [rule()]);
    expect(events).toEqual([[], ['pair.divergence started 1'], [], [], [], [], [], [], [], [], ['pair.divergence ended 1'], []]);
  });

  it('counts a negative divergence by its size, and an unknown one (no synthetic price) changes nothing', () => {
    const events = run([[obs(0, { divergencePct: -3 })], [obs(1, { divergencePct: null })], [obs(2, { divergencePct: null })], [obs(3, { divergencePct: 0 })], [obs(4, { divergencePct: 0 })]], [rule()]);
    expect(events).toEqual([['pair.divergence started 1'], [], [], [], ['pair.divergence ended 1']]);
  });

  it("uses each endpoint's own threshold and pairs", () => {
    const rules = [rule({ id: 1, divergencePct: 1 }), rule({ id: 2, divergencePct: 5 }), rule({ id: 3, divergencePct: 1, pairs: ['BTCZAR'] })];
    const events = run([[obs(0, { divergencePct: 3 })], [obs(1, { divergencePct: 6 })]], rules);
    expect(events).toEqual([['pair.divergence started 1'], ['pair.divergence started 2']]);
  });

  it('says in the event what crossed, against which threshold, and for how long when it ends', () => {
    const e1 = evaluate([obs(0, { divergencePct: 2.5 })], [rule()], new Map());
    expect(e1.events[0]).toMatchObject({ type: 'pair.divergence', pair: 'BTCNGN', endpointId: 1, data: { state: 'started', divergence_pct: 2.5, threshold_pct: 2, rate: 150_000_000, synthetic_price: 149_000_000, since: '2026-11-24T10:00:00.000+00:00' } });
    let alerts = e1.alerts;
    for (let i = 1; i <= CALM_TO_END; i++) {
      const e = evaluate([obs(i * 5, { divergencePct: 0.1 })], [rule()], alerts);
      alerts = e.alerts;
      if (i === CALM_TO_END) expect(e.events[0]).toMatchObject({ data: { state: 'ended', since: '2026-11-24T10:00:00.000+00:00', duration_seconds: 600 } });
    }
  });
});

describe('the staleness detector', () => {
  it('starts past the limit and ends once the data is fresh again (under half the limit) twice', () => {
    const ages = [30, 500, 601, 900, 400, 350, 100, 700, 60, 50];
    const events = run(ages.map((a, i) => [obs(i, { ageSeconds: a })]), [rule({ kinds: ['pair.stale'] })]);
    expect(events).toEqual([[], [], ['pair.stale started 1'], [], [], [], [], [], [], ['pair.stale ended 1']]);
  });

  it('keeps an alert of a pair with no data at all (no rate within 24 hours) in force', () => {
    const events = run([[obs(0, { ageSeconds: 4_000 })], [obs(1, { ageSeconds: null, rate: null })], [obs(2, { ageSeconds: null, rate: null })]], [rule({ kinds: ['pair.stale'] })]);
    expect(events).toEqual([['pair.stale started 1'], [], []]);
  });
});

describe('the source detector', () => {
  it('sends a failing source once to every subscriber (not per endpoint), and its recovery once, after two clear cycles', () => {
    const failing = [[], ['luno'], ['luno'], [], ['luno'], [], [], [], ['quidax', 'luno']];
    const events = run(failing.map((f, i) => [obs(i, { sourcesFailing: f })]), [rule(), rule({ id: 2 })]);
    expect(events).toEqual([[], ['source.failing started * luno'], [], [], [], [], ['source.failing ended * luno'], [], ['source.failing started * quidax', 'source.failing started * luno']]);
  });
});

describe('detectAlerts on the database', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('writes the events to the outbox, and remembers the alerts in force across calls (as across restarts)', async () => {
    const box = createSecretBox({ keyHex: 'cd'.repeat(32), keyDir: '/nonexistent' });
    const builder = await addCustomer(db.sql, 'builder');
    const free = await addCustomer(db.sql, 'free');
    const ep = await addEndpoint(db.sql, box, builder, { url: 'https://hooks.example.com/a', events: ['pair.divergence', 'source.failing'], divergencePct: 1 });
    // a free customer's endpoint (its tier allows none) and a disabled one get nothing
    await addEndpoint(db.sql, box, free, { url: 'https://hooks.example.com/b', events: ['pair.divergence'], divergencePct: 1 });
    const off = await addEndpoint(db.sql, box, builder, { url: 'https://hooks.example.com/c', events: ['pair.divergence'], divergencePct: 1 });
    await db.sql`UPDATE webhook_endpoints SET enabled = false WHERE id = ${off.id}`;

    expect(await detectAlerts(db.sql, [obs(0, { divergencePct: 3, sourcesFailing: ['luno'] })])).toBe(2);
    expect(await detectAlerts(db.sql, [obs(1, { divergencePct: 3, sourcesFailing: ['luno'] })])).toBe(0); // in force: nothing new
    const rows = await db.sql<{ type: string; pair: string; endpoint_id: string | null; data: { state: string } }[]>`SELECT type, pair, endpoint_id, data FROM webhook_events ORDER BY type`;
    expect(rows.map((r) => [r.type, r.pair, r.endpoint_id === null ? null : Number(r.endpoint_id), r.data.state])).toEqual([
      ['pair.divergence', 'BTCNGN', ep.id, 'started'],
      ['source.failing', 'BTCNGN', null, 'started'],
    ]);
    expect(await detectAlerts(db.sql, [obs(2, { divergencePct: 0 })])).toBe(0);
    expect(await detectAlerts(db.sql, [obs(3, { divergencePct: 0 })])).toBe(2); // both ended
  });

  it('observes nothing while no endpoint listens, and asks for live rates only while an enabled endpoint watches a pair (a pipeline-only process builds none otherwise)', async () => {
    const other = await openTestDatabase();
    try {
      const box = createSecretBox({ keyHex: 'cd'.repeat(32), keyDir: '/nonexistent' });
      const asked: boolean[] = [];
      const cycle = () => runAlerts({ sql: other.sql, log: testLog, observe: async ({ rates }) => (asked.push(rates), [obs(0, { sourcesFailing: ['luno'], ...(rates ? {} : { rate: null, synthetic: null, divergencePct: null, ageSeconds: null }) })]) });
      // no endpoint at all: nothing observed, no event written for nobody
      await cycle();
      expect(asked).toEqual([]);
      expect((await other.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_events`)[0]!.n).toBe(0);
      const builder = await addCustomer(other.sql, 'builder');
      await addEndpoint(other.sql, box, builder, { url: 'https://hooks.example.com/f', events: ['source.failing'] });
      await cycle();
      const watcher = await addEndpoint(other.sql, box, builder, { url: 'https://hooks.example.com/s', events: ['pair.stale'] });
      await cycle();
      await other.sql`UPDATE webhook_endpoints SET enabled = false WHERE id = ${watcher.id}`;
      await cycle();
      expect(asked).toEqual([false, true, false]);
      // a venue failing is still seen without live rates
      const [failing] = await other.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_events WHERE type = 'source.failing'`;
      expect(failing!.n).toBe(1);
    } finally {
      await other.close();
    }
  });
});
