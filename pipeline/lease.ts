// One publisher among any number of pipeline processes (docs/decisions.md, "One publisher at a
// time"). Every pipeline process collects its venues; publishing (settlement, certificates and
// bundles, fixings, restatements, the transparency log and its signed heads, webhook alerts and
// deliveries) is done by the holder of a lease: a row in publisher_lease with an expiry
// and a fencing token. The holder renews it every RENEW_MS; when renewals stop (the process died,
// froze or lost the database) it expires after TTL_MS and another process takes it with the next
// token. Checking the lease before publishing is not enough, since a process can freeze between
// that check and its write: every publishing transaction calls fence(), which reads the row FOR
// SHARE with this process's token. A stale process finds another token and stores nothing; a
// takeover waits for the holder's transactions under way (a holder frozen inside one is cut off by
// the server after IDLE_IN_TX).
// The same renewal writes this process's row in `processes` (host, pid, role, venues, last seen),
// which health, /status and the metrics read.
import os from 'node:os';
import type { Sql, Tx } from '../lib/db/connect.js';
import type { Logger } from '../lib/log.js';

/** How long a lease holds without renewal. */
export const TTL_MS = 15_000;
/** How often the holder renews (and every process writes its row in `processes`). */
export const RENEW_MS = 3_000;
/** A publishing transaction left idle this long (its process frozen) is ended by the server. */
const IDLE_IN_TX = '10s';

export interface ProcessIdentity {
  /** host/pid/start time: unique across restarts */
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly role: 'all' | 'pipeline';
  /** the venues this process collects */
  readonly venues: readonly string[];
  readonly version: string;
}

export function processIdentity(role: 'all' | 'pipeline', venues: readonly string[], version: string): ProcessIdentity {
  const host = os.hostname();
  return { id: `${host}/${process.pid}/${Date.now()}`, host, pid: process.pid, role, venues: [...venues], version };
}

/**
 * A transaction of the publisher's that takes row locks another process's publisher will need
 * (the lease row, a webhook endpoint's heartbeat): if this process freezes inside it, the server
 * ends it after IDLE_IN_TX instead of letting it block the next publisher for as long as it is frozen.
 */
export async function limitIdleInTransaction(tx: Tx): Promise<void> {
  await tx.unsafe(`SET LOCAL idle_in_transaction_session_timeout = '${IDLE_IN_TX}'`);
}

/** Thrown inside a publishing transaction of a process that no longer holds the lease: nothing of it is stored. */
export class FencedOut extends Error {
  constructor() {
    super('this process no longer holds the publisher lease: another process publishes');
    this.name = 'FencedOut';
  }
}

export interface PublishLease {
  /** Whether this process holds the lease now (as far as it can tell without asking). */
  holds(): boolean;
  /** holds(), or else one attempt to take it. */
  check(): Promise<boolean>;
  /**
   * In a publishing transaction: refuses (FencedOut) unless this process's token is the lease's.
   * Bound to its lease: publishing steps are handed it as a function of its own.
   */
  readonly fence: (tx: Tx) => Promise<void>;
}

