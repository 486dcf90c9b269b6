// The public endpoints behind the web pages, no key needed, limited per address
// (RateLimiter.consumePublic) and answered from short-lived caches:
// - GET /v1/board: every pair's live rate as the free tier sees it, nothing more (the home page).
// - GET /v1/board/stream: the same as Server-Sent Events after every snapshot refresh.
// - GET /v1/status/public: overall status, per-pair freshness and sources (no prices), the
//   collector's recent cycles and its uptime over 24 hours and 7 days (the status page).
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import type { Sql } from '../../lib/db/connect.js';
import { timestamp } from '../../lib/format.js';
import { presentLive } from '../live/present.js';
import type { Operation } from '../operation.js';
import { recentCycles, uptime } from '../queries/status.js';
import { pairStatuses } from '../status.js';
import { BOARD_RESPONSE, PUBLIC_STATUS_RESPONSE, type BoardResponse, type PublicStatusResponse } from '../schemas.js';
import { lastEventId, missed } from '../sse.js';
import { NO_QUERY, parseQuery } from '../validate.js';
import { restatementsSince } from '../queries/fixings.js';
import { latestHead } from '../../lib/transparency/log.js';
import { presentRestatement } from './restatements.js';
import { thresholdsFor } from '../../lib/methodology/parameters.js';

/** The board is rebuilt at most this often between snapshot refreshes (freshness ages move on). */
const BOARD_CACHE_MS = 5_000;
const STATUS_CACHE_MS = 15_000;
/** Open board streams per address, and in one process. */
const BOARD_STREAMS_PER_ADDRESS = 3;
const RECENT_CYCLES = 20;
const RECENT_RESTATEMENTS = 20;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/board', summary: "Every pair's live rate with the free tier's fields (public, cached; 60 requests a minute per address)", tier: null, access: 'public',
    query: NO_QUERY, response: BOARD_RESPONSE, errors: ['rate_limit_exceeded'] },
  {
    method: 'get',
    path: '/v1/board/stream',
    summary: 'The board as Server-Sent Events: an event `board` (the body of GET /v1/board) after every refresh; Last-Event-ID resumes; 3 open per address',
    tier: null,
    access: 'public',
    query: NO_QUERY,
    response: BOARD_RESPONSE,
    contentType: 'text/event-stream',
    errors: ['rate_limit_exceeded'],
  },
  {
    method: 'get',
    path: '/v1/status/public',
    summary: "Service status for the status page: per-pair freshness and sources (no prices), the collector's recent cycles, uptime over 24 h and 7 days (public, cached)",
    tier: null,
    access: 'public',
    query: NO_QUERY,
    response: PUBLIC_STATUS_RESPONSE,
    errors: ['rate_limit_exceeded'],
  },
];

/** A value computed at most every `ms` (and again when `version` changes), shared by every caller. */
function cached<T>(ms: number, build: () => Promise<T> | T, version: () => number = () => 0): () => Promise<T> {
  let value: { at: number; version: number; promise: Promise<T> } | null = null;
  return () => {
    const now = Date.now();
    if (!value || now - value.at >= ms || value.version !== version()) {
      const promise = Promise.resolve().then(build);
      value = { at: now, version: version(), promise };
      promise.catch(() => (value = null)); // a failure is not cached
    }
    return value.promise;
  };
}

export function boardBody(deps: AppDeps): BoardResponse {
  const now = new Date();
  const data: BoardResponse['data'] = {};
  for (const pair of deps.pairs.keys()) {
    const entry = deps.snapshot.get(pair);
    // the free tier's object, by construction: nothing a free key could not read from /v1/rates/live
    data[pair] = entry ? presentLive(entry, { tier: 'free', now, signer: deps.signer }) : null;
  }
  return {
    data,
    meta: { timestamp: timestamp(now), snapshot: deps.snapshot.version, pair_count: deps.pairs.size, thresholds: { default: thresholdsFor('ZAR'), NGN: thresholdsFor('NGN') } },
  };
}

/** sql: one server for every statement (a read replica, or the primary). */
async function statusBody(deps: AppDeps, sql: Sql): Promise<PublicStatusResponse> {
  const status = await pairStatuses(deps, sql);
  const cycles = await recentCycles(sql, RECENT_CYCLES);
  const up = await uptime(sql);
  const head = await latestHead(sql);
  const restated = await restatementsSince(sql, new Date(status.now - 7 * 86_400_000), null, RECENT_RESTATEMENTS);
  const share = (n: number, slots: number) => (slots > 0 ? Math.round((n / slots) * 100_000) / 100_000 : null);
  return {
    overall_status: status.overall,
    timestamp: timestamp(status.now),
    pairs: Object.fromEntries(status.pairs),
    cycles: cycles.map((c) => {
      const failed = [...new Set(c.errors.map((e) => e.source))];
      return {
        started_at: timestamp(c.started_at),
        finished_at: timestamp(c.finished_at),
        duration_ms: Math.max(0, c.finished_at.getTime() - c.started_at.getTime()),
        ok: c.worked,
        sources_ok: Object.keys(c.rows_by_source).filter((s) => !failed.includes(s)),
        sources_failed: failed,
        trades: Object.values(c.rows_by_source).reduce((a, n) => a + Number(n), 0),
      };
    }),
    uptime: { h24: share(up?.up_24h ?? 0, up?.slots_24h ?? 0), d7: share(up?.up_7d ?? 0, up?.slots_7d ?? 0) },
    restatements: restated.map(presentRestatement),
    transparency: head ? { tree_size: head.treeSize, root_hash: head.rootHash, timestamp: head.timestamp } : null,
  };
}

export function mount(router: AppRouter, deps: AppDeps): void {
  const board = cached(BOARD_CACHE_MS, () => JSON.stringify(boardBody(deps)), () => deps.snapshot.version);
  const status = cached(STATUS_CACHE_MS, async () => JSON.stringify(await deps.read.run((sql) => statusBody(deps, sql))));

  router.get('/v1/board', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    ctx.type = 'application/json';
    ctx.set('Cache-Control', `public, max-age=${BOARD_CACHE_MS / 1000}`);
    ctx.body = await board();
  });

  router.get('/v1/board/stream', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const stream = deps.streams.start(ctx, [{ owner: `ip:${ctx.ip}`, max: BOARD_STREAMS_PER_ADDRESS, message: `At most ${BOARD_STREAMS_PER_ADDRESS} open board streams per address; close one first.` }]);
    stream.onRefresh = (version) => void board().then((body) => stream.send(version, 'board', body));
    if (missed(lastEventId(ctx), deps.snapshot.version)) stream.send(deps.snapshot.version, 'board', await board());
  });

  router.get('/v1/status/public', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    ctx.type = 'application/json';
    ctx.set('Cache-Control', `public, max-age=${STATUS_CACHE_MS / 1000}`);
    ctx.body = await status();
  });
}
