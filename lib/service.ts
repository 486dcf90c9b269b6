// Starts what this process runs (ROLE: all, api or pipeline) on one database, and stops it in
// reverse order. `make run` and `make demo` both come through here.
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/connect.js';
import type { Logger } from './log.js';
import { startAdmin } from '../api/admin/server.js';
import { buildDeps, startApi, type RunningApi } from '../api/server.js';
import { LiveSnapshot } from '../api/live/snapshot.js';
import { Pipeline } from '../pipeline/runner.js';
import { venues } from '../pipeline/venues/index.js';

export interface Service {
  readonly db: Database;
  readonly api: RunningApi | null;
  readonly pipeline: Pipeline | null;
  stop(): Promise<void>;
}

export async function startService(config: Config, log: Logger): Promise<Service> {
  const db = await openDatabase(config, log);
  // What was started, to stop in reverse order: every step runs even if one before it fails.
  const closers: Array<[string, () => Promise<void> | void]> = [['database', () => db.close()]];
  const stop = async () => {
    let failed: unknown;
    for (const [name, close] of closers.reverse()) {
      try {
        await close();
      } catch (err) {
        log.error({ err, part: name }, 'stopping failed');
        failed ??= err;
      }
    }
    closers.length = 0;
    if (failed) throw failed;
  };
  let api: RunningApi | null = null;
  let pipeline: Pipeline | null = null;
  try {
    const snapshot = new LiveSnapshot(db.sql, log);
    closers.push(['snapshot', () => snapshot.stop()]);
    await snapshot.refresh();
    if (config.role !== 'pipeline') {
      const deps = await buildDeps(config, log, db.sql, { snapshot });
      closers.push(['redis', () => deps.redis?.disconnect()]);
      api = await startApi(deps);
      closers.push(['api', () => api!.close()]);
      const admin = await startAdmin(deps.keys, config.varDir, config.adminPort, log);
      closers.push(['admin endpoint', () => admin.close()]);
    }
    if (config.role !== 'api') {
      // the simulated market is local and unlimited; real venues get their published pacing
      const p = new Pipeline({ config, log, sql: db.sql, venues, onCycle: () => snapshot.refresh(), unpaced: config.market === 'simulated' });
      closers.push(['pipeline', () => p.stop()]);
      p.start();
      pipeline = p;
    } else {
      snapshot.follow(); // another process runs the pipeline: notice its cycles
    }
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { db, api, pipeline, stop };
}

/** Stops the service cleanly on SIGINT/SIGTERM; a second signal exits at once. */
export function stopOnSignals(stop: () => Promise<void>, log: Logger): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      log.info({ signal }, 'stopping');
      stop().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'unclean stop');
          process.exit(1);
        },
      );
    });
  }
}
