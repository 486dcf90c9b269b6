// GET /v1/restatements: settled values that late trades moved beyond the methodology's threshold
// (pipeline/restate.ts), or that a consented change to the candles' SQL moved (lib/db/rebuild.ts),
// with the original value kept beside the previous and the new one. Every tier. What was published
// never changes; this is where a change is said.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { validationError } from '../errors.js';
import { dayStart, numeric, parseTimestamp, restatementId, timestamp } from '../../lib/format.js';
import { knownPair, type Operation } from '../operation.js';
import { restatementsSince, type RestatementRow } from '../queries/fixings.js';
import { RESTATEMENTS_RESPONSE, type Restatement, type RestatementsResponse } from '../schemas.js';
import { PAIR, parseQuery } from '../validate.js';

const DAY_MS = 86_400_000;

const query = {
  type: 'object',
  additionalProperties: false,
  properties: {
    pair: { ...PAIR, description: 'one pair; all pairs when absent' },
    since: { type: 'string', maxLength: 40, description: 'a date (YYYY-MM-DD) or timestamp (+00:00); default 7 days ago' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  },
} as const;

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/restatements',
    summary: 'Restatements, newest first: a candle of any interval (1d: the end-of-day snapshot) or fixing that trades arriving after settlement moved beyond the threshold (or a consented change to how candles are computed moved), with the original, previous and restated value and which venues\' late trades (or the change\'s reason)',
    tier: 'free',
    query,
    response: RESTATEMENTS_RESPONSE,
  },
];

export function presentRestatement(r: RestatementRow): Restatement {
  return {
    id: restatementId(r.id),
    pair: r.pair,
    subject: r.subject,
    time: timestamp(r.time),
    ...(r.ref ? { fixing_id: r.ref } : {}),
    original: numeric(r.original),
    previous: numeric(r.previous),
    restated: numeric(r.restated),
    change_pct: numeric(r.change_pct),
    reason: { late_trades: r.reason.late_trades, ...(r.reason.aggregate_change ? { aggregate_change: r.reason.aggregate_change } : {}) },
    restated_at: timestamp(r.restated_at),
  };
}

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/restatements', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const pair = q.pair === undefined ? null : knownPair(deps, q.pair, 'pair').pair;
    let since = new Date(Date.now() - 7 * DAY_MS);
    if (q.since !== undefined) {
      // the dates and timestamps the API takes elsewhere: years 2000-2099, real days only
      const day = /^20\d{2}-\d{2}-\d{2}$/.test(q.since) ? dayStart(q.since) : null;
      const parsed = day && !Number.isNaN(day.getTime()) && day.toISOString().startsWith(q.since) ? day : parseTimestamp(q.since);
      if (!parsed) throw validationError("'since' must be a date (YYYY-MM-DD, a year from 2000 to 2099) or a timestamp with +00:00");
      since = parsed;
    }
    const rows = await deps.read.run((sql) => restatementsSince(sql, since, pair, q.limit));
    ctx.body = { since: timestamp(since), count: rows.length, restatements: rows.map(presentRestatement) } satisfies RestatementsResponse;
  });
}
