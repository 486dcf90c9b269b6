// Read replicas: an API process sends its read-only queries (explicitly, through `run`) to a
// streaming replica of the primary, and everything else to the primary. A replica serves a read
// only once it has replayed everything this process has shown a customer (the fence), so no page
// is older than the live rate beside it, and nothing read goes backwards:
// - the fence is the primary's WAL position after the live snapshot read its inputs
//   (lib/live/snapshot.ts hands it over before the new rates are served), after each read that
//   ran on the primary while a replica was up, and when a replica comes back; a replica whose
//   replay position is behind it is passed over until it has replayed that far;
// - and its replay lag is at most DATABASE_READ_MAX_LAG_SECONDS.
// Each replica is probed a second after the last round of probes ended (reachable, still a
// standby, replay position and lag), at once when the fence passes it, and for a read that finds
// the fence passed it moments ago (the read waits for that probe rather than go to the primary).
// One that fails a probe or a query for a connection reason is down: skipped, with one log line
// when it goes and one when it is back, and the query that failed is run again on the primary, so
// the customer sees no error. One silent for a probe's timeout has its connections replaced (TCP
// alone would hold what runs on them ~15 minutes). Replicas
// are chosen in turn; with none usable, the primary serves. Two replicas may differ in what was
// written after the fence (the open 5-minute candle's newest trades), never in what was published.
import { createLogger, type Logger } from '../log.js';
import { createPool, isUnreachable, placeOf, replaceConnections, type Sql } from './pool.js';
import { Coalesced } from '../coalesced.js';
import { within } from '../within.js';

export type ReplicaState = 'ok' | 'lagging' | 'down';

export interface ReplicaStatus {
  /** replica1, replica2, ... in DATABASE_READ_URL's order (no host: the health endpoint is public) */
  readonly name: string;
  readonly state: ReplicaState;
  /** How far its replay is behind the primary, in seconds (0: it has replayed all it has received); null while down. */
  readonly lagSeconds: number | null;
  /** Reads it has answered since the process started. */
  readonly reads: number;
}

/** What must have been replayed before a replica may serve a read: see the module comment. */
export interface WalFence {
  /** position: a WAL position as PostgreSQL writes it ('16/B374D848'). Only ever moves forward. */
  advance(position: string): void;
}

