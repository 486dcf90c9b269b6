// The account's webhook endpoints (Builder and up): register an https URL with the events it wants
// and its thresholds, list, change, delete, rotate its signing secret, send it a test event, and
// see its recent deliveries with their attempts. The secret is shown once, at creation and at
// rotation. The URL must resolve to public addresses only (lib/webhooks/addresses.ts; checked again
// at every delivery). Events are delivered by the pipeline's worker (pipeline/webhooks/worker.ts):
// nothing here waits for an endpoint. An endpoint of another customer is 404, as if it did not exist.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { ApiError, validationError } from '../errors.js';
import { timestamp } from '../../lib/format.js';
import { knownPair, type Operation } from '../operation.js';
import * as q from '../queries/webhooks.js';
import {
  ACCOUNT_WEBHOOK_DELIVERIES_RESPONSE,
  ACCOUNT_WEBHOOK_RESPONSE,
  ACCOUNT_WEBHOOK_SECRET_RESPONSE,
  ACCOUNT_WEBHOOK_TEST_RESPONSE,
  ACCOUNT_WEBHOOKS_RESPONSE,
  type AccountWebhookDeliveriesResponse,
  type AccountWebhookResponse,
  type AccountWebhookSecretResponse,
  type AccountWebhooksResponse,
  type AccountWebhookTestResponse,
  type WebhookEndpoint,
} from '../schemas.js';
import { tierLabel, TIERS, type Tier } from '../../lib/tiers.js';
import { NO_QUERY, PAIR, parseBody, parseParams, parseQuery } from '../validate.js';
import { checkTarget, RefusedUrl } from '../../lib/webhooks/addresses.js';
import { DIVERGENCE_PCT, emitEvent, EVENT_TYPES, HEARTBEAT_SECONDS, STALE_SECONDS, TEST_EVENT, WEBHOOK_PLANS, type EventType } from '../../lib/webhooks/events.js';
import { newSigningSecret, secretPrefix } from '../../lib/webhooks/secrets.js';
import { caller } from './account.js';

/** After a rotation, deliveries are signed with the previous secret too for this long. */
const PREVIOUS_SECRET_MS = 24 * 3_600_000;
const MAX_PAIRS = 50;

const idParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', pattern: '^[1-9][0-9]{0,14}$', description: 'endpoint id (a number, from GET /v1/account/webhooks)' } },
} as const;
const deliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'how many deliveries, the newest first (1-100)' } },
} as const;

const settings = {
  url: { type: 'string', minLength: 1, maxLength: 2048, description: 'https URL whose host resolves to public addresses, e.g. https://hooks.example.com/afrates' },
  events: { type: 'array', minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, items: { enum: EVENT_TYPES }, description: 'the events to receive' },
  description: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\p{Cc}\\s]([^\\p{Cc}]*[^\\p{Cc}\\s])?$', description: 'description without control characters or blank edges' },
  pairs: { type: ['array', 'null'], minItems: 1, maxItems: MAX_PAIRS, uniqueItems: true, items: PAIR, description: 'the pairs to receive pair events for (null or absent: every pair)' },
  divergence_pct: { type: 'number', minimum: DIVERGENCE_PCT.min, maximum: DIVERGENCE_PCT.max, description: `pair.divergence threshold in percent, ${DIVERGENCE_PCT.min} to ${DIVERGENCE_PCT.max} (default ${DIVERGENCE_PCT.default})` },
  stale_seconds: { type: 'integer', minimum: STALE_SECONDS.min, maximum: STALE_SECONDS.max, description: `pair.stale after this many seconds without new data, ${STALE_SECONDS.min} to ${STALE_SECONDS.max} (default ${STALE_SECONDS.default})` },
  heartbeat_seconds: { type: 'integer', minimum: HEARTBEAT_SECONDS.min, maximum: HEARTBEAT_SECONDS.max, description: `heartbeat interval, ${HEARTBEAT_SECONDS.min} to ${HEARTBEAT_SECONDS.max} seconds (default ${HEARTBEAT_SECONDS.default})` },
} as const;