export class PublisherLease implements PublishLease {
  private token: string | null = null;
  /** performance.now() up to which the lease is surely ours (its expiry measured from before the renewal was sent). */
  private validUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly o: {
      readonly sql: Sql;
      readonly log: Logger;
      readonly me: ProcessIdentity;
      readonly ttlMs?: number;
      readonly renewMs?: number;
      readonly onChange?: (holds: boolean) => void;
      /**
       * The only process there can be (Database.sole: a database of one connection): it always
       * publishes and fences nothing; its rows are written all the same, for health and /status.
       * (Its one connection may be busy with a refresh for longer than the lease lasts.)
       */
      readonly sole?: boolean;
    },
  ) {}

  get me(): ProcessIdentity {
    return this.o.me;
  }

  holds(): boolean {
    if (this.o.sole) return !this.stopped;
    return this.token !== null && performance.now() < this.validUntil;
  }

  async check(): Promise<boolean> {
    if (this.holds()) return true;
    await this.renew();
    return this.holds();
  }

  /** Renews (or tries to take) the lease every renewMs until stop(). */
  start(): void {
    const tick = () => {
      void this.renew().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.o.renewMs ?? RENEW_MS);
      });
    };
    tick();
  }

  /** One renewal, or the one under way. */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    if (this.stopped) return;
    const { sql, log, me } = this.o;
    const ttlMs = this.o.ttlMs ?? TTL_MS;
    const sent = performance.now();
    const mine = this.token;
    try {
      await sql`
        INSERT INTO processes (id, host, pid, role, venues, version, started_at, last_seen)
        VALUES (${me.id}, ${me.host}, ${me.pid}, ${me.role}, ${sql.json([...me.venues])}, ${me.version}, now(), now())
        ON CONFLICT (id) DO UPDATE SET last_seen = now()`;
      // kept while ours (same holder, same token); taken, with the next token, once expired
      const [row] = await sql<{ token: string }[]>`
        INSERT INTO publisher_lease AS l (id, token, holder, host, pid, taken_at, expires_at)
        VALUES (1, 1, ${me.id}, ${me.host}, ${me.pid}, clock_timestamp(), clock_timestamp() + make_interval(secs => ${ttlMs / 1000}))
        ON CONFLICT (id) DO UPDATE SET
          token = CASE WHEN l.holder = excluded.holder AND l.token = ${mine ?? '0'}::bigint THEN l.token ELSE l.token + 1 END,
          taken_at = CASE WHEN l.holder = excluded.holder AND l.token = ${mine ?? '0'}::bigint THEN l.taken_at ELSE excluded.taken_at END,
          holder = excluded.holder, host = excluded.host, pid = excluded.pid, expires_at = excluded.expires_at
        WHERE (l.holder = excluded.holder AND l.token = ${mine ?? '0'}::bigint) OR l.expires_at < clock_timestamp() OR ${this.o.sole ?? false}::boolean
        RETURNING token::text`;
      if (this.stopped) return;
      if (row) {
        this.validUntil = sent + ttlMs - 1_000;
        if (row.token !== mine) {
          this.token = row.token;
          log.info({ token: row.token, host: me.host, pid: me.pid, venues: me.venues }, 'publisher lease taken: this process publishes');
          this.o.onChange?.(true);
        }
      } else if (mine !== null) {
        this.lose('another process took the publisher lease: this process collects and no longer publishes');
      }
    } catch (err) {
      // the database is away: the lease runs out here by itself (validUntil), and there by expiry
      if (mine !== null && !this.holds()) this.lose('the publisher lease could not be renewed: this process no longer publishes', err);
    }
  }

  private lose(msg: string, err?: unknown): void {
    if (this.token === null) return;
    this.o.log.warn({ token: this.token, ...(err ? { err: (err as Error).message } : {}) }, msg);
    this.token = null;
    this.validUntil = 0;
    this.o.onChange?.(false);
  }

  readonly fence = async (tx: Tx): Promise<void> => {
    if (this.o.sole) return;
    const mine = this.token;
    if (mine === null) throw new FencedOut();
    // a process frozen inside this transaction would hold the row's lock, and with it any takeover
    await limitIdleInTransaction(tx);
    const [row] = await tx`
      SELECT 1 FROM publisher_lease
      WHERE id = 1 AND holder = ${this.o.me.id} AND token = ${mine}::bigint AND expires_at > clock_timestamp()
      FOR SHARE`;
    if (!row) {
      this.lose('fenced out: another process holds the publisher lease; this process no longer publishes, and nothing of this transaction is stored');
      throw new FencedOut();
    }
  };

  /** Stops renewing; the lease is given up at once (another process takes it on its next try) and this process's row removed. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.renewing?.catch(() => {});
    const mine = this.token;
    this.token = null;
    await this.o.sql`DELETE FROM processes WHERE id = ${this.o.me.id}`.catch(() => {});
    if (mine !== null) await this.o.sql`UPDATE publisher_lease SET expires_at = clock_timestamp() WHERE holder = ${this.o.me.id} AND token = ${mine}::bigint`.catch(() => {});
  }
}
