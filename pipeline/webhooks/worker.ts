// The delivery worker: its own loop, apart from the pipeline's cycles and the API's requests. Each
// pass sends due heartbeats, fans new events out of the outbox (one delivery row per subscribed
// endpoint), and starts the due deliveries: many endpoints at once, each endpoint's deliveries one
// after the other, every attempt under a time limit; endpoints already failing share a smaller
// number of slots, so a slow or dead endpoint delays no other. A failed delivery is retried with
// exponential backoff until 24 hours after its event; an endpoint whose every delivery has failed for
// 24 hours is disabled, with the reason. Everything it knows is in the database: a restart carries
// on (a delivery under way when the process died is made again once its lease runs out: at least once).
import { setMaxListeners } from 'node:events';
import { Coalesced } from '../../lib/coalesced.js';
import { batchesUnder } from '../../lib/db/batches.js';
import type { Sql } from '../../lib/db/connect.js';
import type { Logger } from '../../lib/log.js';
import type { Lookup } from '../../lib/webhooks/addresses.js';
import { emitEvents, eventTime, TIERS_BY_EVENT } from '../../lib/webhooks/events.js';
import type { SecretBox } from '../../lib/webhooks/secrets.js';
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from '../../lib/webhooks/signature.js';
import { limitIdleInTransaction } from '../lease.js';
import { send, type Outcome } from './send.js';

const HOUR_MS = 3_600_000;
/** A delivery is retried until this long after its event. */
const RETRY_WINDOW_MS = 24 * HOUR_MS;
/** An endpoint whose deliveries have all failed this long is disabled. */
const DISABLE_AFTER_MS = 24 * HOUR_MS;
/** Events (with their deliveries and attempts) are kept this long for the dashboard. */
const KEEP_EVENTS_MS = 7 * 24 * HOUR_MS;
/** Events fanned out per statement. */
const FANOUT_BATCH = 500;
/** Deliveries of one endpoint taken at once (sent one after the other). */
const PER_ENDPOINT = 10;
const HOUSEKEEPING_EVERY_MS = 60_000;
/** Due heartbeats are looked for at least this often, and whenever the earliest one known is due. */
const HEARTBEATS_EVERY_MS = 60_000;

/** The pause before attempt `attempts + 1`: 5 s, doubling, at most an hour (about 30 attempts in 24 hours). */
export const retryDelayMs = (attempts: number): number => Math.min(5_000 * 2 ** Math.max(0, attempts - 1), HOUR_MS);

export interface WorkerOptions {
  readonly sql: Sql;
  readonly log: Logger;
  readonly secrets: SecretBox;
  /** WEBHOOKS_ALLOW_PRIVATE */
  readonly allowPrivate: boolean;
  readonly lookup?: Lookup;
  readonly now?: () => number;
  /** The limit on one attempt, connection to answer (default 5 s). */
  readonly timeoutMs?: number;
  /** Endpoints not failing being delivered to at once (default 256). */
  readonly concurrency?: number;
  /** ... and endpoints already failing (default 32). */
  readonly failingConcurrency?: number;
  /** How often the loop looks for work without being woken (default 1 s). */
  readonly pollMs?: number;
  /** Hears of every attempt made: delivered or not, and how long it took (the service's metrics). */
  readonly onAttempt?: (delivered: boolean, seconds: number) => void;
  /**
   * Whether this process delivers now (default: always). With several pipeline processes only the
   * publisher does (pipeline/lease.ts): heartbeats are made and deliveries claimed by one process,
   * so none is sent once per process.
   */
  readonly active?: () => boolean;
}

type Lane = 'healthy' | 'failing';

interface Claimed {
  id: string;
  attempts: number;
  endpoint_id: string;
  failing: boolean;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  event_id: string;
  type: string;
  pair: string | null;
  created_at: Date;
  data: unknown;
}