const createBody = { type: 'object', required: ['url', 'events'], additionalProperties: false, properties: settings } as const;
const updateBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...settings, enabled: { type: 'boolean', description: 'true: enable it again (after it was disabled); false: disable it' } },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/account/webhooks', feature: 'Webhooks', summary: "The account's webhook endpoints, their state, and what its tier allows", tier: 'builder', query: NO_QUERY, response: ACCOUNT_WEBHOOKS_RESPONSE, errors: ['not_found'] },
  { method: 'post', path: '/v1/account/webhooks', feature: 'Webhooks', summary: 'Register a webhook endpoint (its signing secret shown once)', tier: 'builder', body: createBody, response: ACCOUNT_WEBHOOK_SECRET_RESPONSE, status: 201, errors: ['not_found', 'conflict', 'tier_restricted'] },
  { method: 'post', path: '/v1/account/webhooks/:id', feature: 'Webhooks', summary: "Change a webhook endpoint's URL, events, pairs or thresholds, or enable or disable it", tier: 'builder', params: idParams, body: updateBody, response: ACCOUNT_WEBHOOK_RESPONSE, errors: ['not_found', 'tier_restricted'] },
  { method: 'delete', path: '/v1/account/webhooks/:id', feature: 'Webhooks', summary: 'Delete a webhook endpoint and its deliveries', tier: 'builder', params: idParams, response: ACCOUNT_WEBHOOK_RESPONSE, errors: ['not_found'] },
  { method: 'post', path: '/v1/account/webhooks/:id/rotate-secret', feature: 'Webhooks', summary: "Rotate a webhook endpoint's signing secret (the new one shown once; the old one still signs for 24 hours)", tier: 'builder', params: idParams, response: ACCOUNT_WEBHOOK_SECRET_RESPONSE, errors: ['not_found'] },
  { method: 'post', path: '/v1/account/webhooks/:id/test', feature: 'Webhooks', summary: 'Send a test event to a webhook endpoint now, through the same delivery path as every event', tier: 'builder', params: idParams, response: ACCOUNT_WEBHOOK_TEST_RESPONSE, status: 202, errors: ['not_found', 'conflict'] },
  { method: 'get', path: '/v1/account/webhooks/:id/deliveries', feature: 'Webhooks', summary: "A webhook endpoint's recent deliveries, each with its attempts", tier: 'builder', params: idParams, query: deliveriesQuery, response: ACCOUNT_WEBHOOK_DELIVERIES_RESPONSE, errors: ['not_found'] },
];

const ONCE = 'Store this signing secret now: it is shown only once. Verify each delivery with it (README, "Webhooks": Afrates-Signature, HMAC-SHA256 of "<t>.<body>").';

const time = (d: Date | null) => (d ? timestamp(d) : null);

function present(r: q.EndpointRow, now: number): WebhookEndpoint {
  return {
    id: Number(r.id),
    url: r.url,
    description: r.description,
    events: r.events as EventType[],
    pairs: r.pairs,
    divergence_pct: Number(r.divergence_pct),
    stale_seconds: r.stale_seconds,
    heartbeat_seconds: r.heartbeat_seconds,
    secret_prefix: r.secret_prefix,
    previous_secret_expires_at: r.previous_secret_until && r.previous_secret_until.getTime() > now ? timestamp(r.previous_secret_until) : null,
    state: r.enabled ? 'enabled' : 'disabled',
    disabled_reason: r.enabled ? null : r.disabled_reason,
    disabled_at: r.enabled ? null : time(r.disabled_at),
    failing_since: time(r.failing_since),
    created_at: timestamp(r.created_at),
    updated_at: timestamp(r.updated_at),
  };
}

/** The caller's customer and its tier (Builder or higher: the operations' tier). */
function account(ctx: AppContext): { customerId: number; tier: Tier } {
  return { customerId: caller(ctx).customerId, tier: ctx.state.customer!.tier };
}

