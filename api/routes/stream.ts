// GET /v1/rates/stream: the live rates of some pairs as Server-Sent Events, pushed whenever the
// live snapshot is rebuilt (after each collection cycle). Each event is what GET /v1/rates/live
// would answer at that moment, with the key's tier gating (api/live/present.ts). Event ids grow
// with every rebuild; a client reconnecting with Last-Event-ID older than the current snapshot
// (it missed a refresh) gets the current state at once. Opening a stream is one request for the
// rate limits; a key may hold its tier's streamsPerKey of them open, and a customer's keys together
// its streamsPerAccount, in each API process (lib/tiers.ts; docs/decisions.md, "Web").
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { presentLive } from '../live/present.js';
import type { Operation } from '../operation.js';
import { STREAM_EVENT, type StreamEvent } from '../schemas.js';
import { livePairs } from './live.js';
import { presentRestatement } from './restatements.js';
import { lastEventId, missed, type StreamOwner } from '../sse.js';
import { TIER_RULES, TIERS, tierLabel } from '../../lib/tiers.js';
import { timestamp } from '../../lib/format.js';
import { BOOL, parseQuery } from '../validate.js';

const streamCaps = (which: 'streamsPerKey' | 'streamsPerAccount') => TIERS.map((t) => `${tierLabel(t)} ${TIER_RULES[t][which]}`).join(', ');

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
      `send Last-Event-ID to resume. Open streams per key: ${streamCaps('streamsPerKey')}; per account, all its keys together: ${streamCaps('streamsPerAccount')}.`,
    tier: 'free',
    query,
    response: STREAM_EVENT,
    contentType: 'text/event-stream',
    errors: ['tier_restricted'],
  },
];

/**
 * The data of a rates event, made once per snapshot version, second (ages are in whole seconds)
 * and presentation (tier, options, pairs) for every stream that shows the same: a thousand streams
 * of a few kinds cost a few presentations per rebuild, not a thousand.
 */
class SharedEvents {
  private at = '';
  private readonly made = new Map<string, string>();

  data(version: number, now: Date, presentation: string, make: () => string): string {
    const at = `${version}|${Math.floor(now.getTime() / 1000)}`;
    if (at !== this.at) {
      this.made.clear();
      this.at = at;
    }
    let text = this.made.get(presentation);
    if (text === undefined) this.made.set(presentation, (text = make()));
    return text;
  }
}

export function mount(router: AppRouter, deps: AppDeps): void {
  const shared = new SharedEvents();
  router.get('/v1/rates/stream', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const customer = ctx.state.customer!;
    const pairs = livePairs(ctx, deps, q);

    const { streamsPerKey, streamsPerAccount } = TIER_RULES[customer.tier];
    const tier = tierLabel(customer.tier);
    const plural = (n: number) => `${n} open stream${n === 1 ? '' : 's'}`;
    // the account first: a key's 20 siblings can't each open the key's cap
    const owners: StreamOwner[] = [{ owner: `account:${customer.id}`, max: streamsPerAccount, message: `At most ${plural(streamsPerAccount)} per account (all its keys together) on the ${tier} tier; close one first.` }];
    if (customer.keyId !== undefined) owners.push({ owner: `key:${customer.keyId}`, max: streamsPerKey, message: `At most ${plural(streamsPerKey)} per key on the ${tier} tier; close one first.` });
    const stream = deps.streams.start(ctx, owners);

    // what this stream's events show, the same for every stream that asks the same (shared.data)
    const presentation = `${customer.tier}|${q.include_synthetic}|${q.include_sources}|${q.include_audit}|${pairs.join(',')}`;
    const event = (): string => {
      const now = new Date();
      const data = shared.data(deps.snapshot.version, now, presentation, () => {
        const body: StreamEvent['data'] = {};
        for (const pair of pairs) {
          const entry = deps.snapshot.get(pair);
          if (!entry) continue;
          body[pair] = presentLive(entry, {
            tier: customer.tier,
            includeSynthetic: q.include_synthetic,
            includeSources: q.include_sources,
            includeAudit: q.include_audit,
            now,
            signer: deps.signer,
            market: deps.snapshot.market ?? deps.config.market,
          });
        }
        return JSON.stringify(body);
      });
      // {data, meta}, as JSON.stringify would write it (StreamEvent), with the shared data's text
      return `{"data":${data},"meta":${JSON.stringify({ request_id: ctx.state.requestId, timestamp: timestamp(now) } satisfies StreamEvent['meta'])}}`;
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