/** An attempt made, or (outcome null) a delivery put back unattempted after its endpoint failed another. */
interface Result {
  readonly deliveryId: number;
  readonly endpointId: number;
  readonly eventAt: Date;
  readonly attempt: number;
  readonly at: Date;
  readonly outcome: Outcome | null;
  /** put back: when it is tried next */
  readonly retryAt?: Date;
}

/** The rows a result writes: its attempt (when one was made) and its delivery's new state. */
function resultRows(r: Result, recordedAt: Date) {
  const attempt = r.outcome === null ? null : { delivery_id: r.deliveryId, attempt: r.attempt, at: r.at.toISOString(), duration_ms: r.outcome.durationMs, status: r.outcome.status, error: r.outcome.error };
  if (r.outcome === null) return { attempt, delivery: { id: r.deliveryId, state: 'pending', attempts: r.attempt, next_attempt_at: r.retryAt!.toISOString(), finished_at: null } };
  if (r.outcome.error === null) return { attempt, delivery: { id: r.deliveryId, state: 'delivered', attempts: r.attempt, next_attempt_at: null, finished_at: recordedAt.toISOString() } };
  const next = r.at.getTime() + retryDelayMs(r.attempt);
  const givenUp = next - r.eventAt.getTime() > RETRY_WINDOW_MS;
  return { attempt, delivery: { id: r.deliveryId, state: givenUp ? 'failed' : 'pending', attempts: r.attempt, next_attempt_at: givenUp ? null : new Date(next).toISOString(), finished_at: givenUp ? recordedAt.toISOString() : null } };
}

/** A result and the rows it writes, built once: they size its statement and are what it writes. */
interface Recorded {
  readonly result: Result;
  readonly rows: ReturnType<typeof resultRows>;
}

/** What a result adds to its statement: its rows, and its endpoint's last error. */
const recordedParams = ({ result, rows }: Recorded): unknown[] => [rows.attempt, rows.delivery, result.outcome?.error ?? null];

/** The JSON a receiver gets: the same bytes on every attempt of an event. */
function eventBody(e: { id: string; type: string; created_at: Date; pair: string | null; data: unknown }): string {
  return JSON.stringify({ id: e.id, type: e.type, created_at: eventTime(e.created_at), pair: e.pair, data: e.data });
}

export class WebhookWorker {
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly caps: Record<Lane, number>;
  private readonly busy: Record<Lane, number> = { healthy: 0, failing: 0 };
  /** endpoint id -> its deliveries under way */
  private readonly inFlight = new Map<number, Promise<void>>();
  private results: Result[] = [];
  private recording: Promise<void> | null = null;
  private readonly passes = new Coalesced(() => this.passOnce(), () => !this.stopped);
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private housekeptAt = 0;
  private heartbeatsAt = 0;
  /** the earliest heartbeat due, as of the last look */
  private nextHeartbeat = 0;
  /** Aborts the deliveries under way when stopping (their leases run out and they are made again). */
  private stopping = WebhookWorker.abortController();

  /** One signal for every delivery under way: as many listeners as deliveries, by design. */
  private static abortController(): AbortController {
    const c = new AbortController();
    setMaxListeners(0, c.signal);
    return c;
  }

  constructor(private readonly o: WorkerOptions) {
    this.now = o.now ?? Date.now;
    this.timeoutMs = o.timeoutMs ?? 5_000;
    this.caps = { healthy: o.concurrency ?? 256, failing: o.failingConcurrency ?? 32 };
  }

  start(): void {
    this.stopped = false;
    if (this.stopping.signal.aborted) this.stopping = WebhookWorker.abortController();
    this.timer = setInterval(() => this.wake(), this.o.pollMs ?? 1_000);
    this.timer.unref();
    this.wake();
  }

  /** Looks for work now (new events were written). */
  wake(): void {
    void this.pass().catch((err: unknown) => this.o.log.error({ err }, 'webhook pass failed; the next one retries'));
  }

