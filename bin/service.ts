// Starts what this process runs (ROLE: all, api or pipeline) on one database: the parts every
// process holds (lib/process.ts), then the API's (api/process.ts) and the pipeline's
// (pipeline/process.ts), each loaded only when asked for, so an API-only process never loads ccxt
// and the venues and a pipeline-only one nothing of the API. Stopped in reverse order. `make run`
// and `make demo` come through here.
import type { Config } from '../lib/config.js';
import type { Database } from '../lib/db/connect.js';
import type { Logger } from '../lib/log.js';
import type { MetricsHandle } from '../lib/metrics-server.js';
import { openProcess } from '../lib/process.js';
import type { ApiPart } from '../api/process.js';
import type { PipelinePart } from '../pipeline/process.js';

export interface Service {
  readonly db: Database;
  readonly api: ApiPart['api'] | null;
  readonly pipeline: PipelinePart['pipeline'] | null;
  /** The metrics listener (METRICS_PORT), or null. */
  readonly metrics: MetricsHandle | null;
  /** Ends the start-up that `starting` began: health says what is so from here on. */
  ready(): void;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  /** Start the pipeline's loops (default true); false leaves that to the caller (the demo first loads history). */
  readonly collect?: boolean;
  /** A failure the process cannot run on (already logged; lib/process.ts): the caller stops and exits non-zero. */
  readonly onFatal?: (reason: Error) => void;
  /**
   * The caller publishes what the database holds before it is served (the demo's history): until
   * ready(), health answers 503 `starting` instead of a status of what is only half published.
   */
  readonly starting?: boolean;
}

export async function startService(config: Config, log: Logger, opts: ServiceOptions = {}): Promise<Service> {
  const p = await openProcess(config, log, { onFatal: opts.onFatal });
  try {
    const api = config.role !== 'pipeline' ? await (await import('../api/process.js')).startApiPart(p, { starting: opts.starting }) : null;
    const pipeline = config.role !== 'api' ? await (await import('../pipeline/process.js')).startPipelinePart(p, { snapshot: api?.snapshot, afterCycle: api?.afterCycle }) : null;
    if (!pipeline) api!.follow(); // another process runs the pipeline: notice its cycles
    const metrics = await p.serveMetrics();
    if (opts.collect !== false) pipeline?.pipeline.start();
    const ready = () => {
      if (api) api.api.deps.startup.starting = false;
    };
    return { db: p.db, api: api?.api ?? null, pipeline: pipeline?.pipeline ?? null, metrics, ready, stop: () => p.stop() };
  } catch (err) {
    await p.stop().catch(() => {});
    throw err;
  }
}

/**
 * Stops the service cleanly on SIGINT/SIGTERM. `make run` runs under tsx, which passes a Ctrl-C on
 * to this process while the terminal sends it too: a repeat within two seconds is that same
 * request. A signal after that exits at once (exit 1), for a stop that hangs.
 * Returns `fail`: the same clean stop for a failure the process cannot run on (the embedded
 * database died, the deployment's secret changed), then exit 1; the API keeps serving what it
 * holds in memory until then, and a stop that hangs is cut short after FAIL_STOP_MS.
 */
export function stopOnSignals(stop: () => Promise<void>, log: Logger): (reason: Error) => void {
  let stoppingSince: number | null = null;
  const stopThenExit = (code: number) =>
    stop().then(
      () => process.exit(code),
      (err) => {
        log.error({ err }, 'unclean stop');
        process.exit(1);
      },
    );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stoppingSince !== null) {
        if (Date.now() - stoppingSince < 2_000) return;
        log.warn({ signal }, 'second signal: exiting without a clean stop');
        process.exit(1);
      }
      stoppingSince = Date.now();
      log.info({ signal }, 'stopping');
      // Container runtimes send SIGKILL 10 s after SIGTERM: long work stops between two of its
      // transactions (a backlog of certificates, fixings), but a statement under way is not cut
      // short (the embedded database cannot cancel one), so a stop still going after
      // SIGNAL_STOP_MS exits at once. Nothing is lost: an unfinished transaction rolls back, and
      // what was left is done by the next start.
      setTimeout(() => {
        log.warn({ signal, waited_ms: SIGNAL_STOP_MS }, 'the clean stop is taking too long: exiting without it');
        process.exit(1);
      }, SIGNAL_STOP_MS).unref();
      void stopThenExit(0);
    });
  }
  return (reason) => {
    if (stoppingSince !== null) return; // already stopping; the exit follows
    stoppingSince = Date.now();
    log.info({ cause: reason.message }, 'stopping');
    setTimeout(() => process.exit(1), FAIL_STOP_MS).unref();
    void stopThenExit(1);
  };
}

/** How long a stop after a fatal failure may take before the process exits anyway. */
const FAIL_STOP_MS = 10_000;
/** How long a stop asked for by SIGTERM or SIGINT may take before the process exits anyway (under the runtimes' 10 s). */
const SIGNAL_STOP_MS = 9_000;
