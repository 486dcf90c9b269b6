// After each cycle: the alert detectors (detect.ts) over the cycle's observations, for every
// enabled endpoint subscribed to an alert, with the alerts in force read from and written back to
// webhook_alerts, and the resulting events written to the outbox. Writing rows is all it does:
// delivery is the worker's (worker.ts), so no endpoint can slow a cycle down.
import { batchesUnder } from '../../lib/db/batches.js';
import type { Sql, Tx } from '../../lib/db/connect.js';
import type { Logger } from '../../lib/log.js';
import type { Tier } from '../../lib/tiers.js';
import { emitEvents, TIERS_BY_EVENT, WEBHOOK_PLANS } from '../../lib/webhooks/events.js';
import type { PairObservation } from '../../lib/webhooks/observation.js';
import { ALERT_KINDS, alertKey, evaluate, SHARED, type Alert, type AlertKind, type EndpointRule } from './detect.js';

interface EndpointRow {
  id: string;
  tier: Tier;
  events: string[];
  pairs: string[] | null;
  divergence_pct: string;
  stale_seconds: number;
}

interface AlertRow {
  endpoint_id: string;
  kind: AlertKind;
  subject: string;
  since: Date;
  calm: number;
}

/** The enabled endpoints subscribed to an alert kind their customer's tier allows. */
async function alertRules(sql: Sql): Promise<EndpointRule[]> {
  const rows = await sql<EndpointRow[]>`
    SELECT e.id, c.tier, e.events, e.pairs, e.divergence_pct, e.stale_seconds
    FROM webhook_endpoints e JOIN customers c ON c.id = e.customer_id
    WHERE e.enabled AND e.events ?| ARRAY['pair.divergence', 'pair.stale']`;
  return rows.flatMap((r) => {
    const allowed = WEBHOOK_PLANS[r.tier]?.events ?? [];
    const kinds = ALERT_KINDS.filter((k) => k !== 'source.failing' && r.events.includes(k) && allowed.includes(k));
    return kinds.length ? [{ id: Number(r.id), kinds, pairs: r.pairs, divergencePct: Number(r.divergence_pct), staleSeconds: r.stale_seconds }] : [];
  });
}

/** Whether an enabled endpoint of a tier that may have it is subscribed to a source failing. */
async function sourceSubscribed(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ subscribed: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM webhook_endpoints e JOIN customers c ON c.id = e.customer_id
      WHERE e.enabled AND e.events ? 'source.failing' AND c.tier = ANY(${TIERS_BY_EVENT['source.failing'] as string[]})) AS subscribed`;
  return row!.subscribed;
}

/**
 * Runs the detectors over one cycle's observations and writes their events and the alerts in
 * force, in one transaction. Returns how many events it wrote.
 */
export async function detectAlerts(sql: Sql, observations: readonly PairObservation[], rules?: readonly EndpointRule[], fence?: (tx: Tx) => Promise<void>): Promise<number> {
  if (observations.length === 0) return 0;
  rules ??= await alertRules(sql);
  const before = new Map<string, Alert>(
    (await sql<AlertRow[]>`SELECT endpoint_id, kind, subject, since, calm FROM webhook_alerts`).map((r) => [alertKey(Number(r.endpoint_id), r.kind, r.subject), { since: r.since, calm: r.calm }]),
  );
  const { events, alerts } = evaluate(observations, rules, before);
  const changed = [...alerts].filter(([key, a]) => {
    const b = before.get(key);
    return !b || b.calm !== a.calm || b.since.getTime() !== a.since.getTime();
  });
  const gone = [...before.keys()].filter((key) => !alerts.has(key));
  if (events.length === 0 && changed.length === 0 && gone.length === 0) return 0;
  const rows = (keys: [string, Alert | null][]) =>
    keys.map(([key, a]) => {
      const [endpoint, kind, subject] = key.split('|');
      return { endpoint_id: Number(endpoint), kind, subject, since: a?.since.toISOString() ?? null, calm: a?.calm ?? 0 };
    });
  await sql.begin(async (tx) => {
    await fence?.(tx); // a process that no longer publishes writes no alert and no event
    for (const batch of batchesUnder(rows(gone.map((k) => [k, null])), (r) => [r])) {
      await tx`
        DELETE FROM webhook_alerts a USING jsonb_to_recordset(${tx.json(batch as never)}) AS r(endpoint_id bigint, kind text, subject text)
        WHERE a.endpoint_id = r.endpoint_id AND a.kind = r.kind AND a.subject = r.subject`;
    }
    for (const batch of batchesUnder(rows(changed), (r) => [r])) {
      await tx`
        INSERT INTO webhook_alerts (endpoint_id, kind, subject, since, calm)
        SELECT endpoint_id, kind, subject, since, calm
        FROM jsonb_to_recordset(${tx.json(batch as never)}) AS r(endpoint_id bigint, kind text, subject text, since timestamptz, calm integer)
        ON CONFLICT (endpoint_id, kind, subject) DO UPDATE SET since = excluded.since, calm = excluded.calm`;
    }
    await emitEvents(tx as unknown as Sql, events);
  });
  return events.length;
}

export interface AlertsRun {
  readonly sql: Sql;
  readonly log: Logger;
  /**
   * This cycle's observations (pipeline/process.ts: pipeline/webhooks/observations.ts). `rates`: some endpoint
   * watches a pair's divergence or age, so live rates are needed; without it, venues failing are enough.
   */
  readonly observe: (needs: { readonly rates: boolean }) => Promise<readonly PairObservation[]>;
  /** Told when events were written, so they go out at once rather than at its next poll. */
  readonly wake?: () => void;
  /** The publisher's lease, checked in the transaction that writes the alerts and their events (pipeline/lease.ts). */
  readonly fence?: (tx: Tx) => Promise<void>;
}

/**
 * What the pipeline runs after each cycle (through its onCycle): the alerts of the cycle written to
 * the outbox. A failure is logged, never thrown: a cycle never fails for webhooks.
 */
export async function runAlerts(o: AlertsRun): Promise<void> {
  try {
    const rules = await alertRules(o.sql);
    if (rules.length === 0 && !(await sourceSubscribed(o.sql))) {
      // nobody listens: nothing observed, nothing written; a source failing meanwhile is news to
      // whoever subscribes next, not a recovery of a failure they never heard of
      await o.sql`DELETE FROM webhook_alerts WHERE endpoint_id = ${SHARED}`;
      return;
    }
    const events = await detectAlerts(o.sql, await o.observe({ rates: rules.length > 0 }), rules, o.fence);
    if (events > 0) {
      o.log.info({ events }, 'webhook alerts written');
      o.wake?.();
    }
  } catch (err) {
    o.log.error({ err }, 'webhook alerts not detected this cycle; the next cycle tries again');
  }
}
