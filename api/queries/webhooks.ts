// Webhook endpoint queries for the account routes (api/routes/webhooks.ts): every one is scoped to
// the caller's customer, so another customer's endpoint is not found. Delivery itself is the
// pipeline's (pipeline/webhooks/worker.ts).
import type { Sql } from '../../lib/db/connect.js';

export interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  pairs: string[] | null;
  divergence_pct: string;
  stale_seconds: number;
  heartbeat_seconds: number;
  secret_prefix: string;
  previous_secret_until: Date | null;
  enabled: boolean;
  disabled_at: Date | null;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, url, description, events, pairs, divergence_pct, stale_seconds, heartbeat_seconds, secret_prefix, previous_secret_until, enabled, disabled_at, disabled_reason, failing_since, created_at, updated_at';

export interface EndpointSettings {
  readonly url: string;
  readonly description: string | null;
  readonly events: readonly string[];
  readonly pairs: readonly string[] | null;
  readonly divergencePct: number;
  readonly staleSeconds: number;
  readonly heartbeatSeconds: number;
}

/**
 * Registers an endpoint unless the customer already has `max`; null when it has. The customer's
 * row is locked meanwhile, so two registrations at once cannot both take the last place.
 */
export async function createEndpoint(sql: Sql, customerId: number, s: EndpointSettings, secret: { sealed: string; prefix: string }, max: number, now: Date): Promise<EndpointRow | null> {
  return sql.begin(async (tx) => {
    await tx`SELECT id FROM customers WHERE id = ${customerId} FOR UPDATE`;
    const [held] = await tx<{ count: number }[]>`SELECT count(*)::int AS count FROM webhook_endpoints WHERE customer_id = ${customerId}`;
    if (held!.count >= max) return null;
    const [row] = await tx<EndpointRow[]>`
      INSERT INTO webhook_endpoints (customer_id, url, description, events, pairs, divergence_pct, stale_seconds, heartbeat_seconds, heartbeat_due_at, secret, secret_prefix, created_at, updated_at)
      VALUES (${customerId}, ${s.url}, ${s.description}, ${tx.json(s.events as never)}, ${s.pairs ? tx.json(s.pairs as never) : null}, ${s.divergencePct}, ${s.staleSeconds}, ${s.heartbeatSeconds},
              ${new Date(now.getTime() + s.heartbeatSeconds * 1000)}, ${secret.sealed}, ${secret.prefix}, ${now}, ${now})
      RETURNING ${tx.unsafe(COLUMNS)}`;
    return row!;
  });
}

export function endpointsOf(sql: Sql, customerId: number) {
  return sql<EndpointRow[]>`SELECT ${sql.unsafe(COLUMNS)} FROM webhook_endpoints WHERE customer_id = ${customerId} ORDER BY id`;
}

export async function endpointOf(sql: Sql, customerId: number, id: number): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`SELECT ${sql.unsafe(COLUMNS)} FROM webhook_endpoints WHERE customer_id = ${customerId} AND id = ${id}`;
  return row;
}

/**
 * Replaces an endpoint's settings; `enabled` true re-enables it (its failing mark cleared), false
 * disables it with the customer's reason. A new heartbeat interval starts counting now.
 */
export async function updateEndpoint(sql: Sql, customerId: number, id: number, s: EndpointSettings, enabled: boolean | undefined, now: Date): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    UPDATE webhook_endpoints SET
      url = ${s.url}, description = ${s.description}, events = ${sql.json(s.events as never)}, pairs = ${s.pairs ? sql.json(s.pairs as never) : null},
      divergence_pct = ${s.divergencePct}, stale_seconds = ${s.staleSeconds},
      heartbeat_due_at = CASE WHEN heartbeat_seconds = ${s.heartbeatSeconds} THEN heartbeat_due_at ELSE ${new Date(now.getTime() + s.heartbeatSeconds * 1000)} END,
      heartbeat_seconds = ${s.heartbeatSeconds},
      enabled = coalesce(${enabled ?? null}::boolean, enabled),
      disabled_at = CASE WHEN ${enabled ?? null}::boolean THEN NULL WHEN ${enabled ?? null}::boolean = false AND enabled THEN ${now} ELSE disabled_at END,
      disabled_reason = CASE WHEN ${enabled ?? null}::boolean THEN NULL WHEN ${enabled ?? null}::boolean = false AND enabled THEN 'Disabled by the account.' ELSE disabled_reason END,
      failing_since = CASE WHEN ${enabled ?? null}::boolean THEN NULL ELSE failing_since END,
      updated_at = ${now}
    WHERE customer_id = ${customerId} AND id = ${id}
    RETURNING ${sql.unsafe(COLUMNS)}`;
  return row;
}

/** Deletes an endpoint with its deliveries, its own events and its alerts in force. */
export async function deleteEndpoint(sql: Sql, customerId: number, id: number): Promise<EndpointRow | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx<EndpointRow[]>`DELETE FROM webhook_endpoints WHERE customer_id = ${customerId} AND id = ${id} RETURNING ${tx.unsafe(COLUMNS)}`;
    if (row) await tx`DELETE FROM webhook_alerts WHERE endpoint_id = ${id}`;
    return row;
  });
}

/** A new secret; the previous one is still signed with until `previousUntil`. */
export async function rotateSecret(sql: Sql, customerId: number, id: number, secret: { sealed: string; prefix: string }, previousUntil: Date, now: Date): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ${previousUntil}, secret = ${secret.sealed}, secret_prefix = ${secret.prefix}, updated_at = ${now}
    WHERE customer_id = ${customerId} AND id = ${id}
    RETURNING ${sql.unsafe(COLUMNS)}`;
  return row;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  pair: string | null;
  event_created_at: Date;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  created_at: Date;
  finished_at: Date | null;
  /** the newest attempts first (json_agg: timestamps as text) */
  attempt_log: { attempt: number; at: string; duration_ms: number; status: number | null; error: string | null }[];
}

/** An endpoint's newest deliveries, each with its newest `attemptsEach` attempts. */
export function recentDeliveries(sql: Sql, endpointId: number, limit: number, attemptsEach: number) {
  return sql<DeliveryRow[]>`
    SELECT d.id, d.event_id, e.type, e.pair, e.created_at AS event_created_at, d.state, d.attempts, d.next_attempt_at, d.created_at, d.finished_at,
      coalesce((SELECT json_agg(a ORDER BY a.attempt DESC) FROM (
        SELECT attempt, at, duration_ms, status, error FROM webhook_attempts WHERE delivery_id = d.id ORDER BY attempt DESC LIMIT ${attemptsEach}) a), '[]') AS attempt_log
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
    WHERE d.endpoint_id = ${endpointId}
    ORDER BY d.id DESC
    LIMIT ${limit}`;
}
