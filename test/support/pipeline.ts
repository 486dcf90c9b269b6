// The pipeline as the settlement tests run it, built as the service's publishing pipeline is
// (pipeline/process.ts): real ccxt against the simulated market, unpaced, on the test's clock,
// with short timeouts and retries, certifying settled buckets with a signer kept in `dir` (as make
// demo does: simulated, labelled so). And the world such a test file runs in: the simulated
// market, a database and that directory, on a clock the file moves.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createSigner } from '../../lib/signer.js';
import { loadConfig } from '../../lib/config.js';
import type { Database } from '../../lib/db/connect.js';
import { publishingPipeline } from '../../pipeline/process.js';
import type { Pipeline } from '../../pipeline/runner.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { venues } from '../../pipeline/venues/index.js';
import { openTestDatabase, testLog } from './db.js';

export interface SimPipelineOptions {
  readonly sim: SimMarket;
  readonly db: Database;
  readonly now: () => number;
  /** var directory: the signing keys */
  readonly dir: string;
  /** more settings (SETTLE_AFTER_SECONDS, CYCLE_SECONDS, ...) */
  readonly env?: Record<string, string>;
  readonly retryDelaysMs?: readonly number[];
}

export function certifyingSimPipeline(o: SimPipelineOptions): Pipeline {
  const config = loadConfig({ MARKET: 'simulated', SIM_URL: o.sim.url, AFRATES_VAR_DIR: o.dir, PUBLIC_URL: 'https://afrates.test', ...o.env });
  const signer = createSigner({ keyDir: path.join(o.dir, 'keys') });
  // published as the service's pipeline publishes (alone: no lease to fence with)
  return publishingPipeline(
    { config, log: testLog, sql: o.db.sql, signer },
    { venues, unpaced: true, now: o.now, initialLookbackMs: 15 * 60_000, requestTimeoutMs: 400, retryDelaysMs: o.retryDelaysMs ?? [5] },
  );
}

const MIN = 60_000;

/**
 * One test file's simulated market (its venues' history from `start - historyMs`), database and
 * signing-key directory, on a clock the file moves (`clock`). Opened before the file's tests (its
 * own beforeAll hooks run after, with all of it there) and closed after them, with every pipeline
 * made by pipeline().
 */
export class SimWorld {
  clock: number;
  sim!: SimMarket;
  db!: Database;
  readonly dir: string;
  readonly now = (): number => this.clock;
  private readonly pipelines: Pipeline[] = [];

  /** `replay`: a JSON-lines file of trades and FX rates (sim/replay.ts) played instead of a generated market. */
  constructor(o: { seed: number; start: number; historyMs: number; replay?: string }) {
    this.clock = o.start;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-world-'));
    beforeAll(async () => {
      this.sim = await startSimMarket({ seed: o.seed, now: this.now, historyStart: o.start - o.historyMs, replay: o.replay });
      this.db = await openTestDatabase();
    });
    afterAll(async () => {
      for (const p of this.pipelines) await p.stop();
      await this.sim?.stop();
      await this.db?.close();
      fs.rmSync(this.dir, { recursive: true, force: true });
    });
  }

  /** A certifying pipeline (certifyingSimPipeline) in this world, stopped after the file. */
  pipeline(o: Pick<SimPipelineOptions, 'env' | 'retryDelaysMs'> = {}): Pipeline {
    const p = certifyingSimPipeline({ sim: this.sim, db: this.db, now: this.now, dir: this.dir, ...o });
    this.pipelines.push(p);
    return p;
  }

  /** Moves the clock a minute at a time, `n` times, with one trade cycle of `pipeline` after each. */
  async minutes(pipeline: Pipeline, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      this.clock += MIN;
      await pipeline.runTradeCycle();
    }
  }
}
