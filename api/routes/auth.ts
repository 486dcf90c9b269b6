// POST /v1/auth/free-key: a free-tier key at once, no account. One active free key per email;
// at most 5 issued an hour per client address. The key is in this response and nowhere else.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { ApiError } from '../errors.js';
import { type Operation } from '../operation.js';
import { KEY_RESPONSE, type KeyResponse } from '../schemas.js';
import { TIER_RULES } from '../../lib/tiers.js';
import { CUSTOMER_NAME, EMAIL, parseBody } from '../validate.js';

const body = {
  type: 'object',
  required: ['email'],
  additionalProperties: false,
  properties: {
    email: EMAIL,
    customer_name: CUSTOMER_NAME,
  },
} as const;

export const operations: Operation[] = [
  { method: 'post', path: '/v1/auth/free-key', summary: 'Issue a free-tier API key (shown once)', tier: null, body, response: KEY_RESPONSE, status: 201, errors: ['conflict'] },
];

const emailHasKey = () =>
  new ApiError(409, 'conflict', 'This email already has an active free key; keys are shown only once. Sign in at /dashboard with it to rotate it or create another.');

export function mount(router: AppRouter, deps: AppDeps): void {
  router.post('/v1/auth/free-key', async (ctx: AppContext) => {
    const input = parseBody(body, (ctx.request as { body?: unknown }).body);
    await deps.limiter.consumeIssuance(ctx.ip);
    if (await deps.keys.activeFreeKey(input.email)) throw emailHasKey();
    // a concurrent request for the same email can win between the check and the issue (23505)
    const { apiKey } = await deps.keys
      .issue({ tier: 'free', customerName: input.customer_name ?? null, email: input.email })
      .catch((err: { code?: string }) => Promise.reject(err?.code === '23505' ? emailHasKey() : err));
    const rules = TIER_RULES.free;
    ctx.status = 201;
    ctx.body = {
      api_key: apiKey,
      tier: 'free',
      rate_limit: `${rules.perMinute} requests per minute`,
      monthly_quota: rules.perMonth ?? 0,
      message: 'Store this key now: it is shown only once and cannot be retrieved again. Send it in the X-API-Key header.',
    } satisfies KeyResponse;
  });
}
