// The account behind an API key, for the dashboard (web/dashboard): its tier, limits and usage,
// and its keys. Authenticated by X-API-Key and limited and counted like every endpoint. A key
// manages its own customer's keys only (another customer's key id is 404, as if it did not
// exist), and never a tier: a new key takes the customer's.
import { dailyUsage } from '../queries/account.js';
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { ApiError } from '../errors.js';
import { date, timestamp } from '../../lib/format.js';
import { AccountError, type KeyRecord, type OwnKey } from '../keys/store.js';
import type { Operation } from '../operation.js';
import {
  ACCOUNT_KEYS_RESPONSE,
  ACCOUNT_NEW_KEY_RESPONSE,
  ACCOUNT_RESPONSE,
  ACCOUNT_REVOKED_KEY_RESPONSE,
  type AccountKeysResponse,
  type AccountNewKeyResponse,
  type AccountResponse,
  type AccountRevokedKeyResponse,
} from '../schemas.js';
import { TIER_RULES } from '../../lib/tiers.js';
import { NO_QUERY, parseBody, parseParams, parseQuery } from '../validate.js';

const DAILY_DAYS = 30;
const keyParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', pattern: '^[1-9][0-9]{0,14}$', description: "key id (a number, from GET /v1/account/keys)" } },
} as const;
const newKeyBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // printable ASCII, no leading or trailing space: it is shown in lists and must read the same everywhere
    label: { type: 'string', minLength: 1, maxLength: 60, pattern: '^[!-~]([ -~]*[!-~])?$', description: 'label of printable ASCII characters (no accents), e.g. production or staging' },
  },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/account', summary: "The key's account: tier, limits, this minute's and this month's usage, daily usage", tier: 'free', query: NO_QUERY, response: ACCOUNT_RESPONSE, errors: ['not_found'] },
  { method: 'get', path: '/v1/account/keys', summary: "The account's active keys (prefix, label, created, last used)", tier: 'free', query: NO_QUERY, response: ACCOUNT_KEYS_RESPONSE, errors: ['not_found'] },
  { method: 'post', path: '/v1/account/keys', summary: 'Create a key for the account, e.g. one per environment (shown once; same tier and limits)', tier: 'free', body: newKeyBody, response: ACCOUNT_NEW_KEY_RESPONSE, status: 201, errors: ['not_found', 'conflict'] },
  { method: 'post', path: '/v1/account/keys/:id/rotate', summary: 'Rotate a key: revoke it and issue its replacement in one step (the new key shown once; the old one refused at once)', tier: 'free', params: keyParams, response: ACCOUNT_NEW_KEY_RESPONSE, status: 201, errors: ['not_found'] },
  { method: 'delete', path: '/v1/account/keys/:id', summary: "Revoke a key (never the account's last one: rotate it instead)", tier: 'free', params: keyParams, response: ACCOUNT_REVOKED_KEY_RESPONSE, errors: ['not_found', 'conflict'] },
];

const ONCE = 'Store this key now: it is shown only once and cannot be retrieved again. Send it in the X-API-Key header.';

function ownKey(k: OwnKey | KeyRecord, currentKeyId: number | undefined, label?: string | null): AccountRevokedKeyResponse['key'] {
  const own = k as Partial<OwnKey> & KeyRecord;
  return {
    id: Number(k.id),
    prefix: k.prefix,
    label: own.label ?? label ?? null,
    created_at: timestamp(k.created_at),
    last_used_at: own.last_used_at ? timestamp(own.last_used_at) : null,
    current: Number(k.id) === currentKeyId,
    ...(own.revoked_at ? { revoked_at: timestamp(own.revoked_at) } : {}),
  };
}

/** The caller's customer and key; a marketplace gateway user has no keys here. */
export function caller(ctx: AppContext): { customerId: number; keyId: number } {
  const c = ctx.state.customer!;
  if (c.customerId === undefined || c.keyId === undefined) {
    throw new ApiError(404, 'not_found', 'Accounts belong to afrates API keys; a marketplace subscription is managed on the marketplace.');
  }
  return { customerId: c.customerId, keyId: c.keyId };
}

function accountError(err: unknown): never {
  if (err instanceof AccountError) throw new ApiError(err.reason === 'no_such_key' ? 404 : 409, err.reason === 'no_such_key' ? 'not_found' : 'conflict', err.message);
  throw err;
}

/**
 * This minute's and this month's usage as the rate limiter counted them for this very request
 * (the headers it set: the exact counts across processes, this request included).
 */
