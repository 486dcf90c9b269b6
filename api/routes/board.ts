// The public endpoints behind the web pages, no key needed, limited per address
// (api/public-limit.ts) and answered from short-lived caches:
// - GET /v1/board: every pair's live rate as the free tier sees it, nothing more (the home page).
// - GET /v1/board/stream: the same as Server-Sent Events after every snapshot refresh.
// - GET /v1/status/public: overall status, per-pair freshness and sources (no prices), the
//   collector's recent cycles and its uptime over 24 hours and 7 days (the status page).
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import type { Sql } from '../../lib/db/connect.js';
import { timestamp } from '../../lib/format.js';
import { presentLive } from '../live/present.js';
import type { Operation } from '../operation.js';
import { sourcesByPair } from '../queries/sources.js';
import { BOARD_RESPONSE, PUBLIC_STATUS_RESPONSE, type BoardResponse, type PublicStatusResponse } from '../schemas.js';
import { lastEventId, missed } from '../sse.js';
import { parseQuery } from '../validate.js';
import { restatementsSince } from '../queries/fixings.js';
import { latestHead } from '../../lib/transparency/log.js';
import { presentRestatement } from './restatements.js';
import { thresholdsFor } from '../../lib/methodology/parameters.js';
import { FRESH_SECONDS } from '../../lib/methodology/rules.js';

const query = { type: 'object', additionalProperties: false, properties: {} } as const;

/** The board is rebuilt at most this often between snapshot refreshes (freshness ages move on). */
const BOARD_CACHE_MS = 5_000;
const STATUS_CACHE_MS = 15_000;
/** Open board streams per address, and in one process. */
const BOARD_STREAMS_PER_ADDRESS = 3;
const RECENT_CYCLES = 20;
const RECENT_RESTATEMENTS = 20;
const SLOT = '5 minutes';

