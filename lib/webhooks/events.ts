// Webhook events: their types, which tiers may subscribe to which, and the outbox they are written
// to. Whoever notices something (the alert detectors in pipeline/webhooks/alerts.ts, the publishing
// step for restatements and fixings, the API for a test event) calls emitEvent; the delivery worker
// (pipeline/webhooks/worker.ts) fans each event out to the subscribed endpoints and delivers it.
// Emitting is one small INSERT: it never waits for a delivery.
import crypto from 'node:crypto';
import { batchesUnder } from '../db/batches.js';
import type { Sql } from '../db/connect.js';
import { TIERS, type Tier } from '../tiers.js';

/**
 * Alerts start and end (`data.state`: started | ended): a pair diverging from its synthetic price
 * beyond the endpoint's threshold, a pair without new data beyond the endpoint's limit, a source
 * failing for a pair. Notices happen once: a restatement, a fixing published, a heartbeat.
 */
export const EVENT_TYPES = ['pair.divergence', 'pair.stale', 'source.failing', 'restatement', 'fixing.published', 'heartbeat'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** Sent only on request (POST /v1/account/webhooks/{id}/test), to that endpoint; never subscribed to. */
export const TEST_EVENT = 'test';

export interface WebhookPlan {
  /** Endpoints one customer may register. */
  readonly endpoints: number;
  readonly events: readonly EventType[];
}

/**
 * Who may have webhooks and for what (docs/decisions.md, "Webhooks"): live alerts from Builder,
 * publication notices (restatements, fixings) from Professional.
 */
export const WEBHOOK_PLANS: Readonly<Record<Tier, WebhookPlan>> = {
  free: { endpoints: 0, events: [] },
  builder: { endpoints: 3, events: ['pair.divergence', 'pair.stale', 'source.failing', 'heartbeat'] },
  professional: { endpoints: 10, events: EVENT_TYPES },
  enterprise: { endpoints: 50, events: EVENT_TYPES },
};

/** For each event type, the tiers that may receive it (the worker's fan-out reads this as JSON). */
export const TIERS_BY_EVENT: Readonly<Record<string, readonly Tier[]>> = Object.fromEntries(
  [...EVENT_TYPES, TEST_EVENT].map((type) => [
    type,
    TIERS.filter((t) => type === TEST_EVENT ? WEBHOOK_PLANS[t].endpoints > 0 : (WEBHOOK_PLANS[t].events as readonly string[]).includes(type)),
  ]),
);

/** Bounds of an endpoint's own settings (the API validates them; the detectors rely on them). */
export const DIVERGENCE_PCT = { min: 0.1, max: 50, default: 2 } as const;
export const STALE_SECONDS = { min: 60, max: 86_400, default: 900 } as const;
export const HEARTBEAT_SECONDS = { min: 300, max: 86_400, default: 3_600 } as const;

/** Times in a payload: RFC 3339 in UTC with a +00:00 offset, as everywhere in the API. */
export const eventTime = (d: Date): string => d.toISOString().replace('Z', '+00:00');

/** A new event id: `evt_` and 32 hex characters, unique; the receiver de-duplicates by it. */
const newEventId = (): string => `evt_${crypto.randomUUID().replaceAll('-', '')}`;

export interface NewEvent {
  readonly type: EventType | typeof TEST_EVENT;
  /** The pair it is about, if any (an endpoint that chose pairs gets only theirs). */
  readonly pair?: string | null;
  /** Only this endpoint gets it (its own alerts, heartbeats, tests); absent: every subscriber. */
  readonly endpointId?: number | null;
  /** The event's own fields, small (a few hundred bytes): the payload's `data`. */
  readonly data: Readonly<Record<string, unknown>>;
  /** When it happened (default now). */
  readonly at?: Date;
}

/**
 * Writes an event to the outbox and returns its id. The publishing step calls it for `restatement`
 * and `fixing.published`; it returns as soon as the row is written.
 */
export async function emitEvent(sql: Sql, event: NewEvent): Promise<string> {
  const [id] = await emitEvents(sql, [event]);
  return id!;
}

/** Writes many events (the detectors' output of one cycle), in statements under the size rule. */
export async function emitEvents(sql: Sql, events: readonly NewEvent[]): Promise<string[]> {
  const all = events.map((e) => ({ id: newEventId(), type: e.type, pair: e.pair ?? null, endpoint_id: e.endpointId ?? null, created_at: (e.at ?? new Date()).toISOString(), data: e.data }));
  for (const rows of batchesUnder(all, (r) => [r])) {
    await sql`
      INSERT INTO webhook_events (id, type, pair, endpoint_id, created_at, data)
      SELECT id, type, pair, endpoint_id, created_at, data
      FROM jsonb_to_recordset(${sql.json(rows as never)}) AS r(id text, type text, pair text, endpoint_id bigint, created_at timestamptz, data jsonb)`;
  }
  return all.map((r) => r.id);
}