function countedNow(ctx: AppContext): { minute: number; month: number | null } {
  const used = (limit: string, remaining: string) => {
    const l = ctx.response.get(limit);
    const r = ctx.response.get(remaining);
    return l && r ? Number(l) - Number(r) : null;
  };
  return { minute: used('X-RateLimit-Limit', 'X-RateLimit-Remaining') ?? 0, month: used('X-Quota-Limit', 'X-Quota-Remaining') };
}

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/account', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const { customerId, keyId } = caller(ctx);
    const customer = await deps.keys.customer(customerId);
    const key = (await deps.keys.keysOf(customerId)).find((k) => k.id === keyId);
    if (!customer || !key) throw new ApiError(401, 'unauthorized', 'The API key is invalid or revoked.');
    const rules = TIER_RULES[customer.tier];
    const now = Date.now();
    const today = new Date(date(now));
    const since = new Date(today.getTime() - (DAILY_DAYS - 1) * 86_400_000);
    const rows = await dailyUsage(deps.sql, ctx.state.customer!.id, date(since));
    const byDay = new Map(rows.map((r) => [r.day, r.requests]));
    const daily = Array.from({ length: DAILY_DAYS }, (_, i) => {
      const d = date(since.getTime() + i * 86_400_000);
      return { date: d, requests: byDay.get(d) ?? 0 };
    });
    const monthStart = date(now).slice(0, 7);
    const counted = countedNow(ctx);
    const d = new Date(now);
    ctx.body = {
      account: { id: customer.id, tier: customer.tier, name: customer.name, email: customer.email, created_at: timestamp(customer.created_at) },
      key: ownKey(key, keyId),
      limits: {
        per_minute: rules.perMinute,
        per_month: rules.perMonth,
        intervals: [...rules.intervals],
        history_days: rules.historyDays,
        max_page: rules.maxPage,
        streams_per_key: rules.streamsPerKey,
        streams_per_account: rules.streamsPerAccount,
        concurrent_requests: rules.concurrent,
      },
      usage: {
        minute: { used: counted.minute, limit: rules.perMinute, resets_at: timestamp((Math.floor(now / 60_000) + 1) * 60_000) },
        month: {
          // unlimited tiers have no live monthly count: the days written so far (a few seconds behind)
          used: counted.month ?? daily.filter((r) => r.date.startsWith(monthStart)).reduce((a, r) => a + r.requests, 0),
          limit: rules.perMonth,
          resets_at: timestamp(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)),
        },
        daily,
      },
    } satisfies AccountResponse;
  });

  router.get('/v1/account/keys', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const { customerId, keyId } = caller(ctx);
    const keys = await deps.keys.keysOf(customerId);
    ctx.body = { keys: keys.map((k) => ownKey(k, keyId)) } satisfies AccountKeysResponse;
  });

  router.post('/v1/account/keys', async (ctx: AppContext) => {
    const body = parseBody(newKeyBody, (ctx.request as { body?: unknown }).body ?? {});
    const { customerId, keyId } = caller(ctx);
    const { apiKey, record } = await deps.keys.createFor(customerId, body.label ?? null).catch(accountError);
    ctx.status = 201;
    ctx.body = { api_key: apiKey, key: ownKey(record, keyId, body.label ?? null), message: ONCE } satisfies AccountNewKeyResponse;
  });

  router.post('/v1/account/keys/:id/rotate', async (ctx: AppContext) => {
    const { id } = parseParams(keyParams, ctx.params);
    const { customerId, keyId } = caller(ctx);
    const rotated = await deps.keys.rotate(Number(id), customerId);
    if (!rotated) throw new ApiError(404, 'not_found', `No active key ${id} in this account.`);
    deps.streams.closeOwner(`key:${rotated.replaced.id}`);
    const label = (await deps.keys.keysOf(customerId)).find((k) => k.id === rotated.record.id)?.label ?? null;
    ctx.status = 201;
    ctx.body = {
      api_key: rotated.apiKey,
      key: ownKey(rotated.record, keyId, label),
      replaced: ownKey(rotated.replaced, keyId, label),
      message: `${ONCE} The replaced key is refused from now on.`,
    } satisfies AccountNewKeyResponse;
  });

  router.delete('/v1/account/keys/:id', async (ctx: AppContext) => {
    const { id } = parseParams(keyParams, ctx.params);
    const { customerId, keyId } = caller(ctx);
    const keys = await deps.keys.keysOf(customerId);
    const label = keys.find((k) => k.id === Number(id))?.label ?? null;
    const revoked = await deps.keys.revokeOwn(customerId, Number(id)).catch(accountError);
    deps.streams.closeOwner(`key:${revoked.id}`);
    ctx.body = { key: ownKey(revoked, keyId, label) } satisfies AccountRevokedKeyResponse;
  });
}
