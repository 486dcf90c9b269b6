// GET /v1/rates/stream: the live rates of some pairs as Server-Sent Events, pushed whenever the
// live snapshot is rebuilt (after each collection cycle). Each event is what GET /v1/rates/live
// would answer at that moment, with the key's tier gating (api/live/present.ts). Event ids grow
// with every rebuild; a client reconnecting with Last-Event-ID older than the current snapshot
// (it missed a refresh) gets the current state at once. Opening a stream is one request for the
// rate limits; a key may hold STREAMS_PER_KEY of them open (docs/decisions.md, "Web").
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { presentLive } from '../live/present.js';
import type { Operation } from '../operation.js';
import { STREAM_EVENT, type StreamEvent } from '../schemas.js';
import { livePairs } from './live.js';
import { presentRestatement } from './restatements.js';
import { lastEventId, missed } from '../sse.js';
import { tierLabel, type Tier } from '../../lib/tiers.js';
import { timestamp } from '../../lib/format.js';
import { BOOL, parseQuery } from '../validate.js';

/** Open streams per key, by tier. Every tier may stream; the caps keep idle connections bounded. */
export const STREAMS_PER_KEY: Readonly<Record<Tier, number>> = { free: 1, builder: 3, professional: 10, enterprise: 50 };

const query = {
  type: 'object',
  required: ['pairs'],
  additionalProperties: false,
  properties: {
    pairs: { type: 'string', minLength: 1, maxLength: 500, description: 'comma-separated pair identifiers' },
    include_synthetic: { ...BOOL, description: 'Builder+: add pricing.synthetic' },
    include_sources: { ...BOOL, description: 'Builder+: add pricing.exchange with per-exchange weights' },
    include_audit: { ...BOOL, description: 'Enterprise: add audit.signature' },
  },
} as const;

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/rates/stream',
    summary:
      'Live rates as Server-Sent Events: an event `rates` (the body of GET /v1/rates/live) after every refresh, an event `restatement` (an element of GET /v1/restatements) when a settled value of one of the pairs is restated, a comment heartbeat every 15 s; ' +
      'send Last-Event-ID to resume. Open streams per key: Free 1, Builder 3, Professional 10, Enterprise 50.',
    tier: 'free',
    query,
    response: STREAM_EVENT,
    contentType: 'text/event-stream',
    errors: ['tier_restricted'],
  },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/rates/stream', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const customer = ctx.state.customer!;
    const pairs = livePairs(ctx, deps, q);

    const cap = STREAMS_PER_KEY[customer.tier];
    const owner = customer.keyId !== undefined ? `key:${customer.keyId}` : customer.id;
    const stream = deps.streams.start(ctx, owner, cap, `At most ${cap} open stream${cap === 1 ? '' : 's'} per key on the ${tierLabel(customer.tier)} tier; close one first.`);

    const event = (): string => {
      const now = new Date();
      const data: StreamEvent['data'] = {};
      for (const pair of pairs) {
        const entry = deps.snapshot.get(pair);
        if (!entry) continue;
        data[pair] = presentLive(entry, {
          tier: customer.tier,
          includeSynthetic: q.include_synthetic,
          includeSources: q.include_sources,
          includeAudit: q.include_audit,
          now,
          signer: deps.signer,
          market: deps.snapshot.market ?? deps.config.market,
        });
      }
      return JSON.stringify({ data, meta: { request_id: ctx.state.requestId, timestamp: timestamp(now) } } satisfies StreamEvent);
    };
    // a key revoked while its stream is open: the stream ends at the next refresh (at once when
    // revoked through the account endpoints, which close it themselves)
    const apiKey = ctx.get('X-API-Key').trim();
    stream.onRefresh = async (version) => {
      if (apiKey && !(await deps.keys.authenticate(apiKey))) return stream.close();
      stream.send(version, 'rates', event());
    };
    stream.onRestatements = (version, rows) => {
      for (const r of rows) if (pairs.includes(r.pair)) stream.send(version, 'restatement', JSON.stringify(presentRestatement(r)));
    };
    if (missed(lastEventId(ctx), deps.snapshot.version)) stream.send(deps.snapshot.version, 'rates', event());
  });
}