  /**
   * Stops looking for work, drops the deliveries under way (made again once their leases run out, by
   * this process or the next: at least once) and waits for what is done to be recorded.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.stopping.abort();
    await this.idle();
  }

  /** One pass, then every delivery it started, recorded (tests step the clock with this). */
  async runOnce(): Promise<void> {
    this.heartbeatsAt = 0; // looked for whatever the last look found
    await this.pass();
    await this.idle();
  }

  /** Resolves once nothing is under way: no pass, no delivery, nothing left to record. */
  async idle(): Promise<void> {
    while (this.passes.current || this.inFlight.size || this.recording || this.results.length) {
      await Promise.allSettled([this.passes.current, ...this.inFlight.values(), this.recording]);
      if (!this.recording && this.results.length) this.record();
    }
  }

  /** Passes while one runs are folded into one more after it. */
  private pass(): Promise<void> {
    return this.passes.run();
  }

  private async passOnce(): Promise<void> {
    if (this.o.active && !this.o.active()) return;
    const now = new Date(this.now());
    if (now.getTime() >= Math.min(this.nextHeartbeat, this.heartbeatsAt + HEARTBEATS_EVERY_MS)) await this.heartbeats(now);
    for (let i = 0; i < 10 && (await this.fanOut(now)) === FANOUT_BATCH; i++);
    if (now.getTime() - this.housekeptAt >= HOUSEKEEPING_EVERY_MS) {
      this.housekeptAt = now.getTime();
      await this.housekeeping(now);
    }
    if (this.stopped) return;
    const free = { healthy: this.caps.healthy - this.busy.healthy, failing: this.caps.failing - this.busy.failing };
    if (free.healthy <= 0 && free.failing <= 0) return;
    const byEndpoint = new Map<number, Claimed[]>();
    for (const row of await this.claim(free, now)) {
      const id = Number(row.endpoint_id);
      byEndpoint.set(id, [...(byEndpoint.get(id) ?? []), row]);
    }
    for (const [endpointId, rows] of byEndpoint) this.deliver(rows[0]!.failing ? 'failing' : 'healthy', endpointId, rows);
  }

  /** A heartbeat event for every endpoint whose heartbeat is due; notes when the next one is. */
  private async heartbeats(now: Date): Promise<void> {
    this.heartbeatsAt = now.getTime();
    const next = await this.o.sql.begin(async (tx) => {
      // its endpoints' rows stay locked to the end: a process frozen here must not hold them (and
      // with them every other process's heartbeats) for as long as it is frozen
      await limitIdleInTransaction(tx);
      const tiers = tx.json(TIERS_BY_EVENT as never);
      const due = await tx<{ id: string; heartbeat_seconds: number }[]>`
        UPDATE webhook_endpoints ep SET heartbeat_due_at = ${now}::timestamptz + make_interval(secs => ep.heartbeat_seconds)
        FROM customers c
        WHERE c.id = ep.customer_id AND ep.enabled AND ep.events ? 'heartbeat'
          AND coalesce(ep.heartbeat_due_at, '-infinity') <= ${now}
          AND (${tiers}::jsonb -> 'heartbeat') ? c.tier
        RETURNING ep.id, ep.heartbeat_seconds`;
      await emitEvents(tx as unknown as Sql, due.map((d) => ({ type: 'heartbeat', endpointId: Number(d.id), at: now, data: { interval_seconds: d.heartbeat_seconds } })));
      const [row] = await tx<{ at: Date | null }[]>`SELECT min(heartbeat_due_at) AS at FROM webhook_endpoints WHERE enabled AND events ? 'heartbeat'`;
      return row?.at?.getTime() ?? Infinity;
    });
    this.nextHeartbeat = next;
  }

