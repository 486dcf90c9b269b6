// The API's part of a process (ROLE all or api), as the service, the tests and the benchmarks start
// it: the watch that it still serves the deployment it started as, the app's dependencies on the
// process's database, the live snapshot rebuilt on trade notices, the public listener (HOST, PORT:
// 0 is any free port), the loopback admin endpoint for key commands, and the export files of
// complete months made ahead after each cycle (a few a run, never inside one).
import { heedSecretChange } from '../lib/db/deployment.js';
import { openReadRouter, type ReadRouter } from '../lib/db/replicas.js';
import { Coalesced } from '../lib/coalesced.js';
import type { LiveSnapshot } from '../lib/live/snapshot.js';
import type { ServiceProcess } from '../lib/process.js';
import type { Lookup } from '../lib/webhooks/addresses.js';
import { startAdmin } from './admin/server.js';
import { storeDueMonthFiles } from './month-files.js';
import { buildDeps, startApi, type RunningApi } from './server.js';

/** Month files made ahead per run, after a cycle: a few, so that a backlog (a new database's history) is spread over many cycles. */
const MONTH_FILES_PER_RUN = 6;

export interface ApiPart {
  readonly api: RunningApi;
  readonly snapshot: LiveSnapshot;
  /** After a cycle this process ran (its snapshot rebuilt by the pipeline): month files made ahead, not waited for. */
  afterCycle(): void;
  /** Without the pipeline in this process: the snapshot rebuilt on each cycle another process records, then afterCycle(). */
  follow(): void;
}

export interface ApiPartOptions {
  /** Health answers 503 `starting` until the API's ready() (the demo publishes its history first). */
  readonly starting?: boolean;
  // what the tests set (the service leaves each to its default)
  /** Read replicas opened and closed by the caller (default: DATABASE_READ_URL's, opened here). */
  readonly read?: ReadRouter;
  /** The label of this deployment's Redis keys (default `afrates`): processes with another label share no budget. */
  readonly namespace?: string;
  /** The rate limiter's and key cache's clock (default: the system's). */
  readonly now?: () => number;
  /** How webhook URLs' hosts resolve at registration (default: the system's resolver). */
  readonly webhookLookup?: Lookup;
}

export async function startApiPart(p: ServiceProcess, opts: ApiPartOptions = {}): Promise<ApiPart> {
  const { config, log, db, metrics } = p;
  // the deployment it starts as is the one it serves: its secret changed under it, it stops
  const deployment = await heedSecretChange(db.sql, () => {
    log.fatal("this database's deployment secret changed under this process (a process started on a restored or upgraded copy renewed it, a restore replaced it, or an operator did): stopping, so that a start serves the new deployment");
    p.fail(new Error('the deployment secret changed under this process'));
  });
  p.stops('deployment watch', deployment.stop);
  // the API's read replicas (DATABASE_READ_URL)
  let read = opts.read;
  if (!read) {
    const opened = await openReadRouter(db.sql, config, log);
    p.stops('read replicas', () => opened.close());
    read = opened;
  }
  const deps = await buildDeps(config, log, db.sql, {
    secret: deployment.secret,
    read,
    signer: p.signer,
    webhookSecrets: p.webhookSecrets,
    observer: metrics?.requestObserver,
    starting: opts.starting,
    databaseAnswers: db.answers,
    namespace: opts.namespace,
    now: opts.now,
    webhookLookup: opts.webhookLookup,
  });
  p.stops('redis', () => deps.redis?.disconnect());
  const snapshot = deps.snapshot;
  p.stops('snapshot', () => snapshot.stop());
  await snapshot.refresh();
  await snapshot.hear(p.notices);
  metrics?.watchApi({ streams: () => deps.streams.size, redis: deps.redis });
  const api = await startApi(deps);
  p.stops('api', () => api.close());
  const admin = await startAdmin(deps.keys, config.varDir, config.adminPort, log);
  p.stops('admin endpoint', () => admin.close());
  let stopping = false;
  const monthFiles = new Coalesced(() => storeDueMonthFiles(db.sql, log, MONTH_FILES_PER_RUN), () => !stopping);
  p.stops('month files', async () => {
    stopping = true;
    await monthFiles.current?.catch(() => {});
  });
  const afterCycle = () => {
    if (!stopping) monthFiles.run().catch((err: unknown) => log.warn({ err }, 'month files not made ahead'));
  };
  return { api, snapshot, afterCycle, follow: () => snapshot.follow(undefined, afterCycle) };
}