/** 403 for an event the tier may not receive, naming the lowest tier that may. */
function allowedEvents(events: readonly EventType[], tier: Tier): void {
  for (const e of events) {
    if ((WEBHOOK_PLANS[tier].events as readonly string[]).includes(e)) continue;
    const needed = TIERS.find((t) => (WEBHOOK_PLANS[t].events as readonly string[]).includes(e))!;
    throw new ApiError(403, 'tier_restricted', `The event '${e}' requires the ${tierLabel(needed)} tier or higher; this key is ${tierLabel(tier)}.`);
  }
}

async function checkUrl(deps: AppDeps, url: string): Promise<void> {
  try {
    await checkTarget(url, { allowPrivate: deps.config.webhooksAllowPrivate, lookup: deps.webhookLookup });
  } catch (err) {
    if (err instanceof RefusedUrl) throw validationError(`body parameter 'url' ${err.message}`);
    throw err;
  }
}

type Settings = { url: string; events: EventType[]; description?: string; pairs?: string[] | null; divergence_pct?: number; stale_seconds?: number; heartbeat_seconds?: number };

/** Settings as stored: pairs upper case and known, defaults filled in. */
function settingsOf(deps: AppDeps, b: Settings): q.EndpointSettings {
  return {
    url: b.url,
    description: b.description ?? null,
    events: b.events,
    pairs: b.pairs ? b.pairs.map((p, i) => knownPair(deps, p, `pairs[${i}]`).pair) : null,
    divergencePct: b.divergence_pct ?? DIVERGENCE_PCT.default,
    staleSeconds: b.stale_seconds ?? STALE_SECONDS.default,
    heartbeatSeconds: b.heartbeat_seconds ?? HEARTBEAT_SECONDS.default,
  };
}