  /**
   * Makes the deliveries of up to FANOUT_BATCH new events: an endpoint's own events to it, the
   * others to every enabled endpoint subscribed to their type (and pair) whose tier allows it.
   * Returns how many events it took.
   */
  private async fanOut(now: Date): Promise<number> {
    const [row] = await this.o.sql<{ events: number }[]>`
      WITH batch AS (
        UPDATE webhook_events SET fanned_out_at = ${now}
        WHERE id IN (SELECT id FROM webhook_events WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT ${FANOUT_BATCH} FOR UPDATE SKIP LOCKED)
        RETURNING id, type, pair, endpoint_id
      ), made AS (
        INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
        SELECT b.id, ep.id, ${now}, ${now}
        FROM batch b JOIN webhook_endpoints ep ON ep.id = b.endpoint_id
        WHERE ep.enabled
        UNION ALL
        SELECT b.id, ep.id, ${now}, ${now}
        FROM batch b
        JOIN webhook_endpoints ep ON ep.events ? b.type
        JOIN customers c ON c.id = ep.customer_id
        WHERE b.endpoint_id IS NULL AND ep.enabled AND (b.pair IS NULL OR ep.pairs IS NULL OR ep.pairs ? b.pair)
          AND (${this.o.sql.json(TIERS_BY_EVENT as never)}::jsonb -> b.type) ? c.tier
        ON CONFLICT (event_id, endpoint_id) DO NOTHING
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM batch)::int AS events, (SELECT count(*) FROM made)::int AS deliveries`;
    return row?.events ?? 0;
  }

  /** Gives up on deliveries whose event is past the retry window; forgets old events. */
  private async housekeeping(now: Date): Promise<void> {
    const expired = await this.o.sql`
      UPDATE webhook_deliveries d SET state = 'failed', next_attempt_at = NULL, finished_at = ${now}
      FROM webhook_events e
      WHERE d.state = 'pending' AND e.id = d.event_id AND e.created_at <= ${new Date(now.getTime() - RETRY_WINDOW_MS)}`;
    if (expired.count) this.o.log.info({ deliveries: expired.count }, 'webhook deliveries given up: their events are over 24 hours old');
    await this.o.sql`DELETE FROM webhook_events WHERE created_at < ${new Date(now.getTime() - KEEP_EVENTS_MS)}`;
  }

  /**
   * Takes due deliveries of up to `free` endpoints per lane (failing or not), up to PER_ENDPOINT of
   * each, oldest event first, none of an endpoint with deliveries under way here. Each is leased
   * (its next attempt moved past this round's time limits), so a process that dies with it under
   * way leaves it to be made again. Window functions only, no join of one derived table with another:
   * the embedded database never gathers statistics, and without them such a join is planned as a
   * nested loop (docs/decisions.md, "The embedded database gathers no statistics").
   */
  private async claim(free: Record<Lane, number>, now: Date): Promise<Claimed[]> {
    const busy = [...this.inFlight.keys()];
    const lease = new Date(now.getTime() + PER_ENDPOINT * this.timeoutMs + 60_000);
    return this.o.sql<Claimed[]>`
      WITH due AS (
        SELECT d.id, d.endpoint_id, ep.failing_since IS NOT NULL AS failing,
               row_number() OVER (PARTITION BY d.endpoint_id ORDER BY e.created_at, d.id) AS nth,
               min(d.next_attempt_at) OVER (PARTITION BY d.endpoint_id) AS first_due
        FROM webhook_deliveries d
        JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
        JOIN webhook_events e ON e.id = d.event_id
        WHERE d.state = 'pending' AND d.next_attempt_at <= ${now} AND ep.enabled
          AND e.created_at > ${new Date(now.getTime() - RETRY_WINDOW_MS)}
          AND d.endpoint_id NOT IN (SELECT value::bigint FROM jsonb_array_elements_text(${this.o.sql.json(busy)}))
      ), ranked AS (
        SELECT id, nth, failing, dense_rank() OVER (PARTITION BY failing ORDER BY first_due, endpoint_id) AS rank FROM due
      ), picked AS (
        SELECT id FROM ranked
        WHERE nth <= ${PER_ENDPOINT}::int AND rank <= CASE WHEN failing THEN ${Math.max(0, free.failing)}::int ELSE ${Math.max(0, free.healthy)}::int END
      )
      UPDATE webhook_deliveries d SET next_attempt_at = ${lease}
      FROM picked, webhook_events e, webhook_endpoints ep
      WHERE d.id = picked.id AND e.id = d.event_id AND ep.id = d.endpoint_id
      RETURNING d.id, d.attempts, d.endpoint_id, ep.failing_since IS NOT NULL AS failing, ep.url, ep.secret, ep.previous_secret, ep.previous_secret_until,
                e.id AS event_id, e.type, e.pair, e.created_at, e.data`;
  }