export const operations: Operation[] = [
  { method: 'get', path: '/v1/board', summary: "Every pair's live rate with the free tier's fields (public, cached; 60 requests a minute per address)", tier: null, access: 'public',
    query, response: BOARD_RESPONSE, errors: ['rate_limit_exceeded'] },
  {
    method: 'get',
    path: '/v1/board/stream',
    summary: 'The board as Server-Sent Events: an event `board` (the body of GET /v1/board) after every refresh; Last-Event-ID resumes; 3 open per address',
    tier: null,
    access: 'public',
    query,
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
    query,
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

interface CycleRow {
  started_at: Date;
  finished_at: Date;
  rows_by_source: Record<string, number>;
  errors: { source: string }[];
}

/** sql: one server for every statement (a read replica, or the primary). */
async function statusBody(deps: AppDeps, sql: Sql): Promise<PublicStatusResponse> {
  const sources = await sourcesByPair(sql, Date.now()); // as GET /v1/status
  const cycles = await sql<CycleRow[]>`
    SELECT started_at, finished_at, rows_by_source, errors FROM ingest_cycles
    WHERE kind = 'trades' ORDER BY id DESC LIMIT ${RECENT_CYCLES}`;
  // Uptime: the share of completed 5-minute slots (the contract's collection interval) in which a
  // trade cycle finished where at least one source delivered without error (the collector_state
  // rule), counted from the window's start or the first recorded cycle, whichever is later.
  const [uptime] = await sql<{ slots_24h: number; up_24h: number; slots_7d: number; up_7d: number }[]>`
    WITH first AS (
      SELECT greatest(date_bin(${SLOT}::interval, now() - INTERVAL '7 days', TIMESTAMPTZ '2000-01-01'),
                      date_bin(${SLOT}::interval, min(started_at), TIMESTAMPTZ '2000-01-01')) AS since
      FROM ingest_cycles WHERE kind = 'trades'
    ), slots AS (
      SELECT generate_series(first.since, now() - ${SLOT}::interval, ${SLOT}::interval) AS start FROM first
    ), working AS (
      SELECT DISTINCT date_bin(${SLOT}::interval, c.finished_at, TIMESTAMPTZ '2000-01-01') AS start
      FROM ingest_cycles c
      WHERE c.kind = 'trades' AND c.finished_at > now() - INTERVAL '7 days 5 minutes'
        AND EXISTS (
          SELECT 1 FROM jsonb_object_keys(c.rows_by_source) AS s(source)
          WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(c.errors) AS e WHERE e->>'source' = s.source))
    )
    SELECT count(*) FILTER (WHERE s.start >= now() - INTERVAL '24 hours')::int AS slots_24h,
           count(w.start) FILTER (WHERE s.start >= now() - INTERVAL '24 hours')::int AS up_24h,
           count(*)::int AS slots_7d,
           count(w.start)::int AS up_7d
    FROM slots s LEFT JOIN working w ON w.start = s.start`;

  const now = Date.now();
  const pairs: PublicStatusResponse['pairs'] = {};
  let fresh = 0;
  let anyFailing = false;
  for (const pair of deps.pairs.keys()) {
    const entry = deps.snapshot.get(pair);
    const age = entry ? Math.max(0, Math.floor((now - entry.time.getTime()) / 1000)) : null;
    const isFresh = age !== null && age <= FRESH_SECONDS;
    if (isFresh) fresh++;
    const { active, failing } = sources.get(pair) ?? { active: [], failing: [] };
    if (failing.length) anyFailing = true;
    pairs[pair] = { last_update: entry ? timestamp(entry.time) : null, age_seconds: age, fresh: isFresh, sources_active: active, sources_failing: failing };
  }
  const head = await latestHead(sql);
  const restated = await restatementsSince(sql, new Date(now - 7 * 86_400_000), null, RECENT_RESTATEMENTS);
  const share = (up: number, slots: number) => (slots > 0 ? Math.round((up / slots) * 100_000) / 100_000 : null);
  return {
    overall_status: fresh === 0 ? 'outage' : fresh === deps.pairs.size && !anyFailing ? 'healthy' : 'degraded',
    timestamp: timestamp(now),
    pairs,
    cycles: cycles.map((c) => {
      const failed = [...new Set(c.errors.map((e) => e.source))];
      return {
        started_at: timestamp(c.started_at),
        finished_at: timestamp(c.finished_at),
        duration_ms: Math.max(0, c.finished_at.getTime() - c.started_at.getTime()),
        ok: Object.keys(c.rows_by_source).some((s) => !failed.includes(s)),
        sources_ok: Object.keys(c.rows_by_source).filter((s) => !failed.includes(s)),
        sources_failed: failed,
        trades: Object.values(c.rows_by_source).reduce((a, n) => a + Number(n), 0),
      };
    }),
    uptime: { h24: share(uptime?.up_24h ?? 0, uptime?.slots_24h ?? 0), d7: share(uptime?.up_7d ?? 0, uptime?.slots_7d ?? 0) },
    restatements: restated.map(presentRestatement),
    transparency: head ? { tree_size: head.treeSize, root_hash: head.rootHash, timestamp: head.timestamp } : null,
  };
}

export function mount(router: AppRouter, deps: AppDeps): void {
  const board = cached(BOARD_CACHE_MS, () => JSON.stringify(boardBody(deps)), () => deps.snapshot.version);
  const status = cached(STATUS_CACHE_MS, async () => JSON.stringify(await deps.read.run((sql) => statusBody(deps, sql))));

  router.get('/v1/board', async (ctx: AppContext) => {
    parseQuery(query, ctx);
    ctx.type = 'application/json';
    ctx.set('Cache-Control', `public, max-age=${BOARD_CACHE_MS / 1000}`);
    ctx.body = await board();
  });

  router.get('/v1/board/stream', async (ctx: AppContext) => {
    parseQuery(query, ctx);
    const stream = deps.streams.start(ctx, `ip:${ctx.ip}`, BOARD_STREAMS_PER_ADDRESS, `At most ${BOARD_STREAMS_PER_ADDRESS} open board streams per address; close one first.`);
    stream.onRefresh = (version) => void board().then((body) => stream.send(version, 'board', body));
    if (missed(lastEventId(ctx), deps.snapshot.version)) stream.send(deps.snapshot.version, 'board', await board());
  });

  router.get('/v1/status/public', async (ctx: AppContext) => {
    parseQuery(query, ctx);
    ctx.type = 'application/json';
    ctx.set('Cache-Control', `public, max-age=${STATUS_CACHE_MS / 1000}`);
    ctx.body = await status();
  });
}