/** A WAL position ('16/B374D848': the high and low 32 bits in hex) as one number, for comparing. */
export function walPosition(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/**
 * The primary's WAL position now, as the end of what has been inserted: every transaction committed
 * before it has its commit record before it, also under synchronous_commit = off, where a commit
 * returns before its WAL is written (pg_current_wal_lsn, the write position, is then short of it and
 * a replica that replayed it may lack the commit).
 */
export async function primaryWalPosition(sql: Sql): Promise<string> {
  const [row] = await sql<{ lsn: string; offset: number; block: number }[]>`
    SELECT lsn::text AS lsn, (pg_walfile_name_offset(lsn)).file_offset AS offset, current_setting('wal_block_size')::int AS block
    FROM (SELECT pg_current_wal_insert_lsn() AS lsn) i`;
  return recordEnd(row!.lsn, row!.offset, row!.block);
}

/**
 * Where the last record inserted ends, from the insert position (`lsn`, `segmentOffset` bytes into
 * its segment file, pages of `blockSize`): an insert position just past a page's header (24 bytes;
 * 40 on a segment's first page) is the page's start, where a replica that replayed everything stands.
 */
export function recordEnd(lsn: string, segmentOffset: number, blockSize: number): string {
  const header = segmentOffset === 40 ? 40 : segmentOffset % blockSize === 24 ? 24 : 0;
  if (header === 0) return lsn;
  const end = walPosition(lsn) - BigInt(header);
  return `${(end >> 32n).toString(16).toUpperCase()}/${(end & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** How often each replica is probed. */
const PROBE_EVERY_MS = 1_000;
/**
 * How long after the fence passed it a replica within the lag limit is waited for (one probe per
 * read, a few milliseconds) before the primary serves instead: the fence moves on each cycle and
 * after each read the primary answered, and a replica streaming normally replays it within
 * milliseconds. Reading from the primary at once would move the fence again and again, and keep
 * the reads there.
 */
const CATCH_UP_MS = 500;
/** A probe not answered within this marks the replica down. */
const PROBE_TIMEOUT_MS = 2_000;
const NOT_REPLAYED = -1n;

interface Replica {
  readonly name: string;
  /** host:port/database, for log lines (never the password) */
  readonly where: string;
  /** the pool reads run on */
  readonly sql: Sql;
  /** one connection of its own for probes: never queued behind reads */
  readonly probe: Sql;
  /** null until the first probe has answered or failed */
  up: boolean | null;
  replayed: bigint;
  lagSeconds: number | null;
  /** A lag over the limit has been logged (and its end will be). */
  lagLogged: boolean;
  /** Since when (ms) the fence has been past its replay position; null: it is not. */
  behindSince: number | null;
  reads: number;
}

export interface ReadRouterOptions {
  readonly log: Logger;
  readonly maxLagSeconds: number;
  /** The statement timeout of the replicas' connections, as the primary's (lib/config.ts statementTimeoutMs). */
  readonly statementTimeoutMs: number;
  readonly probeEveryMs?: number;
}

/** A read cancelled by a hot standby because replay needed what it held: the primary can answer it. */
function isRecoveryConflict(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '40001';
}

interface ProbeRow {
  standby: boolean;
  replayed: string | null;
  received: string | null;
  since_replay: number | null;
}

export class ReadRouter implements WalFence {
  private readonly replicas: Replica[];
  private fence = 0n;
  private turn = 0;
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private readonly probes = new Coalesced(() => this.probeOnce(), () => !this.closed);
  private closed = false;
  /** Reads the primary has answered since the process started (none usable, or a replica failed). */
  primaryReads = 0;
  /** Probe rounds completed (every replica probed once each). */
  probeRounds = 0;

  /** A router without replicas: every read runs on the primary (the embedded database, or no DATABASE_READ_URL). */
  static primaryOnly(primary: Sql): ReadRouter {
    return new ReadRouter(primary, [], { log: createLogger('silent'), maxLagSeconds: 0, statementTimeoutMs: 0 });
  }

  constructor(
    private readonly primary: Sql,
    urls: readonly string[],
    private readonly opts: ReadRouterOptions,
  ) {
    this.replicas = urls.map((url, i) => ({
      name: `replica${i + 1}`,
      where: placeOf(url),
      sql: createPool(url, 10, opts.statementTimeoutMs, opts.log),
      probe: createPool(url, 1, PROBE_TIMEOUT_MS, opts.log),
      up: null,
      replayed: NOT_REPLAYED,
      lagSeconds: null,
      lagLogged: false,
      behindSince: null,
      reads: 0,
    }));
  }

  get hasReplicas(): boolean {
    return this.replicas.length > 0;
  }

  /**
   * Runs a read-only query (or several: they go to one server) on a usable replica, else on the
   * primary. `work` may run twice (on a replica, then on the primary): it must only read.
   */
  async run<T>(work: (sql: Sql) => PromiseLike<T>): Promise<T> {
    let replica = this.pick();
    if (!replica && this.catchingUp()) {
      await this.probeAll();
      replica = this.pick();
    }
    if (!replica) return this.onPrimary(work);
    try {
      const result = await work(replica.sql);
      replica.reads++;
      return result;
    } catch (err) {
      if (isUnreachable(err)) this.wentDown(replica, err);
      else if (!isRecoveryConflict(err)) throw err;
      return this.onPrimary(work);
    }
  }

  /** A read on the primary: what it saw may be newer than any replica has replayed, so it becomes the fence. */
  private async onPrimary<T>(work: (sql: Sql) => PromiseLike<T>): Promise<T> {
    const result = await work(this.primary);
    this.primaryReads++;
    if (this.replicas.some((r) => r.up)) {
      await primaryWalPosition(this.primary).then(
        (lsn) => this.advance(lsn),
        () => {}, // the primary gone: the next read fails anyway; this one has its answer
      );
    }
    return result;
  }

  advance(position: string): void {
    this.raiseFence(walPosition(position));
  }

  private raiseFence(at: bigint): void {
    if (at <= this.fence) return;
    // a replica that was caught up until now has most likely replayed this too: probed at once, it
    // serves again without waiting for the next tick (one already behind waits for the tick)
    const passed = this.replicas.some((r) => r.up && r.replayed >= this.fence && r.replayed < at);
    this.fence = at;
    const now = Date.now();
    for (const r of this.replicas) if (r.replayed < at) r.behindSince ??= now;
    if (passed) void this.probeAll();
  }

  /**
   * Each replica's state now. lagging: over the lag limit, or behind the fence for longer than a
   * probe interval (behind it for the moment a probe takes after each cycle is routine, and not
   * reported; reads go to the primary meanwhile all the same).
   */
  states(): ReplicaStatus[] {
    const now = Date.now();
    const probeMs = this.opts.probeEveryMs ?? PROBE_EVERY_MS;
    return this.replicas.map((r) => {
      const overLag = r.lagSeconds === null || r.lagSeconds > this.opts.maxLagSeconds;
      const behind = r.behindSince !== null && now - r.behindSince > probeMs;
      return { name: r.name, state: !r.up ? 'down' : overLag || behind ? 'lagging' : 'ok', lagSeconds: r.up ? r.lagSeconds : null, reads: r.reads };
    });
  }

  /** Starts probing; resolves once every replica has been probed once. */
  async start(): Promise<void> {
    if (!this.hasReplicas || this.started) return;
    this.started = true;
    await this.probeAll();
    this.nextRound();
  }

  /**
   * The next probe round, a probe interval after this one ended: a round slower than the interval
   * (a replica that does not answer takes PROBE_TIMEOUT_MS) folds no tick into the one under way,
   * which would keep it, and every read waiting for it, from ever finishing.
   */
  private nextRound(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.probeAll().finally(() => this.nextRound()), this.opts.probeEveryMs ?? PROBE_EVERY_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    await this.probes.current;
    await Promise.all(this.replicas.flatMap((r) => [r.sql.end({ timeout: 5 }), r.probe.end({ timeout: 1 })]));
  }

  private usable(r: Replica): boolean {
    return r.up === true && r.replayed >= this.fence && r.lagSeconds !== null && r.lagSeconds <= this.opts.maxLagSeconds;
  }

  /** A replica within the lag limit that the fence passed less than CATCH_UP_MS ago. */
  private catchingUp(): boolean {
    const now = Date.now();
    return this.replicas.some(
      (r) => r.up && r.lagSeconds !== null && r.lagSeconds <= this.opts.maxLagSeconds && r.replayed < this.fence && r.behindSince !== null && now - r.behindSince < CATCH_UP_MS,
    );
  }

  private pick(): Replica | undefined {
    const n = this.replicas.length;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.turn + i) % n]!;
      if (this.usable(r)) {
        this.turn = (this.turn + i + 1) % n;
        return r;
      }
    }
    return undefined;
  }

  /** One probe of every replica at a time: calls meanwhile are folded into one more after it. */
  private probeAll(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.probes.run();
  }

  private async probeOnce(): Promise<void> {
    // the primary's position first: a replica that has replayed it is not behind at all
    const primaryAt = await within(PROBE_TIMEOUT_MS, primaryWalPosition(this.primary)).then(
      (lsn) => walPosition(lsn),
      () => null,
    );
    await Promise.all(this.replicas.map((r) => this.probeOne(r, primaryAt)));
    this.probeRounds++;
  }

  private async probeOne(r: Replica, primaryAt: bigint | null): Promise<void> {
    let row: ProbeRow;
    try {
      [row] = (await within(
        PROBE_TIMEOUT_MS,
        r.probe<ProbeRow[]>`
          SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed,
                 pg_last_wal_receive_lsn()::text AS received,
                 extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS since_replay`,
      )) as unknown as [ProbeRow];
    } catch (err) {
      // silent (every packet dropped): its connections would wait ~15 minutes for TCP to give up
      if ((err as { code?: unknown }).code === 'ETIMEDOUT') {
        replaceConnections(r.sql);
        replaceConnections(r.probe);
      }
      this.wentDown(r, err);
      return;
    }
    if (!row.standby || row.replayed === null) {
      // promoted, or a server that was never a standby: its data is not the primary's
      this.wentDown(r, new Error('it is not a standby of the primary (promoted, or not replicating)'));
      return;
    }
    const replayed = walPosition(row.replayed);
    const received = row.received === null ? null : walPosition(row.received);
    // replay lag: none when it has replayed all the primary had or all it received; otherwise the
    // age of the newest transaction it replayed (unknown before it has replayed one)
    const caughtUp = (primaryAt !== null && replayed >= primaryAt) || (received !== null && replayed >= received);
    const lag = caughtUp ? 0 : row.since_replay === null ? null : Math.max(0, row.since_replay);
    if (r.up !== true) {
      this.opts.log.info({ replica: r.name, where: r.where }, 'read replica answers: reads go to it while it keeps up');
      // meanwhile reads ran on the primary: it serves none older than the primary is now
      if (primaryAt !== null) this.raiseFence(primaryAt);
    }
    r.up = true;
    r.replayed = replayed;
    if (replayed >= this.fence) r.behindSince = null;
    r.lagSeconds = lag;
    const over = lag === null || lag > this.opts.maxLagSeconds;
    if (over && !r.lagLogged) {
      r.lagLogged = true;
      this.opts.log.warn({ replica: r.name, where: r.where, lag_seconds: lag, max_lag_seconds: this.opts.maxLagSeconds }, 'read replica lagging: its reads go to the primary until it catches up');
    } else if (!over && r.lagLogged) {
      r.lagLogged = false;
      this.opts.log.info({ replica: r.name, where: r.where, lag_seconds: lag }, 'read replica caught up');
    }
  }

  private wentDown(r: Replica, err: unknown): void {
    if (r.up !== false) {
      const e = err as { code?: string; message?: string };
      this.opts.log.warn({ replica: r.name, where: r.where, code: e.code, reason: e.message }, 'read replica down: its reads go to the primary until it answers again');
    }
    r.up = false;
    r.lagSeconds = null;
    r.lagLogged = false;
  }
}

/** The read router of an API process: DATABASE_READ_URL's replicas, probed before it is handed out. */
export async function openReadRouter(primary: Sql, config: { databaseReadUrls: readonly string[]; readMaxLagSeconds: number; statementTimeoutMs: number }, log: Logger): Promise<ReadRouter> {
  if (config.databaseReadUrls.length === 0) return ReadRouter.primaryOnly(primary);
  const router = new ReadRouter(primary, config.databaseReadUrls, { log, maxLagSeconds: config.readMaxLagSeconds, statementTimeoutMs: config.statementTimeoutMs });
  await router.start();
  return router;
}