  /** Sends an endpoint's claimed deliveries one after the other, oldest event first; after a failure the rest wait for its retry. */
  private deliver(lane: Lane, endpointId: number, rows: Claimed[]): void {
    rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || Number(a.id) - Number(b.id));
    this.busy[lane]++;
    const work = (async () => {
      for (const [i, row] of rows.entries()) {
        const at = new Date(this.now());
        const outcome = await this.attempt(row, at);
        if (outcome.aborted) return; // stopping: the leases bring them back
        this.o.onAttempt?.(outcome.error === null, outcome.durationMs / 1000);
        this.results.push({ deliveryId: Number(row.id), endpointId, eventAt: row.created_at, attempt: row.attempts + 1, at, outcome });
        if (outcome.error !== null) {
          const retryAt = new Date(at.getTime() + retryDelayMs(row.attempts + 1));
          for (const rest of rows.slice(i + 1)) this.results.push({ deliveryId: Number(rest.id), endpointId, eventAt: rest.created_at, attempt: rest.attempts, at, outcome: null, retryAt });
          return;
        }
      }
    })();
    this.inFlight.set(endpointId, work);
    void work.finally(() => {
      this.busy[lane]--;
      this.inFlight.delete(endpointId);
      this.record();
    });
  }

  private async attempt(row: Claimed, at: Date): Promise<Outcome> {
    const body = eventBody({ id: row.event_id, type: row.type, created_at: row.created_at, pair: row.pair, data: row.data });
    try {
      const secrets = [this.o.secrets.open(row.secret)];
      if (row.previous_secret && row.previous_secret_until && row.previous_secret_until.getTime() > at.getTime()) secrets.push(this.o.secrets.open(row.previous_secret));
      const headers = {
        [SIGNATURE_HEADER]: signatureHeader(secrets, body, Math.floor(at.getTime() / 1000)),
        [EVENT_ID_HEADER]: row.event_id,
        [EVENT_TYPE_HEADER]: row.type,
      };
      return await send(row.url, body, headers, { allowPrivate: this.o.allowPrivate, lookup: this.o.lookup, timeoutMs: this.timeoutMs, signal: this.stopping.signal });
    } catch (err) {
      this.o.log.error({ err, endpoint: Number(row.endpoint_id), delivery: Number(row.id) }, 'webhook delivery failed unexpectedly');
      return { status: null, error: 'internal error while sending; it will be retried', durationMs: 0 };
    }
  }

  /** Writes the results gathered so far (while a write runs, the next ones wait for it), then looks for more work. */
  private record(): void {
    if (this.recording || this.results.length === 0) return;
    this.recording = this.recordAll().finally(() => {
      this.recording = null;
      if (!this.stopped) this.wake();
    });
  }

  private async recordAll(): Promise<void> {
    while (this.results.length) {
      const recordedAt = new Date(this.now());
      const recorded = this.results.splice(0).map((result): Recorded => ({ result, rows: resultRows(result, recordedAt) }));
      for (const batch of batchesUnder(recorded, recordedParams)) {
        try {
          await this.write(batch, recordedAt);
        } catch (err) {
          // their leases run out and they are made again: at least once
          this.o.log.error({ err, results: batch.length }, 'webhook results not recorded; those deliveries will be made again');
        }
      }
    }
  }

  /**
   * One statement: the attempts, the deliveries' new states, and each endpoint's failing mark
   * (disabled after 24 hours). `recordedAt`: the flush's time, which its rows were built with.
   */
  private async write(batch: readonly Recorded[], recordedAt: Date): Promise<void> {
    const made = batch.flatMap(({ result }) => (result.outcome !== null ? [result] : []));
    const attempts = batch.flatMap(({ rows }) => (rows.attempt ? [rows.attempt] : []));
    const deliveries = batch.map(({ rows }) => rows.delivery);
    // per endpoint, in the order they happened: a success clears its failing mark; failures since
    // the last success set it (from the first of them) unless it is set already
    const endpoints = new Map<number, { ok: boolean; reset: boolean; failingFrom: string | null; lastError: string | null }>();
    for (const r of [...made].sort((a, b) => a.at.getTime() - b.at.getTime())) {
      const e = endpoints.get(r.endpointId) ?? { ok: false, reset: false, failingFrom: null, lastError: null };
      if (r.outcome!.error === null) endpoints.set(r.endpointId, { ok: true, reset: true, failingFrom: null, lastError: null });
      else endpoints.set(r.endpointId, { ok: false, reset: e.reset, failingFrom: e.failingFrom ?? r.at.toISOString(), lastError: r.outcome!.error });
    }
    const marks = [...endpoints].map(([id, e]) => ({ id, ok: e.ok, reset: e.reset, failing_from: e.failingFrom, last_error: e.lastError }));
    const sql = this.o.sql;
    const marked = await sql<{ id: string; disable: boolean; reason: string }[]>`
      WITH attempts AS (
        INSERT INTO webhook_attempts (delivery_id, attempt, at, duration_ms, status, error)
        SELECT delivery_id, attempt, at, duration_ms, status, error
        FROM jsonb_to_recordset(${sql.json(attempts as never)}) AS r(delivery_id bigint, attempt integer, at timestamptz, duration_ms integer, status integer, error text)
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = r.delivery_id) -- its endpoint may have been deleted meanwhile
        ON CONFLICT (delivery_id, attempt) DO NOTHING
      ), deliveries AS (
        UPDATE webhook_deliveries d SET state = r.state, attempts = r.attempts, next_attempt_at = r.next_attempt_at, finished_at = r.finished_at
        FROM jsonb_to_recordset(${sql.json(deliveries as never)}) AS r(id bigint, state text, attempts integer, next_attempt_at timestamptz, finished_at timestamptz)
        WHERE d.id = r.id
      ), marked AS (
        SELECT ep.id, r.ok, r.last_error, ep.enabled,
               CASE WHEN r.ok THEN NULL WHEN r.reset THEN r.failing_from ELSE coalesce(ep.failing_since, r.failing_from) END AS failing_since
        FROM webhook_endpoints ep
        JOIN jsonb_to_recordset(${sql.json(marks as never)}) AS r(id bigint, ok boolean, reset boolean, failing_from timestamptz, last_error text) ON r.id = ep.id
      ), judged AS (
        SELECT *, (NOT ok AND enabled AND failing_since <= ${new Date(recordedAt.getTime() - DISABLE_AFTER_MS)}) AS disable FROM marked
      )
      UPDATE webhook_endpoints ep SET
        failing_since = j.failing_since,
        enabled = ep.enabled AND NOT j.disable,
        disabled_at = CASE WHEN j.disable THEN ${recordedAt} ELSE ep.disabled_at END,
        disabled_reason = CASE WHEN j.disable THEN 'Disabled: every delivery failed for 24 hours (last: ' || j.last_error || '). Fix the endpoint, then enable it again.' ELSE ep.disabled_reason END,
        updated_at = CASE WHEN j.disable THEN ${recordedAt} ELSE ep.updated_at END
      FROM judged j
      WHERE ep.id = j.id
      RETURNING ep.id, j.disable, ep.disabled_reason AS reason`;
    for (const d of marked.filter((m) => m.disable)) this.o.log.warn({ endpoint: Number(d.id), reason: d.reason }, 'webhook endpoint disabled');
  }
}