/** The path's endpoint id (validated: digits only). */
const endpointId = (ctx: AppContext): number => Number(parseParams(idParams, ctx.params).id);
const noSuchEndpoint = (id: number) => new ApiError(404, 'not_found', `No webhook endpoint ${id} in this account.`);

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/account/webhooks', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const { customerId, tier } = account(ctx);
    const rows = await q.endpointsOf(deps.sql, customerId);
    const now = Date.now();
    const plan = WEBHOOK_PLANS[tier];
    ctx.body = { endpoints: rows.map((r) => present(r, now)), limits: { endpoints: plan.endpoints, events: [...plan.events] } } satisfies AccountWebhooksResponse;
  });

  router.post('/v1/account/webhooks', async (ctx: AppContext) => {
    const body = parseBody(createBody, (ctx.request as { body?: unknown }).body ?? {});
    const { customerId, tier } = account(ctx);
    allowedEvents(body.events, tier);
    const s = settingsOf(deps, body as Settings);
    await checkUrl(deps, s.url);
    const secret = newSigningSecret();
    const max = WEBHOOK_PLANS[tier].endpoints;
    const row = await q.createEndpoint(deps.sql, customerId, s, { sealed: deps.webhookSecrets.seal(secret), prefix: secretPrefix(secret) }, max, new Date());
    if (!row) throw new ApiError(409, 'conflict', `This account has ${max} webhook endpoints, the most the ${tierLabel(tier)} tier allows: delete one first.`);
    ctx.status = 201;
    ctx.body = { endpoint: present(row, Date.now()), secret, message: ONCE } satisfies AccountWebhookSecretResponse;
  });

  router.post('/v1/account/webhooks/:id', async (ctx: AppContext) => {
    const id = endpointId(ctx);
    const body = parseBody(updateBody, (ctx.request as { body?: unknown }).body ?? {});
    const { customerId, tier } = account(ctx);
    const current = await q.endpointOf(deps.sql, customerId, id);
    if (!current) throw noSuchEndpoint(id);
    const merged: Settings = {
      url: body.url ?? current.url,
      events: body.events ?? (current.events as EventType[]),
      description: body.description ?? current.description ?? undefined,
      pairs: body.pairs !== undefined ? body.pairs : current.pairs,
      divergence_pct: body.divergence_pct ?? Number(current.divergence_pct),
      stale_seconds: body.stale_seconds ?? current.stale_seconds,
      heartbeat_seconds: body.heartbeat_seconds ?? current.heartbeat_seconds,
    };
    if (body.events) allowedEvents(body.events, tier);
    const s = settingsOf(deps, merged);
    if (body.url !== undefined) await checkUrl(deps, s.url);
    const row = await q.updateEndpoint(deps.sql, customerId, id, s, body.enabled, new Date());
    if (!row) throw noSuchEndpoint(id);
    ctx.body = { endpoint: present(row, Date.now()) } satisfies AccountWebhookResponse;
  });

  router.delete('/v1/account/webhooks/:id', async (ctx: AppContext) => {
    const id = endpointId(ctx);
    const { customerId } = account(ctx);
    const row = await q.deleteEndpoint(deps.sql, customerId, id);
    if (!row) throw noSuchEndpoint(id);
    ctx.body = { endpoint: present(row, Date.now()) } satisfies AccountWebhookResponse;
  });

  router.post('/v1/account/webhooks/:id/rotate-secret', async (ctx: AppContext) => {
    const id = endpointId(ctx);
    const { customerId } = account(ctx);
    const secret = newSigningSecret();
    const now = new Date();
    const row = await q.rotateSecret(deps.sql, customerId, id, { sealed: deps.webhookSecrets.seal(secret), prefix: secretPrefix(secret) }, new Date(now.getTime() + PREVIOUS_SECRET_MS), now);
    if (!row) throw noSuchEndpoint(id);
    ctx.body = {
      endpoint: present(row, Date.now()),
      secret,
      message: `${ONCE} Deliveries also carry a signature with the previous secret until ${timestamp(row.previous_secret_until!)}.`,
    } satisfies AccountWebhookSecretResponse;
  });

  router.post('/v1/account/webhooks/:id/test', async (ctx: AppContext) => {
    const id = endpointId(ctx);
    const { customerId } = account(ctx);
    const endpoint = await q.endpointOf(deps.sql, customerId, id);
    if (!endpoint) throw noSuchEndpoint(id);
    if (!endpoint.enabled) throw new ApiError(409, 'conflict', `Webhook endpoint ${id} is disabled: enable it first (POST /v1/account/webhooks/${id} with {"enabled": true}).`);
    const at = new Date();
    const eventId = await emitEvent(deps.sql, { type: TEST_EVENT, endpointId: id, at, data: { message: 'A test event from afrates: this endpoint receives webhooks.' } });
    ctx.status = 202;
    ctx.body = {
      event: { id: eventId, type: TEST_EVENT, created_at: timestamp(at) },
      message: `Sent to the delivery queue: it arrives within seconds; GET /v1/account/webhooks/${id}/deliveries shows its attempts.`,
    } satisfies AccountWebhookTestResponse;
  });

  router.get('/v1/account/webhooks/:id/deliveries', async (ctx: AppContext) => {
    const id = endpointId(ctx);
    const { limit } = parseQuery(deliveriesQuery, ctx);
    const { customerId } = account(ctx);
    if (!(await q.endpointOf(deps.sql, customerId, id))) throw noSuchEndpoint(id);
    const rows = await q.recentDeliveries(deps.sql, id, limit ?? 20, 10);
    ctx.body = {
      deliveries: rows.map((d) => ({
        id: Number(d.id),
        event: { id: d.event_id, type: d.type, pair: d.pair, created_at: timestamp(d.event_created_at) },
        state: d.state,
        attempts: d.attempts,
        next_attempt_at: d.state === 'pending' ? time(d.next_attempt_at) : null,
        created_at: timestamp(d.created_at),
        finished_at: time(d.finished_at),
        attempt_log: d.attempt_log.map((a) => ({ attempt: a.attempt, at: timestamp(new Date(a.at)), duration_ms: a.duration_ms, status: a.status, error: a.error })),
      })),
    } satisfies AccountWebhookDeliveriesResponse;
  });
}
